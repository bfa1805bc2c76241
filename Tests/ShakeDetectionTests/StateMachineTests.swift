// SPDX-License-Identifier: Apache-2.0
import ShakeDetection
import ShakeTestSupport
import ShakeTrace
import Testing

/// The state machine's guarantees, on streams built in the test.
struct StateMachineTests {
    /// A device lying still, face up, for `seconds` at `rate`.
    func still(from start: Double = 0, seconds: Double, rate: Double = 100) -> [Sample] {
        (0..<Int(seconds * rate)).map { Sample(time: start + Double($0) / rate, x: 0, y: 0, z: 9.81) }
    }

    @Test func aDeviceAtRestReportsNothing() {
        #expect(detect(still(seconds: 60)).isEmpty)
    }

    @Test func continuousShakingIsOneBeganAndOneTooLong() {
        let samples = synthesize {
            $0.duration = 30
            $0.before = 1
            $0.after = 3
        }
        #expect(outline(detect(samples)) == ["began", "cancelled(too_long)"])
    }

    @Test func tooLongFiresAtTheCutoff() {
        let samples = synthesize { $0.duration = 10 }
        let events = detect(samples)
        guard case .cancelled(let time, let began, .tooLong, _) = events.last else {
            Issue.record("expected too_long: \(events)")
            return
        }
        let cutoff = DetectorSettings().tooLong
        #expect(time - began > cutoff)
        #expect(time - began < cutoff + 0.05)
    }

    @Test func aShakeAfterCalmFollowingTooLongIsDetected() {
        var samples = synthesize {
            $0.duration = 8
            $0.after = 3
        }
        let next = synthesize {
            $0.start = samples.last!.time + 0.01
            $0.before = 0.5
            $0.seed = 2
        }
        samples += next
        #expect(outline(detect(samples)) == ["began", "cancelled(too_long)", "began", "ended"])
    }

    @Test func repeatedShakesWithPausesAreSeparateShakes() {
        let samples = synthesize {
            $0.repeatCount = 3
            $0.pause = 1.5
        }
        #expect(outline(detect(samples)) == Array(repeating: ["began", "ended"], count: 3).flatMap { $0 })
    }

    @Test func eventTimesAndDurationsAreConsistent() {
        let events = detect(synthesize { $0.duration = 1.5 })
        guard events.count == 2, case .began(let began) = events[0], case .ended(let summary) = events[1] else {
            Issue.record("unexpected events \(events)")
            return
        }
        #expect(summary.began == began)
        #expect(summary.duration == summary.time - began)
        // The shake lies from 2.0 to 3.5 s: began soon after the start, ended soon after the end.
        #expect(began > 2.0 && began < 2.3)
        #expect(summary.time > 3.5 && summary.time < 4.0)
    }

    @Test func interruptEndsAShakeInProgressOnlyOnce() {
        var detector = ShakeDetector()
        var events: [ShakeEvent] = []
        for sample in synthesize({ $0.duration = 3 }) where sample.time < 3.0 {
            if let event = detector.process(sample) { events.append(event) }
        }
        #expect(outline(events) == ["began"])
        #expect(detector.isShaking)
        #expect(detector.interrupt()?.outline == "cancelled(interrupted)")
        #expect(detector.interrupt() == nil)
        #expect(!detector.isShaking)
    }

    /// What the capture reads in short steps for: a motion under way from before `began` until `ended` is
    /// decided, and nothing while the device lies still before and after.
    @Test func motionIsUnderWayFromTheFirstStrokeUntilTheShakeIsDecided() {
        var detector = ShakeDetector()
        var underWay: [Double] = []
        var decided: [Double] = []
        for sample in synthesize({ $0.duration = 1.5 }) {
            // As the capture asks it: before the sample that may decide.
            if detector.isMotionUnderWay { underWay.append(sample.time) }
            if let event = detector.process(sample) { decided.append(event.time) }
        }
        #expect(decided.count == 2)
        guard let first = underWay.first, let last = underWay.last, decided.count == 2 else { return }
        // The shake lies from 2.0 to 3.5 s: still before, under way before `began` and up to `ended`.
        #expect(first >= 2.0 && first < decided[0])
        #expect(last >= decided[1] - 0.011 && last <= decided[1])
        #expect(!detector.isMotionUnderWay)
        #expect(!underWay.contains { $0 > decided[1] })
    }

