// SPDX-License-Identifier: Apache-2.0
public import ShakeDetection

#if canImport(Glibc)
    import Glibc
#endif

/// Writes synthetic accelerometer traces: a motion inside a background, as a device's accelerometer reports it
/// (gravity included, in the device's frame, with sensor noise and sampling jitter).
///
/// The model is physical, not a lookup of recorded data. A shake is where the device is (``ShakePath``): strokes
/// one way and back about where it started, from rest to rest, each back-and-forth with its own period (±8%) and
/// each turning point its own strength (the envelope: the acceleration there), with a little motion across the main
/// axis and a wrist that tilts as it shakes, so gravity leaks into the axes. What the sensor reads is the second
/// derivative of that position, exact, plus gravity.
public struct TraceSynthesizer: Sendable {
    public var options: SynthesisOptions

    /// Standard gravity, m/s².
    public static let gravity = 9.80665
    /// The acceleration at the turning points of a vigorous shake (force 1), m/s².
    public static let vigorousPeak = 40.0

    public init(options: SynthesisOptions) {
        self.options = options
    }

    /// Generates the trace.
    public func samples() -> [Sample] {
        var random = SeededRandom(seed: options.seed)
        let model = Model(options: options, random: &random)
        let count = Int((model.totalLength * options.rate).rounded(.down)) + 1
        var samples: [Sample] = []
        samples.reserveCapacity(count)
        let interval = 1 / options.rate
        var elapsed = 0.0
        while elapsed <= model.totalLength + 1e-9 {
            // A repeated sample draws its chance only when repeats are asked for, so that other traces stay as
            // they were for the same seed.
            if options.repeats > 0, let last = samples.last, random.uniform(0...1) < options.repeats {
                samples.append(Sample(time: options.start + elapsed, acceleration: last.acceleration))
                let wobble = options.jitter > 0 ? random.uniform(-options.jitter...options.jitter) : 0
                elapsed += interval * (1 + wobble)
                continue
            }
            var reading = model.acceleration(at: elapsed)
            if options.noise > 0 {
                reading =
                    reading
                    + Vector3(
                        x: random.gaussian(deviation: options.noise),
                        y: random.gaussian(deviation: options.noise),
                        z: random.gaussian(deviation: options.noise))
            }
            samples.append(Sample(time: options.start + elapsed, acceleration: sensor(reading)))
            let wobble = options.jitter > 0 ? random.uniform(-options.jitter...options.jitter) : 0
            elapsed += interval * (1 + wobble)
        }
        return samples
    }

    /// What a sensor of the options' resolution and range reads of `reading`: whole counts, clipped at full scale.
    private func sensor(_ reading: Vector3) -> Vector3 {
        var reading = reading
        if options.resolution > 0 {
            let step = options.resolution
            reading = Vector3(
                x: (reading.x / step).rounded() * step, y: (reading.y / step).rounded() * step,
                z: (reading.z / step).rounded() * step)
        }
        if options.range > 0 {
            let limit = options.range * Self.gravity
            reading = Vector3(
                x: min(limit, max(-limit, reading.x)), y: min(limit, max(-limit, reading.y)),
                z: min(limit, max(-limit, reading.z)))
        }
        return reading
    }

    /// Where the motions lie in the trace: `(start, end)` in seconds on the trace's clock.
    public var motionIntervals: [(start: Double, end: Double)] {
        (0..<options.repeatCount).map { index in
            let start = options.start + options.before + Double(index) * (options.motionLength + options.pause)
            return (start, start + options.motionLength)
        }
    }
}

