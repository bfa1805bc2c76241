// SPDX-License-Identifier: Apache-2.0
import ShakeDetection
import ShakeProtocol

#if canImport(Glibc)
    import Glibc
#endif

extension Evaluation {
    /// The evaluation as a table for a person.
    public func report(title: String) -> String {
        func percent(_ value: Double) -> String { fixed(value * 100, 1) + "%" }
        func number(_ value: Double, _ decimals: Int = 2) -> String { fixed(value, decimals) }
        func seconds(_ latency: Latency?) -> String {
            guard let latency else { return "n/a" }
            return "median \(number(latency.median)) s, p90 \(number(latency.p90)) s"
        }
        var lines = [title]
        lines.append(
            "  shake recall            \(percent(recall)) (\(shakesCaught)/\(shakes))"
                + ", extra events on shake clips: \(extraEventsOnShakes)")
        if !missedShakes.isEmpty {
            lines.append("    missed: \(missedShakes.joined(separator: ", "))")
        }
        lines.append("  gestures firing         \(percent(gestureShare)) (\(gesturesFired)/\(gestures))")
        let firing = gesturesFiring.filter { $0.fired > 0 }
        if !firing.isEmpty {
            lines.append("    " + firing.map { "\($0.name) \($0.fired)/\($0.total)" }.joined(separator: ", "))
        }
        lines.append(
            "  false shakes per hour   \(number(falseShakesPerHour)) (\(falseShakes) in \(number(adlHours)) h of daily living)"
                + ", began per hour \(number(beganPerHour, 1))")
        if !byDataset.isEmpty {
            lines.append(
                "    by dataset: " + byDataset.map { "\($0.name) \(number($0.perHour))/h" }.joined(separator: ", "))
        }
        if !byActivity.isEmpty {
            lines.append("    by activity, worst first (false/h, began/h):")
            let cells = byActivity.map { "\($0.name) \(number($0.perHour)) \(number($0.beganPerHour, 0))" }
            for start in stride(from: 0, to: cells.count, by: 7) {
                lines.append("      " + cells[start..<min(start + 7, cells.count)].joined(separator: " | "))
            }
            let legend = byActivity.prefix(7).compactMap { group in
                describe(group.name).map { "\(group.name) \($0)" }
            }
            if !legend.isEmpty { lines.append("      (" + legend.joined(separator: "; ") + ")") }
        }
        lines.append("  falls firing            \(percent(fallShare)) (\(fallsFiring)/\(falls))")
        if !fallsFired.isEmpty {
            lines.append("    fired: \(fallsFired.joined(separator: ", "))")
        }
        if continuousShakes > 0 {
            lines.append(
                "  continuous shaking began within \(number(Self.continuousWindow, 0)) s \(percent(continuousShare))"
                    + " (\(continuousBegan)/\(continuousShakes)), \(seconds(continuousLatency))")
            for missed in continuousMissed {
                lines.append("    not in time: \(missed.file): \(missed.outcome)")
            }
        }
        if waves > 0 {
            lines.append("  waves firing            \(wavesFiring)/\(waves), began on \(wavesBegan)/\(waves)")
        }
        lines.append("  began after shake start \(seconds(beganLatency))")
        lines.append("  ended after shake end   \(seconds(endedLatency))")
        if !rejections.isEmpty {
            lines.append("  not_a_shake, by detail  " + Self.counts(rejections))
            lines.append("    by activity, most first:")
            let activities = rejectionsByActivity.sorted {
                ($0.value.values.reduce(0, +), $1.key) > ($1.value.values.reduce(0, +), $0.key)
            }
            for (activity, counts) in activities {
                let name = describe(activity).map { "\(activity) (\($0))" } ?? activity
                lines.append("      \(name): " + Self.counts(counts))
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The near-miss view: for each shake not taken and each other motion that fired, how each of its motions was
    /// decided: which test decided, the measured value against the limit, and the margin (the room on the
    /// passing side, as a share of the limit: negative failed).
    public func nearMissReport() -> String {
        var lines = ["near misses (test: value / limit, margin):"]
        if nearMisses.isEmpty { lines.append("  none") }
        for miss in nearMisses {
            lines.append("  \(miss.file): \(miss.what)")
            if miss.decisions.isEmpty {
                lines.append("    nothing followed as a possible shake (no stroke past the threshold began one)")
            }
            for decision in miss.decisions {
                var line =
                    "    \(fixed(decision.time, 2)) s \(decision.isShake ? "shake" : "not a shake")"
                    + "\(decision.reported ? "" : " (silent)"), \(decision.reversals) counted: "
                    + Self.describe(decision.decisive)
                if let rejected = decision.lastRejected, rejected != decision.decisive {
                    line += "; last rejected: " + Self.describe(rejected)
                }
                lines.append(line)
            }
        }
        return lines.joined(separator: "\n")
    }

    /// `weak 0.52 / 0.70 (-26%)`.
    static func describe(_ margin: ShakeDetector.Margin) -> String {
        let percent = (margin.relative * 100).rounded() + 0  // no minus zero
        return "\(margin.test.rawValue) \(fixed(margin.value, 2)) / \(fixed(margin.limit, 2))"
            + " (\(percent >= 0 ? "+" : "")\(fixed(percent, 0))%)"
    }

    /// The evaluation as one JSON object.
    public func json(sensitivity: String, corpus: String) -> String {
        var writer = JSONObjectWriter()
        writer.add("corpus", corpus)
        writer.add("sensitivity", sensitivity)
        writer.add("shakes", shakes)
        writer.add("shake_recall", recall, decimals: 4)
        writer.add("missed_shakes", rawJSON: Self.array(missedShakes))
        writer.add("extra_events_on_shakes", extraEventsOnShakes)
        writer.add("gestures", gestures)
        writer.add("gestures_firing", gestureShare, decimals: 4)
        writer.add(
            "gestures_firing_by_activity",
            rawJSON: "{"
                + gesturesFiring.map { group in
                    "\"\(group.name)\":{\"fired\":\(group.fired),\"total\":\(group.total)}"
                }.joined(separator: ",") + "}")
        writer.add("adl_hours", adlHours, decimals: 4)
        writer.add("false_shakes", falseShakes)
        writer.add("false_shakes_per_hour", falseShakesPerHour, decimals: 3)
        writer.add("began_per_hour", beganPerHour, decimals: 2)
        writer.add("false_shakes_by_dataset", rawJSON: Self.rates(byDataset))
        writer.add("false_shakes_by_activity", rawJSON: Self.rates(byActivity))
        writer.add("falls", falls)
        writer.add("falls_firing", fallShare, decimals: 4)
        for (name, latency) in [("began_latency", beganLatency), ("ended_latency", endedLatency)] {
            if let latency {
                writer.add(
                    name,
                    rawJSON:
                        "{\"median\":\(JSONObjectWriter.format(latency.median, decimals: 3)),\"p90\":\(JSONObjectWriter.format(latency.p90, decimals: 3))}"
                )
            } else {
                writer.add(name, rawJSON: "null")
            }
        }
        writer.add("continuous_shakes", continuousShakes)
        writer.add("continuous_began_in_time", continuousBegan)
        writer.add("waves", waves)
        writer.add("waves_firing", wavesFiring)
        writer.add("not_a_shake_by_detail", rawJSON: Self.countsJSON(rejections))
        writer.add(
            "not_a_shake_by_activity",
            rawJSON: "{"
                + rejectionsByActivity.keys.sorted().map { activity in
                    var key = JSONObjectWriter()
                    key.add("k", activity)
                    return
                        "\(key.result.dropFirst(5).dropLast()):\(Self.countsJSON(rejectionsByActivity[activity] ?? [:]))"
                }.joined(separator: ",") + "}")
        return writer.result
    }

    /// Two evaluations side by side: `| metric | A | B |`.
    public static func comparison(
        _ first: Evaluation, _ second: Evaluation, names: (String, String), title: String
    ) -> String {
        func percent(_ value: Double) -> String { fixed(value * 100, 1) + "%" }
        func median(_ latency: Evaluation.Latency?) -> String {
            latency.map { fixed($0.median, 2) + " s" } ?? "n/a"
        }
        let rows: [(String, (Evaluation) -> String)] = [
            ("shake recall", { "\(percent($0.recall)) (\($0.shakesCaught)/\($0.shakes))" }),
            ("other gestures firing", { "\(percent($0.gestureShare)) (\($0.gesturesFired)/\($0.gestures))" }),
            ("false shakes per hour of daily living", { fixed($0.falseShakesPerHour, 2) }),
            ("began per hour of daily living", { fixed($0.beganPerHour, 1) }),
            ("falls firing", { "\(percent($0.fallShare)) (\($0.fallsFiring)/\($0.falls))" }),
            (
                "continuous shaking began within 2 s",
                { "\(percent($0.continuousShare)) (\($0.continuousBegan)/\($0.continuousShakes))" }
            ),
            ("began after the shake starts, median", { median($0.beganLatency) }),
            ("ended after the shake ends, median", { median($0.endedLatency) }),
            ("not_a_shake cancellations", { "\($0.rejections.values.reduce(0, +))" }),
        ]
        let table = [["", names.0, names.1]] + rows.map { row in [row.0, row.1(first), row.1(second)] }
        let widths = (0..<3).map { column in table.map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            "| "
                + zip(cells, widths).map {
                    $0.count >= $1 ? String($0.prefix($1)) : $0 + String(repeating: " ", count: $1 - $0.count)
                }
                .joined(separator: " | ") + " |"
        }
        return
            ([
                title, line(table[0]),
                "|"
                    + widths.map { String(repeating: "-", count: $0 + 2) }
                    .joined(separator: "|") + "|",
            ] + table.dropFirst().map(line)).joined(separator: "\n")
    }

    /// What an activity code stands for, when its corpus is one `eval` knows.
    func describe(_ activity: String) -> String? {
        activityDatasets[activity].flatMap { ActivityCodes.describe(activity, dataset: $0) }
    }

    /// `too_few_reversals 12, one_way 3`: most first.
    static func counts(_ counts: [ShakeEvent.Rejection: Int]) -> String {
        counts.sorted { ($0.value, $1.key.rawValue) > ($1.value, $0.key.rawValue) }
            .map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")
    }

    /// `{"one_way":3,"too_few_reversals":12}`, in the order of the details' declaration.
    static func countsJSON(_ counts: [ShakeEvent.Rejection: Int]) -> String {
        "{"
            + ShakeEvent.Rejection.allCases.compactMap { detail in
                counts[detail].map { "\"\(detail.rawValue)\":\($0)" }
            }.joined(separator: ",") + "}"
    }

    private static func array(_ strings: [String]) -> String {
        "["
            + strings.map { value in
                var writer = JSONObjectWriter()
                writer.add("v", value)
                return String(writer.result.dropFirst(5).dropLast())
            }.joined(separator: ",") + "]"
    }

    private static func rates(_ groups: [GroupRate]) -> String {
        "["
            + groups.map { group in
                var writer = JSONObjectWriter()
                writer.add("name", group.name)
                writer.add("false_shakes", group.count)
                writer.add("hours", group.hours, decimals: 4)
                writer.add("per_hour", group.perHour, decimals: 3)
                writer.add("began_per_hour", group.beganPerHour, decimals: 2)
                return writer.result
            }.joined(separator: ",") + "]"
    }
}

/// `value` with exactly `decimals` places, as C's `%.Nf` writes it (the C locale's point).
func fixed(_ value: Double, _ decimals: Int) -> String {
    withVaList([value]) { arguments in
        var buffer = [CChar](repeating: 0, count: 512)
        _ = vsnprintf(&buffer, buffer.count, "%.\(max(0, min(decimals, 17)))f", arguments)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
