// SPDX-License-Identifier: Apache-2.0
import NumberFormat

/// The measuring range to ask an accelerometer for, as `sensor.range` names it: `auto`, `keep`, or a number of
/// g. Many chips start at ±2 g, and a vigorous shake reaches 3-4 g at its turns: at ±2 g its peaks are clipped.
public enum SensorRange: Sendable, Hashable, CustomStringConvertible {
    /// The smallest range of at least ``autoMinimum`` the sensor offers.
    case automatic
    /// Whatever range the sensor is at.
    case keep
    /// The smallest range of at least this many g the sensor offers.
    case atLeast(Double)

    /// What `auto` asks for, g: a vigorous shake's turns with some margin.
    public static let autoMinimum = 4.0
    /// The numbers `sensor.range` allows, g.
    public static let allowed: ClosedRange<Double> = 1...1000
    /// Standard gravity, m/s², by which the kernel's scales (m/s² a count) become g.
    public static let standardGravity = 9.80665

    /// Parses `auto`, `keep` (any case) or a number of g within ``allowed``; nil for anything else.
    public init?(parsing text: String) {
        switch text.lowercased() {
        case "auto": self = .automatic
        case "keep": self = .keep
        default:
            guard let number = Double(text), number.isFinite, Self.allowed.contains(number) else { return nil }
            self = .atLeast(number)
        }
    }

    /// As a file writes it: `auto`, `keep`, `8`.
    public var description: String {
        switch self {
        case .automatic: "auto"
        case .keep: "keep"
        case .atLeast(let g): Self.format(g)
        }
    }

    /// The least range asked for, g; nil for `keep`.
    public var minimum: Double? {
        switch self {
        case .automatic: Self.autoMinimum
        case .keep: nil
        case .atLeast(let g): g
        }
    }

    /// One scale a sensor offers: its text as the kernel lists it (written back as it is) and its value, m/s² a
    /// count.
    public struct Scale: Sendable, Hashable {
        public var text: String
        public var value: Double

        public init(text: String, value: Double) {
            self.text = text
            self.value = value
        }

        /// The range this scale gives a signed value of `bits` bits, g: the largest count times the scale.
        public func range(bits: Int) -> Double {
            value * Double(Int64(1) << Int64(bits - 1)) / SensorRange.standardGravity
        }
    }

    /// The scales an `in_accel_scale_available` attribute lists (`0.009582 0.019163 0.038326`), smallest first;
    /// nil when it lists none that is a positive finite number, or something that is no number at all.
    public static func scales(parsing text: String) -> [Scale]? {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" })
        var scales: [Scale] = []
        for word in words {
            guard let value = Double(word), value.isFinite, value > 0 else { return nil }
            scales.append(Scale(text: String(word), value: value))
        }
        return scales.isEmpty ? nil : scales.sorted { $0.value < $1.value }
    }

    /// What to do with a sensor's range.
    public enum Decision: Sendable, Hashable {
        /// Write `scale` to the scale attribute: the range becomes `range` g (from `from` g). `widest` when no
        /// scale reaches what was asked for and the widest offered was taken.
        case set(scale: Scale, range: Double, from: Double, widest: Bool)
        /// Leave the scale as it is, for the reason given (for the log); `range` is the sensor's, g, when known.
        case leave(reason: String, range: Double?)
    }

    /// Chooses the scale for `request`, pure.
    /// - Parameters:
    ///   - available: what `in_accel_scale_available` says (its text), nil when the sensor has no such attribute.
    ///   - current: what `in_accel_scale` says, nil when it cannot be read.
    ///   - bits: the bits of the accel channels' values (their scan type's `realbits`), nil when not known.
    public static func choose(
        _ request: SensorRange, available: String?, current: String?, bits: Int?
    ) -> Decision {
        let currentScale = current.flatMap { Double($0.trimmingWhitespace()) }.flatMap {
            $0.isFinite && $0 > 0 ? $0 : nil
        }
        let validBits = bits.flatMap { (2...64).contains($0) ? $0 : nil }
        let currentRange = currentScale.flatMap { scale in
            validBits.map { Scale(text: "", value: scale).range(bits: $0) }
        }
        guard let minimum = request.minimum else { return .leave(reason: "sensor.range is keep", range: currentRange) }
        guard let available else {
            return .leave(reason: "the sensor offers no other range (no in_accel_scale_available)", range: currentRange)
        }
        guard let scales = Self.scales(parsing: available.trimmingWhitespace()) else {
            return .leave(
                reason: "in_accel_scale_available is not a list of scales: '\(available)'", range: currentRange)
        }
        guard let currentScale else {
            return .leave(reason: "in_accel_scale is not a usable number: '\(current ?? "")'", range: nil)
        }
        guard let validBits, let currentRange else {
            return .leave(reason: "the channels' bits are not known, so neither are the ranges in g", range: nil)
        }
        let reaching = scales.first { $0.range(bits: validBits) >= minimum * (1 - tolerance) }
        let chosen = reaching ?? scales.last!
        if abs(chosen.value - currentScale) <= tolerance * currentScale {
            return .leave(
                reason: reaching == nil ? "the sensor is at the widest range it offers" : "the sensor is at that range",
                range: currentRange)
        }
        return .set(scale: chosen, range: chosen.range(bits: validBits), from: currentRange, widest: reaching == nil)
    }

    /// Relative difference under which two scales (or a range and what is asked for) are the same: the kernel
    /// lists scales rounded to a few digits (±2 g on a 12-bit part is 0.009582 × 2048 / g = 2.0001 g).
    static let tolerance = 0.005

    /// A number of g for the log: `4`, `2.5`.
    public static func format(_ g: Double) -> String { DecimalText.format(g, decimals: 2) }
}
