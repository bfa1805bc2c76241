// SPDX-License-Identifier: Apache-2.0
public import ShakeDetection

/// Scores detector events against a corpus's labels.
///
/// The rules, for every recording run through a fresh detector:
/// - a shake clip is caught when an `ended` falls within `[label_start - 0.25 s, label_end + 1.5 s]`; its
///   latencies are the `began` before that `ended` minus `label_start`, and the `ended` minus `label_end`;
///   every other `ended` on a shake clip is an extra event;
/// - a gesture or a fall fires when it has any `ended`;
/// - false shakes per hour are the `ended` events on daily-living recordings over their total duration;
/// - continuous shaking begins in time when a `began` falls within `[label_start - 0.25 s, label_start + 2 s]`
///   (an `ended` or a `too_long` after it is right too: it is longer than a shake may last);
/// - a wave fires, as a gesture does, when it has any `ended`; it is counted apart from the other gestures.
public struct Evaluation: Sendable {
    /// What the detector did on one recording.
    public struct Outcome: Sendable {
        public var recording: Corpus.Recording
        public var events: [ShakeEvent]
        /// Seconds of recording.
        public var duration: Double
        /// How each motion the detector followed was decided (``ShakeDetector/lastDecision``), for the near-miss
        /// view.
        public var decisions: [ShakeDetector.Decision]

        public init(
            recording: Corpus.Recording, events: [ShakeEvent], duration: Double,
            decisions: [ShakeDetector.Decision] = []
        ) {
            self.recording = recording
            self.events = events
            self.duration = duration
            self.decisions = decisions
        }

        var endedCount: Int { events.filter { $0.phase == .ended }.count }
        var beganCount: Int { events.filter { $0.phase == .began }.count }
    }

    /// A rate over a group (an activity, a dataset).
    public struct GroupRate: Sendable, Hashable {
        public var name: String
        public var count: Int
        public var hours: Double
        public var perHour: Double { hours > 0 ? Double(count) / hours : 0 }
        public var began: Int
        public var beganPerHour: Double { hours > 0 ? Double(began) / hours : 0 }
    }

    /// A share of recordings that fired, by group.
    public struct GroupShare: Sendable, Hashable {
        public var name: String
        public var fired: Int
        public var total: Int
        public var share: Double { total > 0 ? Double(fired) / Double(total) : 0 }
    }

    public struct Latency: Sendable, Hashable {
        public var median: Double
        public var p90: Double
        public var count: Int
    }

    public var shakes = 0
    public var shakesCaught = 0
    public var missedShakes: [String] = []
    public var extraEventsOnShakes = 0
    public var gestures = 0
    public var gesturesFiring: [GroupShare] = []
    public var adlHours = 0.0
    public var falseShakes = 0
    public var adlBegan = 0
    public var byDataset: [GroupRate] = []
    public var byActivity: [GroupRate] = []
    public var falls = 0
    public var fallsFiring = 0
    public var fallsFired: [String] = []
    public var beganLatency: Latency?
    public var endedLatency: Latency?
    /// Recordings of continuous shaking, and those whose shaking reported `began` within ``continuousWindow`` of
    /// its start.
    public var continuousShakes = 0
    public var continuousBegan = 0
    /// For each continuous shaking that did not begin in time: its file and what the detector did
    /// (``outcomeSummary(_:)``).
    public var continuousMissed: [(file: String, outcome: String)] = []
    /// `began` after the start of continuous shaking, for those that began in time.
    public var continuousLatency: Latency?
    /// The near misses: for each shake not taken (and continuous shaking not begun in time) and each gesture,
    /// wave, fall or stretch of daily living that fired, the recording and how its motions were decided.
    public var nearMisses: [(file: String, what: String, decisions: [ShakeDetector.Decision])] = []
    public var waves = 0
    public var wavesFiring = 0
    public var wavesBegan = 0
    /// `not_a_shake` cancellations by the test that failed (their `detail`), over every recording.
    public var rejections: [ShakeEvent.Rejection: Int] = [:]
    /// The same, by activity (gesture name or activity code), for the activities that had any.
    public var rejectionsByActivity: [String: [ShakeEvent.Rejection: Int]] = [:]
    /// The dataset each activity came from, to explain the codes of corpora `eval` knows (``ActivityCodes``).
    public var activityDatasets: [String: String] = [:]

    public var recall: Double { shakes > 0 ? Double(shakesCaught) / Double(shakes) : 0 }
    public var gesturesFired: Int { gesturesFiring.reduce(0) { $0 + $1.fired } }
    public var gestureShare: Double { gestures > 0 ? Double(gesturesFired) / Double(gestures) : 0 }
    public var falseShakesPerHour: Double { adlHours > 0 ? Double(falseShakes) / adlHours : 0 }
    public var beganPerHour: Double { adlHours > 0 ? Double(adlBegan) / adlHours : 0 }
    public var fallShare: Double { falls > 0 ? Double(fallsFiring) / Double(falls) : 0 }
    public var continuousShare: Double {
        continuousShakes > 0 ? Double(continuousBegan) / Double(continuousShakes) : 0
    }

    /// How soon after the start of continuous shaking its `began` must come.
    public static let continuousWindow = 2.0

    /// The window around a labelled shake in which its `ended` must fall.
    public static let windowBefore = 0.25
    public static let windowAfter = 1.5

