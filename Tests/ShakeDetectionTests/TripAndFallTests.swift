// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeDetection
import ShakeTestSupport
import ShakeTrace
import Testing

/// A trip or slip while walking that ends in a fall, synthesized: a waist-worn device (portrait, gravity along
/// +y, walking forward along -z) carried by a walker, then a lurch forward as the foot catches, a stumbling
/// step that brakes it, a second lurch, the fall (the reading drops towards free fall as the body pitches
/// forward), the impact and its rebound, and the body lying still on its front.
struct TripAndFallTests {
    struct Trip: Sendable, CustomStringConvertible {
        /// Peak forward acceleration of the lurches, and backward of the stumbling step, m/s².
        var lurch: Double
        var brake: Double
        /// Seconds each of the three strokes lasts.
        var stroke: Double
        /// Seconds of free fall.
        var fall: Double
        /// Peak of the impact, m/s².
        var impact: Double

        var description: String {
            "lurch \(lurch), brake \(brake), stroke \(stroke) s, fall \(fall) s, impact \(impact)"
        }
    }

    static let trips: [Trip] = [15.0, 20, 25].flatMap { lurch in
        [0.7, 1.0, 1.3].flatMap { brakeRatio in
            [0.12, 0.18].flatMap { stroke in
                [0.25, 0.4].map { fall in
                    Trip(lurch: lurch, brake: lurch * brakeRatio, stroke: stroke, fall: fall, impact: 4 * lurch)
                }
            }
        }
    }

    func trace(_ trip: Trip, seed: UInt64) -> [Sample] {
        let walking = synthesize {
            $0.motion = .none
            $0.background = .walking
            $0.before = 5
            $0.after = 0
            $0.seed = seed
        }
        let g = TraceSynthesizer.gravity
        let up = Vector3(x: 0, y: 1, z: 0)
        let forward = Vector3(x: 0, y: 0, z: -1)
        var random = SeededRandom(seed: seed)
        let start = (walking.last?.time ?? 0) + 0.01
        let strokes = 3 * trip.stroke
        let impactAt = strokes + trip.fall
        var samples = walking
        var t = 0.0
        while t < impactAt + 3 {
            var reading: Vector3
            // How far the body has pitched forward (radians), about the device's x axis.
            let pitch = min(1, max(0, (t - strokes) / trip.fall)) * (.pi / 2)
            let gravity = up * cos(pitch) + forward * -sin(pitch)
            if t < strokes {
                let index = Int(t / trip.stroke)
                let local = (t - Double(index) * trip.stroke) / trip.stroke
                let peak = index == 1 ? -trip.brake : trip.lurch
                reading = gravity * g + forward * (peak * sin(.pi * local))
            } else if t < impactAt {
                // Falling: the reading drops to a tenth of g (air, the body turning).
                reading = gravity * (0.1 * g)
            } else {
                let since = t - impactAt
                let ring = trip.impact * exp(-since / 0.04) * cos(2 * .pi * 12 * since)
                reading = gravity * g + gravity * ring + forward * (0.3 * ring)
            }
            reading =
                reading
                + Vector3(
                    x: random.gaussian(deviation: 0.05), y: random.gaussian(deviation: 0.05),
                    z: random.gaussian(deviation: 0.05))
            samples.append(Sample(time: start + t, acceleration: reading))
            t += 0.01
        }
        return samples
    }

    /// No trip that ends in a fall is a shake.
    @Test func aTripThatEndsInAFallIsNotAShake() {
        var fired: [String] = []
        for trip in Self.trips {
            for seed in UInt64(1)...2 where outline(detect(trace(trip, seed: seed))).contains("ended") {
                fired.append("\(trip), seed \(seed)")
            }
        }
        #expect(fired.isEmpty, "\(fired.count) of \(2 * Self.trips.count) fired: \(fired)")
    }
}
