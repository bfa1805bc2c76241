// SPDX-License-Identifier: Apache-2.0
import ShakeDetection
import ShakeTestSupport
import ShakeTrace
import Testing

@testable import ShakeEvaluation

/// Scoring rules, on outcomes built by hand, and a whole corpus written to disk and read back.
struct EvaluationTests {
    func shake(_ file: String, start: Double = 2, end: Double = 3) -> Corpus.Recording {
        Corpus.Recording(file: file, dataset: "test", kind: .shake, activity: "shake", labelStart: start, labelEnd: end)
    }

    func ended(began: Double, at time: Double) -> [ShakeEvent] {
        [.began(time: began), .ended(ShakeSummary(time: time, began: began, peak: 30, axis: .x, reversals: 4))]
    }

    @Test func aShakeCountsOnlyWithinItsWindow() {
        let outcomes = [
            Evaluation.Outcome(recording: shake("hit"), events: ended(began: 2.2, at: 3.3), duration: 5),
            Evaluation.Outcome(recording: shake("late"), events: ended(began: 4.4, at: 4.6), duration: 5),
            Evaluation.Outcome(recording: shake("early"), events: ended(began: 1.0, at: 1.7), duration: 5),
            Evaluation.Outcome(
                recording: shake("twice"), events: ended(began: 2.1, at: 3.1) + ended(began: 3.9, at: 4.4),
                duration: 5),
        ]
        let evaluation = Evaluation(outcomes: outcomes)
        #expect(evaluation.shakes == 4)
        #expect(evaluation.shakesCaught == 2)
        #expect(evaluation.missedShakes == ["late", "early"])
        // The late and early misses each carry one ended; "twice" has one beyond its match.
        #expect(evaluation.extraEventsOnShakes == 3)
        #expect(abs((evaluation.beganLatency?.median ?? 0) - 0.15) < 1e-9)
        #expect(abs((evaluation.endedLatency?.median ?? 0) - 0.2) < 1e-9)
    }

    @Test func continuousShakingBeginsInTimeAndWavesAreCountedApart() {
        func continuous(_ file: String) -> Corpus.Recording {
            Corpus.Recording(
                file: file, dataset: "d", kind: .shakeContinuous, activity: "shaking", labelStart: 2, labelEnd: 10)
        }
        let wave = Corpus.Recording(file: "w.csv", dataset: "d", kind: .wave, activity: "waving")
        let outcomes = [
            // In time, then too long: right.
            Evaluation.Outcome(
                recording: continuous("a.csv"),
                events: [.began(time: 2.5), .cancelled(time: 7, began: 2.5, reason: .tooLong)], duration: 12),
            // Too late.
            Evaluation.Outcome(
                recording: continuous("b.csv"),
                events: [.began(time: 4.5), .cancelled(time: 5, began: 4.5, reason: .notAShake, detail: .carried)],
                duration: 12),
            Evaluation.Outcome(recording: continuous("c.csv"), events: [], duration: 12),
            Evaluation.Outcome(recording: wave, events: ended(began: 3, at: 4), duration: 12),
            Evaluation.Outcome(recording: wave, events: [], duration: 12),
        ]
        let evaluation = Evaluation(outcomes: outcomes)
        #expect(evaluation.continuousShakes == 3)
        #expect(evaluation.continuousBegan == 1)
        #expect(abs((evaluation.continuousLatency?.median ?? 0) - 0.5) < 1e-9)
        #expect(evaluation.continuousMissed.map(\.file) == ["b.csv", "c.csv"])
        #expect(evaluation.continuousMissed.map(\.outcome) == ["began, cancelled not_a_shake carried", "nothing"])
        #expect(evaluation.waves == 2 && evaluation.wavesFiring == 1 && evaluation.wavesBegan == 1)
        // Neither is a gesture nor a shake.
        #expect(evaluation.gestures == 0 && evaluation.shakes == 0)
        let report = evaluation.report(title: "t")
        #expect(report.contains("continuous shaking began within 2 s 33.3% (1/3)"))
        #expect(report.contains("not in time: c.csv: nothing"))
        #expect(report.contains("waves firing            1/2, began on 1/2"))
    }