extension TraceSynthesizer {
    /// The continuous motion, sampled by ``samples()``.
    fileprivate struct Model {
        let options: SynthesisOptions
        let up: Vector3
        let forward: Vector3
        let side: Vector3
        let starts: [Double]
        let shakes: [ShakePath]
        let backgroundPhases: [Double]
        let stepFrequency: Double
        let totalLength: Double

        init(options: SynthesisOptions, random: inout SeededRandom) {
            self.options = options
            (up, forward) = Self.frame(options.orientation)
            side = Self.cross(up, forward)
            let motion = options.motionLength
            starts = (0..<options.repeatCount).map {
                options.before + Double($0) * (motion + options.pause)
            }
            totalLength =
                options.before + options.after + Double(options.repeatCount) * motion
                + Double(options.repeatCount - 1) * options.pause
            var shakes: [ShakePath] = []
            if options.motion == .shake {
                let count = options.shakeStrokes
                let direction = options.direction
                for _ in starts {
                    // Each back-and-forth (two strokes) takes its own time, within about 8% of `iteration`; the
                    // strokes are then scaled to fill the shake's length exactly.
                    let factors = (0..<(count + 1) / 2).map { _ in min(1.3, max(0.7, 1 + 0.08 * random.gaussian())) }
                    let total = (0..<count).reduce(0.0) { $0 + factors[$1 / 2] }
                    let lengths = (0..<count).map { factors[$0 / 2] * motion / total }
                    var reached = 0.0
                    let turningTimes = lengths.dropLast().map { length -> Double in
                        reached += length
                        return reached
                    }
                    let strengths = turningTimes.map { time in
                        TraceSynthesizer.vigorousPeak * options.force
                            * Self.envelope(
                                options.interpolation, options.autoreverse, at: time / motion, random: &random)
                    }
                    // The amplitude that gives each turning point the strength's acceleration at the shake's mean
                    // tempo `rate`: metres, or for a twist, radians (the sensor is `twistRadius` from the axis; at
                    // most 40°). The strokes keep about the same speed whatever their tempo, so a quicker
                    // back-and-forth turns round harder (its acceleration in proportion to its rate), a slower one
                    // softer.
                    let rate = 2 * .pi / options.iteration
                    let amplitudes = zip(strengths, ShakePath.turningRates(lengths)).map { strength, turningRate in
                        let amplitude = strength / (ShakePath.shapePeak * rate * turningRate)
                        return direction == .rotate ? min(0.7, amplitude / Self.twistRadius) : amplitude
                    }
                    shakes.append(ShakePath(lengths: lengths, amplitudes: amplitudes))
                }
            }
            self.shakes = shakes
            backgroundPhases = (0..<8).map { _ in random.uniform(0...(2 * .pi)) }
            stepFrequency = random.uniform(1.7...2.1)
        }

        /// The strength envelope at `u` (0...1 through the shake).
        static func envelope(
            _ interpolation: SynthesisOptions.Interpolation, _ autoreverse: Bool, at u: Double,
            random: inout SeededRandom
        ) -> Double {
            let u = autoreverse ? 1 - abs(2 * u - 1) : u
            let rise = (exp(3 * u) - 1) / (exp(3) - 1)
            switch interpolation {
            case .none: return 1
            case .linearUp: return 0.3 + 0.7 * u
            case .linearDown: return 1 - 0.7 * u
            case .expUp: return 0.25 + 0.75 * rise
            case .expDown: return 1 - 0.75 * rise
            case .random: return random.uniform(0.55...1)
            }
        }

        /// The device-frame directions of world-up (what gravity reads at rest) and of walking forward.
        static func frame(_ orientation: SynthesisOptions.Orientation) -> (up: Vector3, forward: Vector3) {
            switch orientation {
            case .faceUp: (Vector3(x: 0, y: 0, z: 1), Vector3(x: 0, y: 1, z: 0))
            case .faceDown: (Vector3(x: 0, y: 0, z: -1), Vector3(x: 0, y: 1, z: 0))
            case .portrait: (Vector3(x: 0, y: 1, z: 0), Vector3(x: 0, y: 0, z: -1))
            case .portraitUpsideDown: (Vector3(x: 0, y: -1, z: 0), Vector3(x: 0, y: 0, z: -1))
            case .landscapeLeft: (Vector3(x: 1, y: 0, z: 0), Vector3(x: 0, y: 0, z: -1))
            case .landscapeRight: (Vector3(x: -1, y: 0, z: 0), Vector3(x: 0, y: 0, z: -1))
            }
        }

        static func cross(_ a: Vector3, _ b: Vector3) -> Vector3 {
            Vector3(x: a.y * b.z - a.z * b.y, y: a.z * b.x - a.x * b.z, z: a.x * b.y - a.y * b.x)
        }

        /// Rotates `v` about the unit vector `axis` by `angle` radians.
        static func rotate(_ v: Vector3, about axis: Vector3, by angle: Double) -> Vector3 {
            let c = cos(angle)
            let s = sin(angle)
            return v * c + cross(axis, v) * s + axis * (axis.dot(v) * (1 - c))
        }

        /// How far a twisted device's sensor is from the axis it turns about, metres.
        static let twistRadius = 0.07

        static let xAxis = Vector3(x: 1, y: 0, z: 0)
        static let yAxis = Vector3(x: 0, y: 1, z: 0)
        static let zAxis = Vector3(x: 0, y: 0, z: 1)

        /// The reading at `t` seconds from the start of the trace, without noise.
        func acceleration(at t: Double) -> Vector3 {
            var upNow = up
            var linear = Vector3.zero
            let p = backgroundPhases
            // The thigh's swing, for a device in a pocket: amplitude (radians) and the phase of the stride (one
            // swing of the leg per two steps), forward-most at a heel strike.
            var swingAmplitude = 0.0
            var stridePhase = 0.0
            var strideRate = 0.0

            switch options.background {
            case .still:
                break
            case .hand:
                // Physiological tremor (8-12 Hz, a few hundredths of g), small slow hand movements and drift.
                linear =
                    linear
                    + Self.xAxis * (0.07 * sin(2 * .pi * 9.3 * t + p[0]) + 0.15 * sin(2 * .pi * 0.6 * t + p[1]))
                    + Self.yAxis * (0.06 * sin(2 * .pi * 10.1 * t + p[2]) + 0.12 * sin(2 * .pi * 0.45 * t + p[3]))
                    + Self.zAxis * (0.05 * sin(2 * .pi * 8.7 * t + p[4]) + 0.1 * sin(2 * .pi * 0.8 * t + p[5]))
                upNow = Self.rotate(upNow, about: Self.xAxis, by: 0.05 * sin(2 * .pi * 0.15 * t + p[6]))
                upNow = Self.rotate(upNow, about: Self.yAxis, by: 0.04 * sin(2 * .pi * 0.11 * t + p[7]))
            case .walking:
                // Heel strikes push up once per step; the body sways forward and sideways.
                let phase = 2 * .pi * stepFrequency * t + p[0]
                let strike = pow(max(0, cos(phase)), 3) - 0.212
                swingAmplitude = 0.35
                stridePhase = phase / 2
                strideRate = .pi * stepFrequency
                linear =
                    linear + up * (4.0 * strike) + forward * (1.2 * sin(phase + p[1]))
                    + side * (0.8 * sin(phase / 2 + p[2]))
                upNow = Self.rotate(upNow, about: forward, by: 0.06 * sin(phase / 2 + p[3]))
            case .jogging:
                // About 2.7 strides a second: 30% of each in flight (the reading falls to zero), then a stance
                // whose push averages out the flight, with a heel strike ringing at its start.
                let period = 1 / (stepFrequency * 1.4)
                let local = (t + p[0]).truncatingRemainder(dividingBy: period) / period
                let g = TraceSynthesizer.gravity
                var vertical = -g
                swingAmplitude = 0.6
                stridePhase = .pi * ((t + p[0]) / period - 0.3)
                strideRate = .pi / period
                if local >= 0.3 {
                    let stance = (local - 0.3) / 0.7
                    vertical = g * .pi / (2 * 0.7) * sin(.pi * stance) - g
                    let strike = (local - 0.3) * period
                    vertical += 1.5 * g * exp(-strike / 0.015) * cos(2 * .pi * 18 * strike)
                }
                let phase = 2 * .pi * local
                linear =
                    linear + up * vertical + forward * (0.5 * g * sin(phase + p[1]))
                    + side * (0.3 * g * sin(phase / 2 + p[2]))
                upNow = Self.rotate(upNow, about: forward, by: 0.15 * sin(phase / 2 + p[3]))
                upNow = Self.rotate(upNow, about: side, by: 0.1 * sin(phase + p[4]))
            case .stairs:
                // About 1.8 steps a second down stairs: a heel strike of about 1.5 g ringing at 15 Hz, and
                // the body's gentler rise and fall.
                let period = 1 / (stepFrequency * 0.95)
                let since = (t + p[0]).truncatingRemainder(dividingBy: period)
                let g = TraceSynthesizer.gravity
                swingAmplitude = 0.45
                stridePhase = .pi * (t + p[0]) / period
                strideRate = .pi / period
                let strike = 1.5 * g * exp(-since / 0.03) * cos(2 * .pi * 15 * since)
                let phase = 2 * .pi * since / period
                linear =
                    linear + up * (strike + 0.25 * g * sin(phase + p[1])) + forward * (0.3 * g * sin(phase + p[2]))
                    + side * (0.15 * g * sin(phase / 2 + p[3]))
                upNow = Self.rotate(upNow, about: forward, by: 0.08 * sin(phase / 2 + p[4]))
            }

            for (index, start) in starts.enumerated() where t >= start {
                guard t < start + options.motionLength else {
                    // A device turned over stays turned over, and one turned by a move stays turned.
                    if options.motion == .turnOver { upNow = Self.rotate(upNow, about: Self.yAxis, by: .pi) }
                    if options.motion == .move {
                        upNow = Self.rotate(upNow, about: moveTurnAxis, by: options.turn * .pi / 180)
                    }
                    continue
                }
                let (motionLinear, tiltAxis, tilt) = motion(at: t - start, repeatIndex: index)
                linear = linear + motionLinear
                if tilt != 0 { upNow = Self.rotate(upNow, about: tiltAxis, by: tilt) }
            }
            let reading = upNow * TraceSynthesizer.gravity + linear
            guard options.placement == .pocket else { return reading }
            return pocket(reading, amplitude: swingAmplitude, stridePhase: stridePhase, strideRate: strideRate)
        }

        /// What a device in a trouser pocket reads of the body's motion `reading`: the thigh swings it about the
        /// hip by `amplitude` radians once a stride (so gravity turns in its frame, more than a gravity estimate
        /// follows), the swing's own tangential and centripetal accelerations act on it, and heel strikes reach
        /// it through the leg about half as hard again as at the waist, each step its own.
        func pocket(_ reading: Vector3, amplitude: Double, stridePhase: Double, strideRate: Double) -> Vector3 {
            // The pocket is about 0.3 m below the hip; `strideRate` is how fast the stride phase advances (pi a
            // step), in radians a second.
            let radius = 0.3
            // No two steps alike: each lands 0.7 to 1.4 times as hard as the average, and swings the leg a
            // little more or less (deterministic by seed).
            let step = (stridePhase / .pi).rounded(.down)
            let hash = sin(step * 12.9898 + backgroundPhases[7] * 78.233) * 43758.5453
            let variation = hash - hash.rounded(.down)
            let amplitude = amplitude * (0.85 + 0.3 * variation)
            let angle = amplitude * cos(stridePhase)
            let rate = -amplitude * strideRate * sin(stridePhase)
            let angular = -amplitude * strideRate * strideRate * cos(stridePhase)
            let body = (reading - up * TraceSynthesizer.gravity) * (1.5 * (0.7 + 0.7 * variation))
            let turned = Self.rotate(up * TraceSynthesizer.gravity + body, about: side, by: angle)
            return turned + forward * (radius * angular) + up * (radius * rate * rate)
        }

        /// Where ``SynthesisOptions/Motion/move`` goes, in the device's frame as it was held at the start.
        var moveDirection: Vector3 {
            switch options.move {
            case .left: side
            case .right: side * -1
            case .up: up
            case .down: up * -1
            case .away: forward
            case .toward: forward * -1
            }
        }

        /// What the wrist turns the device about during a move: the forearm for a move left or right, the
        /// left-right axis for the others.
        var moveTurnAxis: Vector3 {
            switch options.move {
            case .left, .right: forward
            case .up, .down, .away, .toward: side
            }
        }

        /// The motion's own acceleration, and how it tilts the device, `local` seconds into it.
        func motion(at local: Double, repeatIndex: Int) -> (Vector3, Vector3, Double) {
            let peak = TraceSynthesizer.vigorousPeak * options.force
            switch options.motion {
            case .none:
                return (.zero, Self.zAxis, 0)
            case .shake:
                let (phase, amplitude, ramp) = shakes[repeatIndex].state(at: local)
                // The displacement along the shake (or the twist's angle), and a little motion across it: the hand's
                // path is an ellipse, out of phase with the stroke, that grows over the first stroke and shrinks
                // over the last, so the device also starts and ends at rest across it. The wrist tilts as the
                // device moves (with the velocity), so gravity leaks into the axes; it is level again at rest.
                let along = amplitude * ShakePath.shape(phase)
                func across(_ share: Double, _ lag: Double) -> Double {
                    // `share` of the stroke's acceleration at the turning points.
                    (-share * ShakePath.shapePeak * amplitude * ramp * Jet.cos(phase + lag)).acceleration
                }
                let wrist = -sin(phase.value) * ramp.value
                switch options.direction {
                case .horizontal:
                    let a = Self.xAxis * along.acceleration + Self.yAxis * across(0.15, 1) + Self.zAxis * across(0.1, 2)
                    return (a, Self.zAxis, 0.12 * options.force * wrist)
                case .vertical:
                    let a = Self.yAxis * along.acceleration + Self.xAxis * across(0.15, 1) + Self.zAxis * across(0.1, 2)
                    return (a, Self.xAxis, 0.12 * options.force * wrist)
                case .both:
                    let diagonal = Vector3(x: 0.7071, y: 0.7071, z: 0)
                    let a = diagonal * along.acceleration + Self.zAxis * across(0.12, 1)
                    return (a, Self.zAxis, 0.1 * options.force * wrist)
                case .rotate:
                    // Twisting about the screen normal with the sensor `twistRadius` from the axis: the angle
                    // oscillates about where it started; tangential acceleration along x, centripetal along -y,
                    // and gravity turning with the device.
                    let radius = Self.twistRadius
                    let a =
                        Self.xAxis * (radius * along.acceleration) + Self.yAxis * (-radius * along.rate * along.rate)
                    return (a, Self.zAxis, along.value)
                }
            case .fling:
                let along = Self.xAxis
                if local < 0.12 {
                    return (along * (peak * sin(.pi * local / 0.12)), Self.zAxis, 0)
                } else if local < 0.32 {
                    return (along * (-0.6 * peak * sin(.pi * (local - 0.12) / 0.2)), Self.zAxis, 0)
                }
                return (.zero, Self.zAxis, 0)
            case .tap:
                guard local >= 0.05 else { return (.zero, Self.zAxis, 0) }
                let s = local - 0.05
                let ring = -0.5 * peak * exp(-s / 0.012) * cos(2 * .pi * 35 * s)
                return (Self.zAxis * ring, Self.zAxis, 0)
            case .drop:
                // 4 cm of free fall (about 90 ms: the reading drops towards zero), then the impact rings out.
                let fallStart = 0.2
                let fall = (2 * 0.04 / TraceSynthesizer.gravity).squareRoot()
                if local >= fallStart && local < fallStart + fall {
                    return (up * -TraceSynthesizer.gravity, Self.zAxis, 0)
                }
                if local >= fallStart + fall {
                    let s = local - fallStart - fall
                    let impact = 1.5 * peak * exp(-s / 0.01) * cos(2 * .pi * 45 * s)
                    return (up * impact, Self.zAxis, 0)
                }
                return (.zero, Self.zAxis, 0)
            case .turnOver:
                let u = local / 2.0
                let smooth = u * u * (3 - 2 * u)
                return (.zero, Self.yAxis, .pi * smooth)
            case .tilt:
                return (.zero, Self.xAxis, 0.8 * sin(.pi * local / 2.5))
            case .move:
                // The hand speeds the device up for 55% of the move and stops it, a little harder, in the rest:
                // the two half-waves carry the same impulse, so the device ends at rest. With a back-swing, the
                // hand first draws the device back (a half-wave against the move, in the first 30% of the
                // time), and the move's first half-wave also brings that back to rest. The wrist turns the
                // device smoothly all the while; the move's acceleration turns with it, as gravity does.
                let length = options.duration
                let back = options.backSwing > 0 ? 0.3 * length : 0
                let accelerating = back + 0.55 * (length - back)
                let stopping = length - accelerating
                // Impulses (m/s) of the stop and of the back-swing; the speeding up carries both.
                let stopImpulse = peak * stopping * 2 / .pi
                let backImpulse = options.backSwing * peak * back * 2 / .pi
                let along: Double
                if local < back {
                    along = -options.backSwing * peak * sin(.pi * local / back)
                } else if local < accelerating {
                    let amplitude = (stopImpulse + backImpulse) * .pi / (2 * (accelerating - back))
                    along = amplitude * sin(.pi * (local - back) / (accelerating - back))
                } else {
                    along = -peak * sin(.pi * (local - accelerating) / stopping)
                }
                let u = min(1, local / length)
                let angle = options.turn * .pi / 180 * u * u * (3 - 2 * u)
                let axis = moveTurnAxis
                return (Self.rotate(moveDirection * along, about: axis, by: angle), axis, angle)
            case .jump:
                // Three jumps of 0.8 s: crouch, push-off, flight (reading zero), landing.
                let g = TraceSynthesizer.gravity
                let within = local.truncatingRemainder(dividingBy: 0.8)
                let vertical: Double
                switch within {
                case ..<0.15: vertical = -0.3 * g * sin(.pi * within / 0.15)
                case ..<0.35: vertical = 1.6 * g * sin(.pi * (within - 0.15) / 0.2)
                case ..<0.65: vertical = -g
                default:
                    let landing = within - 0.65
                    vertical = 2.5 * g * exp(-landing / 0.03) * cos(2 * .pi * 12 * landing) + 0.4 * g
                }
                return (up * vertical, Self.xAxis, 0.1 * sin(2 * .pi * within / 0.8))
            }
        }
    }
}
