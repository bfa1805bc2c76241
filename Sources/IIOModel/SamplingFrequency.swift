// SPDX-License-Identifier: Apache-2.0
/// Choosing the rate to ask a sensor for.
public enum SamplingFrequency {
    /// The lowest rate the detector is happy with, in Hz.
    public static let minimumUseful = 50.0

    /// What a `*_available` attribute lists: discrete rates (`12.5 25 50 100`), or a range (`[1 1 400]`:
    /// minimum, step, maximum).
    public enum Available: Sendable, Hashable {
        case list([Double])
        case range(min: Double, step: Double, max: Double)

        /// Parses the attribute's text; nil when it lists nothing usable.
        public init?(parsing text: String) {
            let trimmed = text.trimmingWhitespace()
            if trimmed.hasPrefix("["), trimmed.hasSuffix("]") {
                let numbers = trimmed.dropFirst().dropLast().split(whereSeparator: { $0 == " " || $0 == "\t" })
                    .compactMap { Double($0) }
                guard numbers.count == 3, numbers[0] > 0, numbers[2] >= numbers[0], numbers.allSatisfy(\.isFinite)
                else { return nil }
                self = .range(min: numbers[0], step: numbers[1], max: numbers[2])
                return
            }
            let numbers = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," })
                .compactMap { Double($0) }.filter { $0.isFinite && $0 > 0 }
            guard !numbers.isEmpty else { return nil }
            self = .list(numbers.sorted())
        }
    }

    /// The rate to set: the requested one when nothing is listed; otherwise the listed rate nearest to it among
    /// those at or above ``minimumUseful`` (the fastest listed, if none is that fast).
    public static func choose(requested: Double, available: Available?) -> Double {
        switch available {
        case nil:
            return requested
        case .list(let rates):
            let fastEnough = rates.filter { $0 >= minimumUseful }
            guard !fastEnough.isEmpty else { return rates.max() ?? requested }
            return fastEnough.min { lhs, rhs in
                let (a, b) = (abs(lhs - requested), abs(rhs - requested))
                return a != b ? a < b : lhs > rhs
            }!
        case .range(let low, let step, let high):
            var rate = min(max(requested, low, min(minimumUseful, high)), high)
            if step > 0 {
                rate = low + ((rate - low) / step).rounded(.up) * step
                if rate > high { rate -= step }
            }
            return rate
        }
    }

    /// The lowest rate at or above `minimum`: for a reader that needs only a few samples a second. The lowest
    /// listed rate that reaches `minimum` (the fastest listed, if none does); `minimum` itself, within the range,
    /// for a range or when nothing is listed.
    public static func lowest(atLeast minimum: Double, available: Available?) -> Double {
        switch available {
        case nil:
            return minimum
        case .list(let rates):
            return rates.filter { $0 >= minimum }.min() ?? rates.max() ?? minimum
        case .range(let low, let step, let high):
            var rate = min(max(minimum, low), high)
            if step > 0 {
                rate = low + ((rate - low) / step).rounded(.up) * step
                if rate > high { rate -= step }
            }
            return rate
        }
    }
}