    @Test func nearMissesListShakesNotTakenAndGesturesThatFired() {
        let weak = ShakeDetector.Margin(test: .weak, value: 0.56, limit: 0.7)
        let duty = ShakeDetector.Margin(test: .duty, value: 0.63, limit: 0.6)
        let missed = ShakeDetector.Decision(
            time: 3.2, reported: false, isShake: false, decisive: weak, lastRejected: weak, reversals: 1)
        let fired = ShakeDetector.Decision(
            time: 4.5, reported: true, isShake: true, decisive: duty, lastRejected: weak, reversals: 2)
        let gesture = Corpus.Recording(file: "g.csv", dataset: "d", kind: .gesture, activity: "move-left")
        let outcomes = [
            Evaluation.Outcome(recording: shake("s.csv"), events: [], duration: 5, decisions: [missed]),
            Evaluation.Outcome(recording: shake("t.csv"), events: [], duration: 5),
            Evaluation.Outcome(
                recording: gesture, events: ended(began: 3, at: 4.5), duration: 5, decisions: [missed, fired]),
            // A gesture that did not fire is no near miss.
            Evaluation.Outcome(recording: gesture, events: [], duration: 5, decisions: [missed]),
        ]
        let report = Evaluation(outcomes: outcomes).nearMissReport()
        #expect(
            report == """
                near misses (test: value / limit, margin):
                  s.csv: shake not taken
                    3.20 s not a shake (silent), 1 counted: weak 0.56 / 0.70 (-20%)
                  t.csv: shake not taken
                    nothing followed as a possible shake (no stroke past the threshold began one)
                  g.csv: gesture fired
                    4.50 s shake, 2 counted: duty 0.63 / 0.60 (+5%); last rejected: weak 0.56 / 0.70 (-20%)
                """)
    }

    @Test func cancellationsAreCountedByDetailAndActivity() {
        func cancelled(_ detail: ShakeEvent.Rejection?, reason: ShakeEvent.CancelReason = .notAShake) -> [ShakeEvent] {
            [.began(time: 1), .cancelled(time: 2, began: 1, reason: reason, detail: detail)]
        }
        func recording(_ kind: Corpus.Kind, _ activity: String) -> Corpus.Recording {
            Corpus.Recording(file: "\(activity).csv", dataset: "d", kind: kind, activity: activity)
        }
        let outcomes = [
            Evaluation.Outcome(
                recording: recording(.gesture, "move-up"), events: cancelled(.oneWay) + cancelled(.oneWay), duration: 5),
            Evaluation.Outcome(recording: recording(.gesture, "move-up"), events: cancelled(.lowDuty), duration: 5),
            Evaluation.Outcome(recording: recording(.adl, "D19"), events: cancelled(.tooFewReversals), duration: 60),
            // Only not_a_shake counts: too_long and interrupted say why on their own.
            Evaluation.Outcome(
                recording: recording(.adl, "D03"), events: cancelled(nil, reason: .tooLong), duration: 60),
        ]
        let evaluation = Evaluation(outcomes: outcomes)
        #expect(evaluation.rejections == [.oneWay: 2, .lowDuty: 1, .tooFewReversals: 1])
        #expect(
            evaluation.rejectionsByActivity == ["move-up": [.oneWay: 2, .lowDuty: 1], "D19": [.tooFewReversals: 1]])
        let report = evaluation.report(title: "t")
        #expect(report.contains("not_a_shake, by detail  one_way 2, low_duty 1, too_few_reversals 1"))
        #expect(report.contains("move-up: one_way 2, low_duty 1"))
        let json = evaluation.json(sensitivity: "medium", corpus: "c")
        #expect(json.contains(#""not_a_shake_by_detail":{"too_few_reversals":1,"one_way":2,"low_duty":1}"#))
        #expect(
            json.contains(
                #""not_a_shake_by_activity":{"D19":{"too_few_reversals":1},"move-up":{"one_way":2,"low_duty":1}}"#))
    }

    @Test func activityCodesOfKnownCorporaAreExplained() {
        let outcomes = [
            Evaluation.Outcome(
                recording: Corpus.Recording(file: "a.csv", dataset: "sisfall", kind: .adl, activity: "D19"),
                events: [.began(time: 1), .cancelled(time: 2, began: 1, reason: .notAShake, detail: .lowDuty)],
                duration: 60),
            Evaluation.Outcome(
                recording: Corpus.Recording(file: "b.csv", dataset: "mine", kind: .adl, activity: "D18"), events: [],
                duration: 60),
            Evaluation.Outcome(
                recording: Corpus.Recording(file: "c.csv", dataset: "MobiFall", kind: .fall, activity: "SDL"),
                events: [.began(time: 1), .cancelled(time: 2, began: 1, reason: .notAShake, detail: .askew)],
                duration: 10),
        ]
        let report = Evaluation(outcomes: outcomes).report(title: "t")
        #expect(report.contains("D19 jumping gently, reaching up"))
        #expect(report.contains("D19 (jumping gently, reaching up): low_duty 1"))
        #expect(report.contains("SDL (sideways fall from standing): askew 1"))
        // The same code in a corpus eval does not know is left alone.
        #expect(!report.contains("stumbling"))
    }

    @Test func aComparisonSetsTwoEvaluationsSideBySide() {
        let shake = Corpus.Recording(
            file: "s.csv", dataset: "d", kind: .shake, activity: "shake", labelStart: 2, labelEnd: 3)
        let caught = Evaluation(outcomes: [.init(recording: shake, events: ended(began: 2.2, at: 3.3), duration: 5)])
        let missed = Evaluation(outcomes: [.init(recording: shake, events: [], duration: 5)])
        let table = Evaluation.comparison(caught, missed, names: ("light", "mine.yaml"), title: "t")
        let lines = table.split(separator: "\n").map(String.init)
        #expect(lines[1].contains("| light ") && lines[1].contains("| mine.yaml"))
        let recall = lines.first { $0.hasPrefix("| shake recall") } ?? ""
        #expect(recall.contains("100.0% (1/1)") && recall.contains("0.0% (0/1)"))
        // Every row has the same width.
        #expect(Set(lines.dropFirst().map(\.count)).count == 1)
    }

    @Test func dailyLivingGesturesAndFallsAreRated() {
        func recording(_ kind: Corpus.Kind, _ activity: String, _ dataset: String = "d") -> Corpus.Recording {
            Corpus.Recording(file: "\(activity).csv", dataset: dataset, kind: kind, activity: activity)
        }
        let outcomes = [
            Evaluation.Outcome(recording: recording(.adl, "walk"), events: [], duration: 1800),
            Evaluation.Outcome(recording: recording(.adl, "jog"), events: ended(began: 5, at: 6), duration: 1800),
            Evaluation.Outcome(
                recording: recording(.adl, "jog", "e"),
                events: [.began(time: 1), .cancelled(time: 2, began: 1, reason: .notAShake)], duration: 3600),
            Evaluation.Outcome(recording: recording(.gesture, "circle"), events: ended(began: 1, at: 2), duration: 5),
            Evaluation.Outcome(recording: recording(.gesture, "circle"), events: [], duration: 5),
            Evaluation.Outcome(recording: recording(.gesture, "move"), events: [], duration: 5),
            Evaluation.Outcome(recording: recording(.fall, "slip"), events: [], duration: 15),
        ]
        let evaluation = Evaluation(outcomes: outcomes)
        #expect(evaluation.adlHours == 2)
        #expect(evaluation.falseShakes == 1)
        #expect(evaluation.falseShakesPerHour == 0.5)
        #expect(evaluation.beganPerHour == 1)
        #expect(evaluation.byActivity.map(\.name) == ["jog", "walk"])
        #expect(evaluation.byActivity.first?.perHour == 1 / 1.5)
        #expect(evaluation.byDataset.map(\.name) == ["d", "e"])
        #expect(evaluation.gestures == 3)
        #expect(evaluation.gesturesFired == 1)
        #expect(evaluation.gesturesFiring.first?.name == "circle")
        #expect(evaluation.falls == 1 && evaluation.fallsFiring == 0)
        #expect(evaluation.json(sensitivity: "medium", corpus: "c").contains(#""false_shakes_per_hour":0.5"#))
        #expect(evaluation.report(title: "t").contains("false shakes per hour   0.50 (1 in 2.00 h"))
    }

    @Test func percentilesInterpolate() {
        #expect(Evaluation.percentile([1, 2, 3, 4], 0.5) == 2.5)
        #expect(Evaluation.percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], 0.9) == 10)
        #expect(Evaluation.percentile([7], 0.9) == 7)
    }

    @Test func manifestsAreCheckedLineByLine() {
        let header = Corpus.columns.joined(separator: ",")
        #expect(
            throws: TraceError(
                file: "m", line: 2,
                message: "unknown kind 'dance'; kinds: shake, gesture, adl, fall, shake-continuous, wave")
        ) {
            try Corpus.parseManifest("\(header)\na.csv,d,dance,x,,,100\n", source: "m")
        }
        #expect(throws: TraceError(file: "m", line: 2, message: "a shake needs label_start and label_end")) {
            try Corpus.parseManifest("\(header)\na.csv,d,shake,x,,,100\n", source: "m")
        }
        #expect(throws: TraceError(file: "m", line: 3, message: "expected 7 fields, found 3")) {
            try Corpus.parseManifest("\(header)\r\na.csv,d,adl,x,,,\r\nb,c,d\r\n", source: "m")
        }
        let recordings = try? Corpus.parseManifest("\(header)\r\nw/a.csv,d,shake,s,2.0,2.5,100\r\n", source: "m")
        #expect(
            recordings == [
                Corpus.Recording(
                    file: "w/a.csv", dataset: "d", kind: .shake, activity: "s", labelStart: 2, labelEnd: 2.5, rate: 100)
            ])
    }
}

