// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
    import Glibc
#endif

/// A quantity of time with its first and second derivatives: the synthesizer describes a motion by where the
/// device is, and reads what the accelerometer sees from the second derivative, exact for the functions composed
/// (no finite difference, no noise of its own).
struct Jet: Sendable {
    var value: Double
    /// The first derivative, per second.
    var rate: Double
    /// The second derivative, per second squared.
    var acceleration: Double

    init(_ value: Double, rate: Double = 0, acceleration: Double = 0) {
        self.value = value
        self.rate = rate
        self.acceleration = acceleration
    }

    static func + (lhs: Jet, rhs: Jet) -> Jet {
        Jet(lhs.value + rhs.value, rate: lhs.rate + rhs.rate, acceleration: lhs.acceleration + rhs.acceleration)
    }

    static func + (lhs: Jet, rhs: Double) -> Jet {
        Jet(lhs.value + rhs, rate: lhs.rate, acceleration: lhs.acceleration)
    }

    static func * (lhs: Double, rhs: Jet) -> Jet {
        Jet(lhs * rhs.value, rate: lhs * rhs.rate, acceleration: lhs * rhs.acceleration)
    }

    /// The product rule, twice.
    static func * (lhs: Jet, rhs: Jet) -> Jet {
        Jet(
            lhs.value * rhs.value, rate: lhs.rate * rhs.value + lhs.value * rhs.rate,
            acceleration: lhs.acceleration * rhs.value + 2 * lhs.rate * rhs.rate + lhs.value * rhs.acceleration)
    }

    /// The chain rule, twice.
    static func cos(_ x: Jet) -> Jet {
        let c = Glibc.cos(x.value)
        let s = Glibc.sin(x.value)
        return Jet(c, rate: -s * x.rate, acceleration: -c * x.rate * x.rate - s * x.acceleration)
    }
}
