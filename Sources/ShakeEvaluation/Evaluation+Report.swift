import Foundation
public import ShakeDetection

extension Evaluation {
    /// The evaluation as a table for a person.
    public func report(title: String) -> String {
        func percent(_ value: Double) -> String { String(format: "%.1f%%", value * 100) }
        func number(_ value: Double, _ decimals: Int = 2) -> String { String(format: "%.\(decimals)f", value) }
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
        }
        lines.append("  falls firing            \(percent(fallShare)) (\(fallsFiring)/\(falls))")
        if !fallsFired.isEmpty {
            lines.append("    fired: \(fallsFired.joined(separator: ", "))")
        }
        lines.append("  began after shake start \(seconds(beganLatency))")
        lines.append("  ended after shake end   \(seconds(endedLatency))")
        return lines.joined(separator: "\n")
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
        return writer.result
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