/// The plot: what it draws, checked in the SVG text.
struct TracePlotTests {
    @Test func marksEventsThresholdsAndTheLabel() {
        let samples = synthesize { $0.repeatCount = 2 }
        let plot = TracePlot(title: "two shakes", settings: DetectorSettings(), label: (2.0, 3.5))
        let run = plot.run(samples)
        #expect(outline(run.events) == ["began", "ended", "began", "ended"])
        #expect(run.times.count == samples.count)
        #expect(run.linear.count == run.stroke.count)
        let svg = plot.svg(samples)
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(svg.hasSuffix("</svg>\n"))
        #expect(svg.components(separatedBy: ">began</text>").count == 3)
        #expect(svg.components(separatedBy: ">ended</text>").count == 3)
        #expect(svg.contains("fill=\"#fff3b0\""))  // the labelled interval
        #expect(svg.components(separatedBy: "fill=\"#cfe3ff\"").count == 5)  // two shakes, two panels
        #expect(svg.contains("stroke-dasharray=\"6,4\""))  // the threshold
        #expect(svg.contains("2 ended · 0 cancelled · labelled 2–3.5 s"))
        // Five polylines: magnitude, stroke, x, y, z, each thinned to about two points per pixel column.
        let polylines = svg.components(separatedBy: "<polyline").count - 1
        #expect(polylines == 5)
    }

