// SPDX-License-Identifier: Apache-2.0
import ShakeDetection
import ShakeTestSupport
import Testing

/// How a motion was decided (``ShakeDetector/lastDecision``): the test that decided and by how much, for the
/// near-miss view. Set once a motion, reported or followed silently.
struct DecisionTests {
    /// Feeds the samples and returns every decision, in order.
    func decisions(_ samples: [Sample], settings: DetectorSettings = DetectorSettings()) -> [ShakeDetector.Decision] {
        var detector = ShakeDetector(settings: settings)
        var found: [ShakeDetector.Decision] = []
        for sample in samples {
            _ = detector.process(sample)
            if detector.counters.decided > found.count, let decision = detector.lastDecision {
                found.append(decision)
            }
        }
        return found
    }

    /// A move and its stop with a recoil: the recoil never swings the device back. The decision names `one_way`,
    /// the impulse the recoil gave against what swinging back needs, and fails.
    @Test func aMoveAndItsStopFailsOneWayByItsImpulse() throws {
        let found = decisions(
            strokeTrace([
                Stroke(.plusX, peak: 20, duration: 0.2), Stroke(.minusX, peak: 22, duration: 0.2),
                Stroke(.plusX, peak: 14, duration: 0.08),
            ]))
        let decision = try #require(found.last)
        #expect(!decision.isShake)
        #expect(decision.decisive.test == .oneWay)
        #expect(!decision.decisive.passes)
        #expect(decision.decisive.relative < 0)
        #expect(decision.decisive.value < decision.decisive.limit)
    }

    /// A shake passes every test; its decision names the test it passed by the least, with a margin of at least 0.
    @Test func aShakeNamesItsClosestTest() throws {
        let found = decisions(
            strokeTrace([
                Stroke(.plusX, peak: 20, duration: 0.2), Stroke(.minusX, peak: 22, duration: 0.2),
                Stroke(.plusX, peak: 20, duration: 0.2),
            ]))
        let decision = try #require(found.last)
        #expect(decision.isShake)
        #expect(decision.reported)
        #expect(decision.decisive.passes)
        #expect(decision.decisive.relative >= 0)
        #expect(decision.reversals == 2)
        // Two counted reversals where two are needed: no room at all.
        #expect(decision.decisive.test == .reversals && decision.decisive.relative == 0)
    }

    /// Margins read the same way whichever side the limit is on.
    @Test func marginsAreTheRoomOnThePassingSide() {
        let atLeast = ShakeDetector.Margin(test: .weak, value: 0.56, limit: 0.7)
        #expect(!atLeast.passes && abs(atLeast.relative + 0.2) < 1e-12)
        let atMost = ShakeDetector.Margin(test: .rhythm, value: 0.4, limit: 0.5, atLeast: false)
        #expect(atMost.passes && abs(atMost.relative - 0.2) < 1e-12)
    }
}