    @Test func interruptWhenIdleReportsNothing() {
        var detector = ShakeDetector()
        #expect(detector.interrupt() == nil)
        for sample in still(seconds: 2) { _ = detector.process(sample) }
        #expect(detector.interrupt() == nil)
    }

    @Test func aStreamStartingMidShakeDoesNotCrashAndSettles() {
        let samples = synthesize {
            $0.before = 0
            $0.duration = 2
        }
        let events = detect(samples)
        #expect(events.count <= 2)
        #expect(!outline(events).contains("cancelled(too_long)"))
    }

    @Test func implausibleSamplesAreDroppedLikeNaN() {
        var samples = synthesize { $0.duration = 1.5 }
        for index in stride(from: 210, to: 330, by: 9) {
            samples[index].acceleration.y = index % 2 == 0 ? 1e300 : -2e4
        }
        samples[5].time = .infinity
        var detector = ShakeDetector()
        let events = samples.compactMap { detector.process($0) }
        #expect(outline(events) == ["began", "ended"])
        #expect(detector.counters.invalid == 15)
        if case .ended(let summary) = events.last {
            #expect(summary.peak < 100)
        }
    }

    @Test func aSampleIsUsableWithAFiniteTimeAndAnAccelerationWithinTheLimit() {
        let limit = Sample.plausibleLimit
        let usable = [
            Sample(time: 0, x: 0, y: 0, z: 9.81),
            Sample(time: -1e9, x: -limit, y: 0, z: 0),
            Sample(time: 1e12, x: 0, y: 0, z: limit),
            Sample(time: 3, x: 5_000, y: -5_000, z: 5_000),
            Sample(time: 3, x: -.leastNonzeroMagnitude, y: 0, z: 0),
        ]
        for sample in usable { #expect(sample.isUsable, "\(sample)") }
        let unusable = [
            Sample(time: .nan, x: 0, y: 0, z: 9.81), Sample(time: .infinity, x: 0, y: 0, z: 9.81),
            Sample(time: -.infinity, x: 0, y: 0, z: 9.81), Sample(time: 0, x: .nan, y: 0, z: 9.81),
            Sample(time: 0, x: 0, y: .nan, z: 9.81), Sample(time: 0, x: 0, y: 0, z: .nan),
            Sample(time: 0, x: .infinity, y: 0, z: 9.81), Sample(time: 0, x: 0, y: -.infinity, z: 9.81),
            Sample(time: 0, x: 0, y: 0, z: .infinity), Sample(time: 0, x: limit.nextUp, y: 0, z: 0),
            // Each component within the limit, the length beyond it.
            Sample(time: 0, x: 6_000, y: -6_000, z: 6_000),
            // Large enough for the squares to overflow.
            Sample(time: 0, x: 1e200, y: 0, z: 0), Sample(time: 0, x: -.greatestFiniteMagnitude, y: 0, z: 0),
        ]
        for sample in unusable { #expect(!sample.isUsable, "\(sample)") }
    }

    @Test func duplicateTimestampsAreAccepted() {
        let samples = synthesize { $0.rate = 100 }.flatMap { [$0, $0] }
        #expect(outline(detect(samples)) == ["began", "ended"])
    }

    @Test func settingsChangeWithoutLosingTheShakeInProgress() {
        var detector = ShakeDetector()
        var events: [ShakeEvent] = []
        var switched = false
        for sample in synthesize({ $0.duration = 1.5 }) {
            if sample.time > 2.8, detector.isShaking, !switched {
                detector.update(settings: DetectorSettings(sensitivity: .light))
                switched = true
            }
            if let event = detector.process(sample) { events.append(event) }
        }
        #expect(switched)
        #expect(detector.settings == DetectorSettings(sensitivity: .light))
        #expect(outline(events) == ["began", "ended"])
    }
}