    @Test func marksReversalsAndGivesTheThresholdItsOwnColour() {
        let samples = synthesize { $0.repeatCount = 1 }
        let plot = TracePlot(title: "a shake", settings: DetectorSettings())
        let run = plot.run(samples)
        let counted = run.reversals.filter { $0 == .confirmed }.count
        #expect(counted >= 2)
        let svg = plot.svg(samples)
        // One filled circle per counted reversal.
        #expect(svg.components(separatedBy: "fill=\"#1f4e9e\" stroke=\"#1f4e9e\"").count - 1 == counted)
        // The threshold is purple, a colour none of the axes uses.
        #expect(svg.contains("stroke=\"\(TracePlot.thresholdColor)\" stroke-width=\"1\" stroke-dasharray=\"6,4\""))
        for axis in ["#d62728", "#2ca02c", "#1f77b4"] { #expect(axis != TracePlot.thresholdColor) }
        // The magnitude is drawn first, wider than the stroke on top of it.
        let magnitude = svg.range(of: "stroke=\"#b8b8b8\" stroke-width=\"3.5\"")
        let stroke = svg.range(of: "stroke=\"#1f4e9e\" stroke-width=\"1.3\"")
        #expect(magnitude != nil && stroke != nil && magnitude!.lowerBound < stroke!.lowerBound)
    }

    @Test func rejectedReversalsAreNamedAndTheSignalsGoToCSV() {
        // A slow push and its much sharper stop, twice: the reversals are lopsided.
        let samples = strokeTrace([
            Stroke(.plusX, peak: 15, duration: 0.3), Stroke(.minusX, peak: 45, duration: 0.1),
            Stroke(.plusX, peak: 15, duration: 0.3), Stroke(.minusX, peak: 45, duration: 0.1),
        ])
        let plot = TracePlot(title: "lopsided", settings: DetectorSettings())
        #expect(plot.svg(samples).contains(">lopsided</text>"))
        let csv = plot.csv(samples).split(separator: "\n").map(String.init)
        #expect(csv.first == "time,linear_x,linear_y,linear_z,linear,stroke,threshold,reversal,event")
        #expect(csv.count == samples.count + 1)
        #expect(csv.contains { $0.hasSuffix(",rejected:lopsided,") })
        #expect(csv.filter { $0.hasSuffix(",began") }.count == 1)
        #expect(csv.contains { $0.contains(",cancelled:not_a_shake:") })
        #expect(csv.dropFirst().allSatisfy { $0.split(separator: ",", omittingEmptySubsequences: false).count == 9 })
    }

    @Test func escapesTextAndSurvivesAnEmptyTrace() {
        let svg = TracePlot(title: "a<b & c>", settings: DetectorSettings()).svg([])
        #expect(svg.contains("a&lt;b &amp; c&gt;"))
        #expect(!svg.contains("<polyline"))
    }
}
