// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeDetection
import ShakeTestSupport
import ShakeTrace
import Testing

struct TraceSynthesizerTests {
    @Test func theSameSeedWritesTheSameTrace() {
        var options = SynthesisOptions()
        options.jitter = 0.1
        options.interpolation = .random
        let first = TraceSynthesizer(options: options).samples()
        #expect(first == TraceSynthesizer(options: options).samples())
        options.seed = 2
        #expect(first != TraceSynthesizer(options: options).samples())
    }

    @Test(arguments: [25.0, 100, 400])
    func samplesComeAtTheRate(rate: Double) {
        // A shake lasts whole strokes: 1 s is eight of 0.125 s.
        let samples = synthesize {
            $0.rate = rate
            $0.before = 1
            $0.after = 1
            $0.duration = 1
            $0.iteration = 0.25
        }
        #expect(abs(Double(samples.count) - 3 * rate) <= 2)
        let intervals = zip(samples.dropFirst(), samples).map { $0.time - $1.time }
        #expect(intervals.allSatisfy { abs($0 - 1 / rate) < 1e-9 })
    }

    @Test func jitterVariesTheIntervalWithinItsShare() {
        let samples = synthesize {
            $0.jitter = 0.2
            $0.rate = 100
        }
        let intervals = zip(samples.dropFirst(), samples).map { $0.time - $1.time }
        #expect(intervals.allSatisfy { $0 >= 0.008 - 1e-9 && $0 <= 0.012 + 1e-9 })
        #expect(Set(intervals.map { ($0 * 1e6).rounded() }).count > 10)
    }

    @Test func repeatedSamplesKeepTheReadingBeforeWithANewTime() {
        let samples = synthesize {
            $0.repeats = 0.3
            $0.rate = 50
        }
        let pairs = zip(samples.dropFirst(), samples)
        let repeated = pairs.filter { $0.acceleration == $1.acceleration }.count
        let share = Double(repeated) / Double(samples.count - 1)
        #expect(share > 0.2 && share < 0.4)
        #expect(pairs.allSatisfy { $0.time > $1.time })
        let plain = synthesize { $0.rate = 50 }
        #expect(zip(plain.dropFirst(), plain).allSatisfy { $0.acceleration != $1.acceleration })
    }

    @Test(arguments: SynthesisOptions.Orientation.allCases)
    func atRestGravityPointsAsTheOrientationSays(orientation: SynthesisOptions.Orientation) {
        let samples = synthesize {
            $0.motion = .none
            $0.background = .still
            $0.noise = 0
            $0.orientation = orientation
        }
        let first = samples[0].acceleration
        #expect(abs(first.length - TraceSynthesizer.gravity) < 1e-9)
        let expected: Vector3 =
            switch orientation {
            case .faceUp: Vector3(x: 0, y: 0, z: 1)
            case .faceDown: Vector3(x: 0, y: 0, z: -1)
            case .portrait: Vector3(x: 0, y: 1, z: 0)
            case .portraitUpsideDown: Vector3(x: 0, y: -1, z: 0)
            case .landscapeLeft: Vector3(x: 1, y: 0, z: 0)
            case .landscapeRight: Vector3(x: -1, y: 0, z: 0)
            }
        #expect(first.dot(expected) > 9.8)
    }

    @Test func forceScalesTheShake() {
        func peak(_ force: Double) -> Double {
            synthesize {
                $0.force = force
                $0.background = .still
                $0.noise = 0
            }.map { ($0.acceleration - Vector3(x: 0, y: TraceSynthesizer.gravity, z: 0)).length }.max() ?? 0
        }
        let vigorous = peak(1)
        #expect(vigorous > 0.8 * TraceSynthesizer.vigorousPeak && vigorous < 1.5 * TraceSynthesizer.vigorousPeak)
        #expect(peak(0.5) < 0.65 * vigorous && peak(0.5) > 0.35 * vigorous)
    }