    public init(outcomes: [Outcome]) {
        var beganLatencies: [Double] = []
        var endedLatencies: [Double] = []
        var continuousLatencies: [Double] = []
        var gestureGroups: [String: GroupShare] = [:]
        var datasets: [String: GroupRate] = [:]
        var activities: [String: GroupRate] = [:]
        for outcome in outcomes {
            let recording = outcome.recording
            activityDatasets[recording.activity] = recording.dataset
            for event in outcome.events {
                guard case .cancelled(_, _, .notAShake, let detail) = event, let detail else { continue }
                rejections[detail, default: 0] += 1
                rejectionsByActivity[recording.activity, default: [:]][detail, default: 0] += 1
            }
            switch recording.kind {
            case .shake:
                shakes += 1
                let start = recording.labelStart ?? 0
                let end = recording.labelEnd ?? start
                let matched = outcome.events.firstIndex {
                    $0.phase == .ended && $0.time >= start - Self.windowBefore && $0.time <= end + Self.windowAfter
                }
                extraEventsOnShakes += outcome.endedCount - (matched == nil ? 0 : 1)
                guard let matched else {
                    missedShakes.append(recording.file)
                    nearMisses.append((recording.file, "shake not taken", outcome.decisions))
                    continue
                }
                shakesCaught += 1
                endedLatencies.append(outcome.events[matched].time - end)
                if case .ended(let summary) = outcome.events[matched] {
                    beganLatencies.append(summary.began - start)
                }
            case .gesture:
                gestures += 1
                var group =
                    gestureGroups[recording.activity] ?? GroupShare(name: recording.activity, fired: 0, total: 0)
                group.total += 1
                if outcome.endedCount > 0 {
                    group.fired += 1
                    nearMisses.append((recording.file, "gesture fired", outcome.decisions.filter(\.isShake)))
                }
                gestureGroups[recording.activity] = group
            case .adl:
                let hours = outcome.duration / 3600
                adlHours += hours
                falseShakes += outcome.endedCount
                if outcome.endedCount > 0 {
                    nearMisses.append((recording.file, "daily living fired", outcome.decisions.filter(\.isShake)))
                }
                adlBegan += outcome.beganCount
                for (key, name) in [(recording.dataset, "dataset"), (recording.activity, "activity")] {
                    var group =
                        (name == "dataset" ? datasets[key] : activities[key])
                        ?? GroupRate(name: key, count: 0, hours: 0, began: 0)
                    group.count += outcome.endedCount
                    group.hours += hours
                    group.began += outcome.beganCount
                    if name == "dataset" { datasets[key] = group } else { activities[key] = group }
                }
            case .shakeContinuous:
                continuousShakes += 1
                let start = recording.labelStart ?? 0
                let began = outcome.events.first {
                    $0.phase == .began && $0.time >= start - Self.windowBefore
                        && $0.time <= start + Self.continuousWindow
                }
                if let began {
                    continuousBegan += 1
                    continuousLatencies.append(began.time - start)
                } else {
                    continuousMissed.append((recording.file, Self.outcomeSummary(outcome.events)))
                    nearMisses.append((recording.file, "continuous shaking not begun in time", outcome.decisions))
                }
            case .wave:
                waves += 1
                if outcome.endedCount > 0 {
                    wavesFiring += 1
                    nearMisses.append((recording.file, "wave fired", outcome.decisions.filter(\.isShake)))
                }
                if outcome.beganCount > 0 { wavesBegan += 1 }
            case .fall:
                falls += 1
                if outcome.endedCount > 0 {
                    fallsFiring += 1
                    fallsFired.append(recording.file)
                    nearMisses.append((recording.file, "fall fired", outcome.decisions.filter(\.isShake)))
                }
            }
        }
        let worstFirst: (GroupRate, GroupRate) -> Bool = {
            ($0.perHour, $0.beganPerHour, $1.name) > ($1.perHour, $1.beganPerHour, $0.name)
        }
        byDataset = datasets.values.sorted(by: worstFirst)
        byActivity = activities.values.sorted(by: worstFirst)
        gesturesFiring = gestureGroups.values.sorted { ($0.share, $1.name) > ($1.share, $0.name) }
        beganLatency = Self.latency(beganLatencies)
        endedLatency = Self.latency(endedLatencies)
        continuousLatency = Self.latency(continuousLatencies)
    }

    /// What a recording's events came to, in a few words: `nothing`, or each event's phase with its reason and
    /// detail (`began, cancelled not_a_shake carried`).
    public static func outcomeSummary(_ events: [ShakeEvent]) -> String {
        guard !events.isEmpty else { return "nothing" }
        return events.map { event in
            switch event {
            case .began: "began"
            case .ended: "ended"
            case .cancelled(_, _, let reason, let detail):
                "cancelled \(reason.rawValue)" + (detail.map { " \($0.rawValue)" } ?? "")
            }
        }.joined(separator: ", ")
    }

    static func latency(_ values: [Double]) -> Latency? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return Latency(median: percentile(sorted, 0.5), p90: percentile(sorted, 0.9), count: sorted.count)
    }

    /// Linear interpolation between closest ranks, on sorted values.
    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        let position = p * Double(sorted.count - 1)
        let lower = Int(position.rounded(.down))
        let upper = min(lower + 1, sorted.count - 1)
        let fraction = position - Double(lower)
        return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction
    }
}
