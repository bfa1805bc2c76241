// SPDX-License-Identifier: Apache-2.0
import NumberFormat

/// The detector's parameters. Start from a ``Sensitivity`` preset and override what you need.
///
/// Every time is in seconds, every acceleration in m/s² and every impulse in m/s, so the same settings work at
/// any sample rate. `docs/detection.md` explains what each one does to detection.
public struct DetectorSettings: Sendable, Hashable {
    /// Named trade-offs between catching gentle shakes and ignoring daily life.
    public enum Sensitivity: String, Sendable, Hashable, CaseIterable {
        /// Catches gentler shakes; fires more readily on vigorous everyday motion.
        case light
        /// The default: catches deliberate shakes, stays silent through daily life.
        case medium
        /// Needs a vigorous, sustained shake; the fewest false shakes.
        case hard
    }

    /// Gravity-free acceleration, in m/s², that a stroke of the hand must exceed, and that the opposite stroke
    /// must exceed against it, for a reversal to count. Lower catches gentler shakes.
    public var threshold: Double
    /// Good reversals (back-and-forth turns) a shake needs in order to end as valid.
    public var reversals: Int
    /// Seconds of shaking after `began` past which the motion is not a gesture (`cancelled`, `too_long`).
    public var tooLong: Double
    /// Seconds without motion that end a shake.
    public var quietTime: Double
    /// Seconds after a shake ends or is cancelled during which no new shake begins.
    public var refractory: Double
    /// After `too_long`, or motion that keeps going without oscillating: seconds of calm needed before a new
    /// shake can begin.
    public var calmTime: Double
    /// The longest time, in seconds, between the starts of two strokes of one shake (half the slowest
    /// back-and-forth period accepted).
    public var maxHalfPeriod: Double
    /// The velocity, in m/s, that a stroke must give the device for its reversal to count: a hand moving the
    /// device, not a knock or a footstep ringing through it.
    public var minImpulse: Double
    /// `began` is reported as soon as the first stroke has given the device this velocity, in m/s (or at the
    /// first reversal, whichever comes first).
    public var beganImpulse: Double
    /// Consecutive opposite strokes must be this alike in strength (weaker over stronger peak, 0...1): a
    /// hand shakes both ways; a push and its stop, or an impact and its rebound, are lopsided.
    public var symmetry: Double
    /// The share of a shake's time that the motion must stay above half the threshold (0...1): shaking is
    /// sustained; jumps and footsteps are spikes with lulls between.
    public var minDuty: Double
    /// How irregular the strokes' timing may be (the coefficient of variation of the times between
    /// reversals): a shake is rhythmic; stairs and stumbles are not.
    public var maxIrregularity: Double
    /// How much of a downward acceleration counts, as a share of one g that is discounted first (0...1). A body
    /// in free fall (jumping, running, falling) reads zero: its acceleration points down by one g at most, so
    /// with 1 only what a hand adds beyond free fall counts; lower values let gentler vertical shakes through.
    public var freeFallAllowance: Double
    /// Time constant, in seconds, of the gravity estimate.
    public var gravityTimeConstant: Double
    /// A gap between samples longer than this, in seconds, interrupts the stream.
    public var maxGap: Double

    public init(sensitivity: Sensitivity = .medium) {
        self = Self.preset(sensitivity)
    }

    /// The settings behind a sensitivity preset.
    public static func preset(_ sensitivity: Sensitivity) -> DetectorSettings {
        var settings = DetectorSettings(base: ())
        switch sensitivity {
        case .light:
            settings.threshold = 9
            settings.minImpulse = 0.5
            settings.minDuty = 0.5
            settings.maxIrregularity = 0.6
            settings.symmetry = 0.3
        case .medium:
            break
        case .hard:
            settings.threshold = 14
            settings.reversals = 3
            settings.minImpulse = 1
            settings.minDuty = 0.65
            settings.maxIrregularity = 0.45
        }
        return settings
    }

    /// The medium preset.
    private init(base: Void) {
        threshold = 12
        reversals = 2
        tooLong = 4
        quietTime = 0.3
        refractory = 0.75
        calmTime = 1
        maxHalfPeriod = 0.6
        minImpulse = 0.7
        beganImpulse = 1
        symmetry = 0.4
        minDuty = 0.6
        maxIrregularity = 0.5
        freeFallAllowance = 1
        gravityTimeConstant = 0.6
        maxGap = 0.5
    }

