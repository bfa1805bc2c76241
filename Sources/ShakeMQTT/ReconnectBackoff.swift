// SPDX-License-Identifier: Apache-2.0
/// How long to wait before the next connection attempt, pure: doubling from `initial` up to `maximum`, with
/// jitter so that a fleet of devices losing one broker does not come back in step, and a longer first wait after
/// the broker refused us (wrong credentials or certificate: trying again at once only fills its log).
public struct ReconnectBackoff: Sendable, Hashable {
    public var initial: Double
    public var maximum: Double
    /// The first wait after a refusal.
    public var afterRefusal: Double
    public private(set) var attempts = 0

    public init(initial: Double = 0.5, maximum: Double = 60, afterRefusal: Double = 5) {
        self.initial = initial
        self.maximum = maximum
        self.afterRefusal = afterRefusal
    }

    /// The wait, in seconds, before the next attempt after a failed one.
    /// - Parameters:
    ///   - refused: the broker answered and refused (CONNACK with an error, a TLS failure).
    ///   - jitter: a number in 0..<1 (random in the shell), which takes off up to a quarter of the wait.
    public mutating func next(refused: Bool, jitter: Double) -> Double {
        let base = refused ? max(initial, afterRefusal) : initial
        let exponent = Double(min(attempts, 30))
        attempts += 1
        let wait = min(maximum, base * pow2(exponent))
        return wait * (1 - 0.25 * min(max(jitter, 0), 1))
    }

    /// A connection was accepted: the next failure starts from the beginning.
    public mutating func reset() {
        attempts = 0
    }

    private func pow2(_ exponent: Double) -> Double {
        var result = 1.0
        var left = Int(exponent)
        while left > 0 {
            result *= 2
            left -= 1
        }
        return result
    }
}