    @Test func theShakeLiesWhereTheOptionsPutIt() {
        var options = SynthesisOptions()
        options.repeatCount = 2
        options.pause = 1
        // 1.5 s of shaking is twelve whole strokes of 0.125 s.
        options.iteration = 0.25
        options.background = .still
        options.noise = 0
        let synthesizer = TraceSynthesizer(options: options)
        #expect(synthesizer.motionIntervals.map(\.start) == [2.0, 4.5])
        let moving = synthesizer.samples().filter {
            abs($0.acceleration.length - TraceSynthesizer.gravity) > 1
        }
        #expect(moving.allSatisfy { ($0.time >= 2.0 && $0.time <= 3.5) || ($0.time >= 4.5 && $0.time <= 6.0) })
        #expect(moving.contains { $0.time > 4.5 })
    }

    /// A shake from rest moves the device back and forth about where it started, as a hand does: along the
    /// shake, the velocity (the linear acceleration integrated) starts and ends at zero and reverses at every
    /// turning point, at least 2 × back-and-forths − 1 times, and the device ends where it started. Gravity is
    /// held where the wrist's tilt does not turn it (the tilt is about the screen's normal for a shake across the
    /// screen, about x for one along y), so the reading less the first one is the linear acceleration.
    @Test(arguments: SynthesisOptions.Direction.allCases)
    func aShakeGoesBackAndForthAboutWhereItStarted(direction: SynthesisOptions.Direction) {
        let samples = synthesize {
            $0.direction = direction
            $0.orientation = direction == .vertical ? .landscapeLeft : .faceUp
            $0.duration = 1.2
            $0.iteration = 0.22
            $0.background = .still
            $0.noise = 0
            $0.rate = 1000
        }
        // A twist moves the sensor along x (tangentially) by the angle times its radius.
        let axis =
            direction == .vertical
            ? Vector3(x: 0, y: 1, z: 0)
            : direction == .both ? Vector3(x: 0.7071, y: 0.7071, z: 0) : Vector3(x: 1, y: 0, z: 0)
        let motion = Motion(samples, along: axis)
        let backAndForths = 11.0 / 2  // 1.2 s is eleven strokes of 0.11 s
        #expect(Double(motion.reversals) >= 2 * backAndForths - 1, "\(motion.reversals) reversals")
        #expect(abs(motion.velocities.last!) < 0.01, "ends at rest: \(motion.velocities.last!) m/s")
        #expect(motion.velocities.map(abs).max()! > 0.3, "it moves")
        // Old synthesizer: 0.9 m one way. Within a few millimetres of the start (or, for the twist, of its angle).
        #expect(
            abs(motion.positions.last!) < 0.05 * motion.positions.map(abs).max()!, "ends at \(motion.positions.last!) m"
        )
        #expect(abs(motion.positions.last!) < 0.005, "ends at \(motion.positions.last!) m")
    }

    /// `duration` gives whole strokes (half back-and-forths): a back-and-forth and a half is three strokes, one way
    /// from rest, the other way past the start, and back to rest where it started: the velocity has three runs of
    /// one sign, reversing twice.
    @Test(arguments: [0.3, 0.33, 0.36])
    func aBackAndForthAndAHalfIsThreeStrokes(duration: Double) {
        var options = SynthesisOptions()
        options.iteration = 0.22
        options.duration = duration
        #expect(options.shakeStrokes == 3)
        #expect(abs(options.motionLength - 0.33) < 1e-12)
        let samples = synthesize {
            $0.iteration = 0.22
            $0.duration = duration
            $0.orientation = .faceUp
            $0.background = .still
            $0.noise = 0
            $0.rate = 1000
        }
        let motion = Motion(samples, along: Vector3(x: 1, y: 0, z: 0))
        #expect(motion.runs == [-1, 1, -1], "\(motion.runs)")
        #expect(abs(motion.velocities.last!) < 0.01)
        #expect(abs(motion.positions.last!) < 0.003, "ends at \(motion.positions.last!) m")
    }

    /// `--force` is the acceleration at the turning points, 4 g (40 m/s²) for a vigorous shake: where the device
    /// turns round (the velocity changes sign) in the middle strokes, the reading is about 40 × force m/s² (each
    /// back-and-forth's tempo varies by about 8%, and a quicker one turns round harder: the median over five
    /// shakes is within 4%, each turning point within 30%).
    @Test(arguments: [0.7, 1.0])
    func theMiddleStrokesTurnRoundAtTheForce(force: Double) {
        var peaks: [Double] = []
        for seed in 1...5 {
            let samples = synthesize {
                $0.force = force
                $0.duration = 1.2
                $0.orientation = .faceUp
                $0.background = .still
                $0.noise = 0
                $0.rate = 1000
                $0.seed = UInt64(seed)
            }
            let motion = Motion(samples, along: Vector3(x: 1, y: 0, z: 0))
            #expect(motion.turningAccelerations.count >= 8, "\(motion.turningAccelerations.count) turning points")
            // The first and the last turning point end and start a stroke from and to rest.
            peaks += motion.turningAccelerations.dropFirst().dropLast().map(abs)
        }
        let expected = TraceSynthesizer.vigorousPeak * force
        let median = peaks.sorted()[peaks.count / 2]
        #expect(abs(median - expected) < 0.04 * expected, "median \(median) m/s², expected \(expected)")
        #expect(peaks.allSatisfy { abs($0 - expected) < 0.3 * expected }, "\(peaks)")
    }

    @Test func turningOverLeavesTheDeviceUpsideDown() {
        let samples = synthesize {
            $0.motion = .turnOver
            $0.orientation = .faceUp
            $0.background = .still
            $0.noise = 0
        }
        #expect(samples.first!.acceleration.z > 9.8)
        #expect(samples.last!.acceleration.z < -9.8)
    }

    /// A deliberate move starts and ends at rest: the device reads one g before and after, turned by `turn`
    /// degrees about the axis the move says (the left-right axis for a lift), and the move's acceleration
    /// scales with the force.
    @Test(arguments: [-60.0, 20, 45])
    func aMoveEndsAtRestTurned(turn: Double) {
        func move(force: Double) -> [Sample] {
            synthesize {
                $0.motion = .move
                $0.move = .up
                $0.turn = turn
                $0.duration = 0.5
                $0.force = force
                $0.background = .still
                $0.noise = 0
            }
        }
        let samples = move(force: 0.5)
        let first = samples.first!.acceleration
        let last = samples.last!.acceleration
        #expect(abs(first.length - TraceSynthesizer.gravity) < 1e-9)
        #expect(abs(last.length - TraceSynthesizer.gravity) < 1e-9)
        let angle = acos(first.dot(last) / (first.length * last.length)) * 180 / .pi
        #expect(abs(angle - abs(turn)) < 1e-6)
        // Portrait: up is y, the left-right axis x, so the turn keeps x at zero.
        #expect(abs(last.x) < 1e-9)
        func peak(_ samples: [Sample]) -> Double {
            samples.map { abs($0.acceleration.length - TraceSynthesizer.gravity) }.max() ?? 0
        }
        #expect(peak(move(force: 1)) > 1.6 * peak(samples))
    }

    /// A sensor of ±2 g clips each axis at its full scale, and one of coarse resolution reads whole counts; a
    /// vigorous shake (about 4 g at its turning points) goes past that range.
    @Test func theSensorClipsAndCounts() {
        func vigorous(range: Double, resolution: Double) -> [Sample] {
            synthesize {
                $0.force = 1
                $0.range = range
                $0.resolution = resolution
            }
        }
        let components = { (samples: [Sample]) in
            samples.flatMap { [$0.acceleration.x, $0.acceleration.y, $0.acceleration.z] }
        }
        let limit = 2 * TraceSynthesizer.gravity
        #expect(components(vigorous(range: 0, resolution: 0)).contains { abs($0) > 1.5 * limit })
        let clipped = components(vigorous(range: 2, resolution: 0))
        #expect(clipped.allSatisfy { abs($0) <= limit + 1e-9 })
        #expect(clipped.filter { abs($0) == limit }.count > 20)
        let counted = components(vigorous(range: 0, resolution: 0.153))
        #expect(counted.allSatisfy { abs($0 / 0.153 - ($0 / 0.153).rounded()) < 1e-6 })
        #expect(Set(counted).count > 50)
        var options = SynthesisOptions()
        options.range = 0.2
        do { try options.validate() } catch { #expect(error.option == "range") }
        options = SynthesisOptions()
        options.resolution = -1
        do { try options.validate() } catch { #expect(error.option == "resolution") }
    }

    /// A move with a back-swing (`backSwing`): the device first goes against the move, with the back-swing's
    /// share of the stop's peak, then the move's way, and it ends at rest where it went: the velocity, the
    /// acceleration integrated, is back to zero, and the device moved the move's way overall.
    @Test(arguments: [0.3, 0.6])
    func aMoveWithABackSwingGoesBackFirstAndEndsAtRest(backSwing: Double) {
        let samples = synthesize {
            $0.motion = .move
            $0.move = .left
            $0.turn = 0
            $0.backSwing = backSwing
            $0.duration = 0.6
            $0.force = 0.7
            $0.background = .still
            $0.noise = 0
        }
        let gravity = samples.first!.acceleration
        // Portrait: left is -x.
        var velocity = 0.0
        var position = 0.0
        var lowest = 0.0
        var highest = 0.0
        var backPeak = 0.0
        var previous = samples.first!.time
        for sample in samples {
            let dt = sample.time - previous
            previous = sample.time
            let along = -(sample.acceleration - gravity).x
            velocity += along * dt
            position += velocity * dt
            lowest = min(lowest, velocity)
            highest = max(highest, velocity)
            if sample.time < 2 + 0.3 * 0.6 { backPeak = max(backPeak, -along) }
        }
        let peak = TraceSynthesizer.vigorousPeak * 0.7
        #expect(abs(backPeak - backSwing * peak) < 0.02 * peak, "back-swing peak \(backPeak)")
        #expect(lowest < -0.1, "the device first goes back")
        #expect(abs(velocity) < 0.02 * highest, "ends at rest: \(velocity) m/s")
        #expect(position > 0, "ends the move's way: \(position) m")
        var invalid = SynthesisOptions()
        invalid.backSwing = 1.5
        #expect(throws: SynthesisOptions.Invalid.self) { try invalid.validate() }
    }

    @Test func invalidOptionsNameTheOption() {
        var options = SynthesisOptions()
        options.force = 1.5
        #expect(throws: SynthesisOptions.Invalid.self) { try options.validate() }
        do { try options.validate() } catch { #expect(error.description.hasPrefix("--force")) }
        options = SynthesisOptions()
        options.rate = 0
        do { try options.validate() } catch { #expect(error.option == "rate") }
        options = SynthesisOptions()
        options.duration = .nan
        do { try options.validate() } catch { #expect(error.option == "duration") }
        options = SynthesisOptions()
        options.turn = 200
        #expect(throws: SynthesisOptions.Invalid.self) { try options.validate() }
        do { try options.validate() } catch { #expect(error.option == "turn") }
    }
}

/// The motion along `axis`, from a trace whose gravity does not turn: the reading less the first one, integrated
/// (trapezoids) to a velocity and a position.
private struct Motion {
    var velocities: [Double] = []
    var positions: [Double] = []
    /// The signs of the velocity's runs, beyond a dead band of 2 cm/s.
    var runs: [Int] = []
    /// The acceleration where the velocity changes sign (the turning points).
    var turningAccelerations: [Double] = []
    var reversals: Int { max(0, runs.count - 1) }

    init(_ samples: [Sample], along axis: Vector3) {
        let rest = samples[0].acceleration
        var velocity = 0.0
        var position = 0.0
        var previous = samples[0]
        for sample in samples.dropFirst() {
            let dt = sample.time - previous.time
            let before = (previous.acceleration - rest).dot(axis)
            let now = (sample.acceleration - rest).dot(axis)
            let next = velocity + (before + now) / 2 * dt
            position += (velocity + next) / 2 * dt
            if velocity != 0 && next != 0 && (velocity < 0) != (next < 0) { turningAccelerations.append(now) }
            velocity = next
            velocities.append(velocity)
            positions.append(position)
            let sign = velocity > 0.02 ? 1 : velocity < -0.02 ? -1 : 0
            if sign != 0 && runs.last != sign { runs.append(sign) }
            previous = sample
        }
    }
}