    /// A parameter, for validation messages and configuration keys.
    public enum Parameter: String, Sendable, CaseIterable {
        case threshold, reversals
        case tooLong = "too_long"
        case quietTime = "quiet_time"
        case refractory
        case calmTime = "calm_time"
        case maxHalfPeriod = "max_half_period"
        case minImpulse = "min_impulse"
        case beganImpulse = "began_impulse"
        case symmetry
        case minDuty = "min_duty"
        case maxIrregularity = "max_irregularity"
        case freeFallAllowance = "free_fall_allowance"
        case gravityTimeConstant = "gravity_time_constant"
        case maxGap = "max_gap"

        /// The values the detector accepts for this parameter.
        public var allowed: ClosedRange<Double> {
            switch self {
            case .threshold: 2...200
            case .reversals: 1...50
            case .tooLong: 0.5...60
            case .quietTime: 0.05...5
            case .refractory: 0...60
            case .calmTime: 0...60
            case .maxHalfPeriod: 0.05...2
            case .minImpulse: 0...20
            case .beganImpulse: 0.05...20
            case .symmetry: 0...1
            case .minDuty: 0...1
            case .maxIrregularity: 0...10
            case .freeFallAllowance: 0...1
            case .gravityTimeConstant: 0.05...10
            case .maxGap: 0.02...60
            }
        }

        /// Whether the parameter is a whole number.
        public var isCount: Bool { self == .reversals }
    }

    /// A parameter's value, by name.
    public subscript(parameter: Parameter) -> Double {
        get {
            switch parameter {
            case .threshold: threshold
            case .reversals: Double(reversals)
            case .tooLong: tooLong
            case .quietTime: quietTime
            case .refractory: refractory
            case .calmTime: calmTime
            case .maxHalfPeriod: maxHalfPeriod
            case .minImpulse: minImpulse
            case .beganImpulse: beganImpulse
            case .symmetry: symmetry
            case .minDuty: minDuty
            case .maxIrregularity: maxIrregularity
            case .freeFallAllowance: freeFallAllowance
            case .gravityTimeConstant: gravityTimeConstant
            case .maxGap: maxGap
            }
        }
        set {
            switch parameter {
            case .threshold: threshold = newValue
            case .reversals: reversals = Self.count(newValue)
            case .tooLong: tooLong = newValue
            case .quietTime: quietTime = newValue
            case .refractory: refractory = newValue
            case .calmTime: calmTime = newValue
            case .maxHalfPeriod: maxHalfPeriod = newValue
            case .minImpulse: minImpulse = newValue
            case .beganImpulse: beganImpulse = newValue
            case .symmetry: symmetry = newValue
            case .minDuty: minDuty = newValue
            case .maxIrregularity: maxIrregularity = newValue
            case .freeFallAllowance: freeFallAllowance = newValue
            case .gravityTimeConstant: gravityTimeConstant = newValue
            case .maxGap: maxGap = newValue
            }
        }
    }

    /// A count from a number; one that is not a usable whole number becomes -1, which validation rejects.
    private static func count(_ value: Double) -> Int {
        value.isFinite && abs(value) < 1e9 ? Int(value.rounded()) : -1
    }

    /// A setting outside what the detector accepts.
    public struct InvalidSetting: Error, Sendable, Hashable, CustomStringConvertible {
        public var parameter: Parameter
        public var value: Double
        public var reason: String

        public var description: String {
            "\(parameter.rawValue) = \(DecimalText.format(value, decimals: 6)): \(reason)"
        }
    }

    /// Checks every parameter against its allowed range and the parameters against each other.
    /// - Throws: ``InvalidSetting`` naming the first parameter that is out of range.
    public func validate() throws(InvalidSetting) {
        for parameter in Parameter.allCases {
            let value = self[parameter]
            let range = parameter.allowed
            guard value.isFinite, range.contains(value) else {
                throw InvalidSetting(parameter: parameter, value: value, reason: "must be in \(parameter.allowedText)")
            }
        }
        if quietTime >= tooLong {
            throw InvalidSetting(
                parameter: .quietTime, value: quietTime, reason: "must be shorter than too_long (\(tooLong))")
        }
    }
}

extension DetectorSettings.Parameter {
    /// The allowed range as a reader would write it: `1...50`, `0.05...5`.
    public var allowedText: String {
        let format = { (value: Double) in DecimalText.format(value, decimals: 3) }
        return "\(format(allowed.lowerBound))...\(format(allowed.upperBound))"
    }
}
