import ShakeDetection
import ShakeTestSupport
import ShakeTrace
import Testing

/// Each class of false shake the detector was taught to reject, as a hand-made trace: rejected with the default
/// settings, and accepted when the one test that rejects it is switched off — so each test is shown to matter.
struct FalsePositiveRegressionTests {
    func ends(_ samples: [Sample], _ settings: DetectorSettings = DetectorSettings()) -> Bool {
        outline(detect(samples, settings: settings)).contains("ended")
    }

    /// Jumping, or running with a loosely worn device: big upward pushes, and downward swings that go only a
    /// little past free fall (the device reads slightly below zero as the strap rings).
    @Test func verticalMotionThatBarelyPassesFreeFallIsNotAShake() {
        let jumps = strokeTrace(
            Array(
                repeating: [Stroke(.plusZ, peak: 25, duration: 0.25), Stroke(.minusZ, peak: 14, duration: 0.2)],
                count: 4
            )
            .flatMap { $0 })
        let rejected = !ends(jumps)
        #expect(rejected)
        var noFreeFallLimit = DetectorSettings()
        noFreeFallLimit.freeFallAllowance = 0
        let acceptedWithoutTheTest = ends(jumps, noFreeFallLimit)
        #expect(acceptedWithoutTheTest)
    }

    /// The same motion sideways is a shake: the limit applies only along gravity.
    @Test func theSameMotionSidewaysIsAShake() {
        let sideways = strokeTrace(
            Array(
                repeating: [Stroke(.plusX, peak: 25, duration: 0.25), Stroke(.minusX, peak: 14, duration: 0.2)],
                count: 4
            )
            .flatMap { $0 })
        let accepted = ends(sideways)
        #expect(accepted)
    }

    /// A push and its stop, twice: strong one way, weak the other.
    @Test func lopsidedStrokesAreNotAShake() {
        let lopsided = strokeTrace([
            Stroke(.plusX, peak: 14, duration: 0.15), Stroke(.minusX, peak: 45, duration: 0.2),
            Stroke(.plusX, peak: 14, duration: 0.15), Stroke(.minusX, peak: 45, duration: 0.2),
        ])
        let rejected = !ends(lopsided)
        #expect(rejected)
        var noSymmetry = DetectorSettings()
        noSymmetry.symmetry = 0
        let acceptedWithoutTheTest = ends(lopsided, noSymmetry)
        #expect(acceptedWithoutTheTest)
    }

    /// Knocks or footsteps: sharp alternating spikes with lulls between them.
    @Test func spikesWithLullsAreNotAShake() {
        let knocks = strokeTrace(
            Array(
                repeating: [
                    Stroke(.plusX, peak: 32, duration: 0.05), .pause(0.12), Stroke(.minusX, peak: 32, duration: 0.05),
                    .pause(0.12),
                ], count: 4
            )
            .flatMap { $0 })
        let rejected = !ends(knocks)
        #expect(rejected)
        var noDuty = DetectorSettings()
        noDuty.minDuty = 0
        let acceptedWithoutTheTest = ends(knocks, noDuty)
        #expect(acceptedWithoutTheTest)
    }

    /// A stumble or stairs: strokes with no steady rhythm (a quick reversal, then a long drawn-out stroke).
    @Test func strokesWithoutRhythmAreNotAShake() {
        let stumbling = strokeTrace(
            Array(
                repeating: [
                    Stroke(.plusX, peak: 30, duration: 0.1), Stroke(.minusX, peak: 30, duration: 0.1),
                    Stroke(.minusX, peak: 14, duration: 0.3),
                ], count: 3
            )
            .flatMap { $0 })
        let rejected = !ends(stumbling)
        #expect(rejected)
        var anyRhythm = DetectorSettings()
        anyRhythm.maxIrregularity = 10
        let acceptedWithoutTheTest = ends(stumbling, anyRhythm)
        #expect(acceptedWithoutTheTest)
    }

    /// A vibration (a motor, an engine, a bumpy ride): fast and strong, but it barely moves the device.
    @Test func fastVibrationIsNotAShake() {
        let buzz = strokeTrace(
            Array(
                repeating: [Stroke(.plusX, peak: 15, duration: 0.0625), Stroke(.minusX, peak: 15, duration: 0.0625)],
                count: 12
            )
            .flatMap { $0 })
        let rejected = !ends(buzz)
        #expect(rejected)
        var noImpulse = DetectorSettings()
        noImpulse.minImpulse = 0
        let acceptedWithoutTheTest = ends(buzz, noImpulse)
        #expect(acceptedWithoutTheTest)
    }

    /// Daily life, synthesized: a minute each of walking, jogging and stairs, and three jumps.
    @Test(arguments: [SynthesisOptions.Background.walking, .jogging, .stairs])
    func dailyLifeIsNotAShake(background: SynthesisOptions.Background) {
        for seed in 1...3 {
            let samples = synthesize {
                $0.motion = .none
                $0.background = background
                $0.before = 60
                $0.seed = UInt64(seed)
            }
            let events = outline(detect(samples))
            #expect(!events.contains("ended"), "\(background), seed \(seed): \(events)")
            #expect(events.count <= 2, "continuous motion must not produce a stream of events: \(events)")
        }
    }

    @Test func jumpingIsNotAShake() {
        for orientation in [SynthesisOptions.Orientation.portrait, .faceUp, .landscapeLeft] {
            let samples = synthesize {
                $0.motion = .jump
                $0.orientation = orientation
            }
            #expect(!outline(detect(samples)).contains("ended"))
        }
    }
}
