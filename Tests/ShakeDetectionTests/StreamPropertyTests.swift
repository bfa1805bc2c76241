// SPDX-License-Identifier: Apache-2.0
import Foundation
import PropertyBased
import ShakeDetection
import ShakeTrace
import Testing

/// Properties that hold for any sample stream, however odd.
struct StreamPropertyTests {
    /// A stream built from a seed: bursts of shaking, stillness, spikes, NaNs, gaps and time going backwards.
    static func stream(seed: UInt64, length: Int, rate: Double) -> [Sample] {
        var random = SeededRandom(seed: seed)
        var time = random.uniform(-1000...1000)
        var samples: [Sample] = []
        var mode = 0
        for index in 0..<length {
            if index % 50 == 0 { mode = Int(random.next() % 6) }
            let dt = 1 / rate
            switch random.next() % 200 {
            case 0: time -= random.uniform(0...5)  // backwards
            case 1: time += random.uniform(0.5...100)  // gap
            default: time += dt * random.uniform(0.5...1.5)
            }
            var value: Vector3
            switch mode {
            case 0: value = Vector3(x: 0, y: 0, z: 9.81)
            case 1: value = Vector3(x: 30 * sin(time * 28), y: 3, z: 9.81)
            case 2:
                value = Vector3(x: random.uniform(-80...80), y: random.uniform(-80...80), z: random.uniform(-80...80))
            case 3: value = Vector3(x: 1e300, y: -1e300, z: 0)
            case 4: value = Vector3(x: 9.81 * sin(time), y: 0, z: 9.81 * cos(time))
            default: value = Vector3(x: 20 * (index % 2 == 0 ? 1 : -1), y: 0, z: 9.81)
            }
            if random.next() % 97 == 0 { value.x = .nan }
            if random.next() % 131 == 0 { value.z = .infinity }
            samples.append(Sample(time: random.next() % 499 == 0 ? .nan : time, acceleration: value))
        }
        return samples
    }

    @Test func eventsAlternateTimesNeverDecreaseAndNothingTraps() async {
        await propertyCheck(
            count: 200,
            input: Gen.int(in: 0...Int.max), Gen.int(in: 0...4000), Gen.element(of: [25.0, 50, 100, 200, 400])
        ) { seed, length, rate in
            let rate = rate ?? 100
            for sensitivity in DetectorSettings.Sensitivity.allCases {
                var detector = ShakeDetector(settings: .preset(sensitivity))
                var events: [ShakeEvent] = []
                for sample in Self.stream(seed: UInt64(seed), length: length, rate: rate) {
                    if let event = detector.process(sample) { events.append(event) }
                }
                if let last = detector.interrupt() { events.append(last) }
                var open: Double?
                for event in events {
                    switch event {
                    case .began(let time):
                        #expect(open == nil, "began while a shake was open")
                        open = time
                    case .ended(let summary):
                        #expect(open == summary.began, "ended without its began")
                        #expect(summary.duration >= 0 && summary.peak.isFinite && summary.reversals > 0)
                        open = nil
                    case .cancelled(let time, let began, _, _):
                        #expect(open == began, "cancelled without its began")
                        #expect(time >= began)
                        open = nil
                    }
                }
                #expect(open == nil, "a shake left open after interrupt()")
                #expect(events.allSatisfy { $0.time.isFinite })
                let counters = detector.counters
                #expect(counters.began == counters.ended + counters.cancelled)
            }
        }
    }

    @Test func eventTimesNeverDecreaseWithinAContinuousStream() async {
        await propertyCheck(count: 100, input: Gen.int(in: 0...Int.max)) { seed in
            var random = SeededRandom(seed: UInt64(seed))
            var options = SynthesisOptions()
            options.seed = UInt64(seed)
            options.repeatCount = Int(random.next() % 4) + 1
            options.pause = random.uniform(0...2)
            options.force = random.uniform(0.2...1)
            options.duration = random.uniform(0.2...6)
            options.rate = [25.0, 50, 100, 200, 400][Int(random.next() % 5)]
            options.jitter = random.uniform(0...0.3)
            options.background = SynthesisOptions.Background.allCases[Int(random.next() % 3)]
            var detector = ShakeDetector()
            var times: [Double] = []
            for sample in TraceSynthesizer(options: options).samples() {
                if let event = detector.process(sample) { times.append(event.time) }
            }
            #expect(times == times.sorted())
            #expect(detector.counters.discontinuities == 0)
        }
    }
}
