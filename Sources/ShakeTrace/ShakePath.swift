// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
    import Glibc
#endif

/// Where a shaken device is: strokes one way and back, from rest to rest, about where it started.
///
/// A shake is `lengths.count` strokes (half back-and-forths). Between them the device turns round at a turning
/// point; the first stroke takes it from rest, where it started, to the first turning point, the last from the
/// last turning point back to rest where it started, so each of those goes half as far as a middle stroke, in the
/// same time. The displacement along the shake is `amplitude × shape(phase)`: the phase advances by π a stroke
/// and stands at a multiple of π at each turning point; in the first stroke it advances from π/2 (where the shape
/// is zero) to π, starting from a standstill and speeding up smoothly, and the last stroke mirrors it. So the
/// device starts and ends at rest, with no acceleration, where it started, and its velocity reverses at every
/// turning point. Everything is given with its first and second derivatives (``Jet``), so the acceleration is
/// exact.
struct ShakePath: Sendable {
    struct Stroke: Sendable {
        var start: Double
        var length: Double
        /// How fast the phase advances (radians a second) at the turning point the stroke starts from and at the one
        /// it ends at: each turning point's rate is shared by the strokes on either side, so the acceleration is
        /// continuous.
        var startRate: Double
        var endRate: Double
        /// The amplitude at the turning points the stroke starts from and ends at (the first stroke keeps its end's,
        /// the last its start's).
        var startAmplitude: Double
        var endAmplitude: Double
    }

    let strokes: [Stroke]
    /// Seconds from rest to rest.
    let length: Double

    /// `lengths`: each stroke's seconds (at least two strokes). `amplitudes`: the motion's amplitude at each turning
    /// point (one fewer than the strokes); it changes smoothly through the stroke between two.
    init(lengths: [Double], amplitudes: [Double]) {
        precondition(lengths.count >= 2, "a shake is at least one back-and-forth")
        precondition(amplitudes.count == lengths.count - 1, "an amplitude for each turning point")
        let count = lengths.count
        let rates = [0] + Self.turningRates(lengths) + [0]
        let turning = [0] + amplitudes + [0]
        var start = 0.0
        var strokes: [Stroke] = []
        for index in 0..<count {
            strokes.append(
                Stroke(
                    start: start, length: lengths[index], startRate: rates[index], endRate: rates[index + 1],
                    startAmplitude: index == 0 ? turning[1] : turning[index],
                    endAmplitude: index == count - 1 ? turning[count - 1] : turning[index + 1]))
            start += lengths[index]
        }
        self.strokes = strokes
        length = start
    }

    /// How fast the phase advances at each turning point (one fewer than the strokes), radians a second: the mean
    /// of the two strokes' own rates (π over their lengths), except next to an end stroke, which advances the phase
    /// by π/2 from (or to) a standstill and turns round at its own rate.
    static func turningRates(_ lengths: [Double]) -> [Double] {
        let count = lengths.count
        return (1..<count).map { k in
            if k == 1 { return .pi / lengths[0] }
            if k == count - 1 { return .pi / lengths[count - 1] }
            return (.pi / lengths[k - 1] + .pi / lengths[k]) / 2
        }
    }

    /// The shape of the displacement along the shake, of the phase: a cosine a little sharper at the turning points
    /// (the hand stops and snaps back), whose slope is zero at every turning point (a multiple of π) and which is
    /// zero at rest (π/2 from one). Its second derivative peaks at the turning points, at ``shapePeak`` times the
    /// amplitude times the phase's rate squared.
    static func shape(_ phase: Jet) -> Jet {
        Jet.cos(phase) + (0.15 / 9) * Jet.cos(3 * phase)
    }

    /// The second derivative of ``shape(_:)`` at a turning point, in units of the phase's rate squared.
    static let shapePeak = 1.15

    /// The phase, the amplitude and the ramp (0 at rest, rising to 1 over the first stroke and falling back to 0
    /// over the last), with their derivatives, `t` seconds from the start (clamped to the shake).
    func state(at t: Double) -> (phase: Jet, amplitude: Jet, ramp: Jet) {
        let t = min(max(t, 0), length)
        // The stroke that `t` falls in (the last whose start is at or before it).
        var low = 0
        var high = strokes.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if strokes[middle].start <= t { low = middle } else { high = middle - 1 }
        }
        let index = low
        let stroke = strokes[index]
        let h = stroke.length
        let u = min(1, (t - stroke.start) / h)
        // The phase as `start + advance × F(u)` with F(0) = 0, F(1) = 1; F' is the rate's profile through the
        // stroke (its mean is 1).
        let phaseStart: Double
        let advance: Double
        let f: (value: Double, first: Double, second: Double)
        if index == 0 {
            // From a standstill (rate and its slope zero, so no acceleration at rest) to twice the mean rate,
            // the rate at the first turning point: F' = 2(3u² − 2u³).
            phaseStart = .pi / 2
            advance = .pi / 2
            f = (2 * u * u * u - u * u * u * u, 6 * u * u - 4 * u * u * u, 12 * u - 12 * u * u)
        } else if index == strokes.count - 1 {
            // The first stroke's profile, mirrored in time.
            let v = 1 - u
            phaseStart = Double(index) * .pi
            advance = .pi / 2
            f = (1 - (2 * v * v * v - v * v * v * v), 6 * v * v - 4 * v * v * v, -(12 * v - 12 * v * v))
        } else {
            // From the rate at one turning point to the next's, linearly, with a symmetric bump that makes the mean
            // rate the stroke's own (π over its length).
            let a = stroke.startRate * h / .pi
            let b = stroke.endRate * h / .pi
            let c = 1 - (a + b) / 2
            phaseStart = Double(index) * .pi
            advance = .pi
            f = (
                a * (u - u * u / 2) + b * u * u / 2 + c * (3 * u * u - 2 * u * u * u),
                a * (1 - u) + b * u + 6 * c * u * (1 - u), b - a + c * (6 - 12 * u)
            )
        }
        let phase = Jet(
            phaseStart + advance * f.value, rate: advance * f.first / h, acceleration: advance * f.second / (h * h))
        // A smootherstep (zero slope and curvature at both ends) from one amplitude to the next, and for the ramp.
        let s = (6 * u * u * u * u * u - 15 * u * u * u * u + 10 * u * u * u)
        let s1 = 30 * u * u * (1 - u) * (1 - u)
        let s2 = 60 * u * (1 - u) * (1 - 2 * u)
        let step = Jet(s, rate: s1 / h, acceleration: s2 / (h * h))
        let change = stroke.endAmplitude - stroke.startAmplitude
        let amplitude = change * step + stroke.startAmplitude
        let ramp: Jet
        if index == 0 {
            ramp = step
        } else if index == strokes.count - 1 {
            ramp = -1 * step + 1
        } else {
            ramp = Jet(1)
        }
        return (phase, amplitude, ramp)
    }
}
