/// The detector's parameters. Start from a ``Sensitivity`` preset and override what you need.
///
/// Every time is in seconds and every acceleration in m/s², so the same settings work at any sample rate.
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

    /// Gravity-free acceleration, in m/s², that a swing of the hand must exceed to count as a stroke of a shake.
    /// Lower catches gentler shakes; higher ignores more everyday motion.
    public var threshold: Double
    /// Direction reversals (strokes after the first) that a shake needs in order to end as valid.
    public var reversals: Int
    /// Reversals after which `began` is reported. Fewer reports sooner; more reports fewer false starts.
    public var beganReversals: Int
    /// Seconds of shaking after `began` past which the motion is not a gesture (`cancelled`, `too_long`).
    public var tooLong: Double
    /// Seconds without a stroke that end a shake.
    public var quietTime: Double
    /// Seconds after a shake ends or is cancelled during which no new shake begins.
    public var refractory: Double
    /// After `too_long`: seconds of calm needed before a new shake can begin.
    public var calmTime: Double
    /// The longest time, in seconds, between the starts of two strokes of one shake (half the slowest
    /// back-and-forth period accepted).
    public var maxHalfPeriod: Double
    /// Time constant, in seconds, of the gravity estimate.
    public var gravityTimeConstant: Double
    /// A gap between samples longer than this, in seconds, interrupts the stream.
    public var maxGap: Double

    public init(sensitivity: Sensitivity = .medium) {
        self = Self.preset(sensitivity)
    }

    /// The settings behind a sensitivity preset.
    public static func preset(_ sensitivity: Sensitivity) -> DetectorSettings {
        switch sensitivity {
        case .light:
            DetectorSettings(threshold: 10, reversals: 3, beganReversals: 1)
        case .medium:
            DetectorSettings(threshold: 13, reversals: 4, beganReversals: 1)
        case .hard:
            DetectorSettings(threshold: 17, reversals: 5, beganReversals: 2)
        }
    }

    private init(threshold: Double, reversals: Int, beganReversals: Int) {
        self.threshold = threshold
        self.reversals = reversals
        self.beganReversals = beganReversals
        self.tooLong = 4.0
        self.quietTime = 0.3
        self.refractory = 0.75
        self.calmTime = 1.0
        self.maxHalfPeriod = 0.45
        self.gravityTimeConstant = 0.6
        self.maxGap = 0.5
    }

    /// A parameter, for validation messages and configuration keys.
    public enum Parameter: String, Sendable, CaseIterable {
        case threshold, reversals
        case beganReversals = "began_reversals"
        case tooLong = "too_long"
        case quietTime = "quiet_time"
        case refractory
        case calmTime = "calm_time"
        case maxHalfPeriod = "max_half_period"
        case gravityTimeConstant = "gravity_time_constant"
        case maxGap = "max_gap"

        /// The values the detector accepts for this parameter.
        public var allowed: ClosedRange<Double> {
            switch self {
            case .threshold: 2...200
            case .reversals: 1...50
            case .beganReversals: 1...50
            case .tooLong: 0.5...60
            case .quietTime: 0.05...5
            case .refractory: 0...60
            case .calmTime: 0...60
            case .maxHalfPeriod: 0.05...2
            case .gravityTimeConstant: 0.05...10
            case .maxGap: 0.02...60
            }
        }

        /// Whether the parameter is a whole number.
        public var isCount: Bool { self == .reversals || self == .beganReversals }
    }

    /// A parameter's value, by name.
    public subscript(parameter: Parameter) -> Double {
        get {
            switch parameter {
            case .threshold: threshold
            case .reversals: Double(reversals)
            case .beganReversals: Double(beganReversals)
            case .tooLong: tooLong
            case .quietTime: quietTime
            case .refractory: refractory
            case .calmTime: calmTime
            case .maxHalfPeriod: maxHalfPeriod
            case .gravityTimeConstant: gravityTimeConstant
            case .maxGap: maxGap
            }
        }
        set {
            switch parameter {
            case .threshold: threshold = newValue
            case .reversals: reversals = Self.count(newValue)
            case .beganReversals: beganReversals = Self.count(newValue)
            case .tooLong: tooLong = newValue
            case .quietTime: quietTime = newValue
            case .refractory: refractory = newValue
            case .calmTime: calmTime = newValue
            case .maxHalfPeriod: maxHalfPeriod = newValue
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
            "\(parameter.rawValue) = \(JSONObjectWriter.format(value, decimals: 6)): \(reason)"
        }
    }

    /// Checks every parameter against its allowed range and the parameters against each other.
    /// - Throws: ``InvalidSetting`` naming the first parameter that is out of range.
    public func validate() throws(InvalidSetting) {
        for parameter in Parameter.allCases {
            let value = self[parameter]
            let range = parameter.allowed
            guard value.isFinite, range.contains(value) else {
                let bounds = parameter.isCount
                    ? "\(Int(range.lowerBound))...\(Int(range.upperBound))"
                    : "\(JSONObjectWriter.format(range.lowerBound, decimals: 3))...\(JSONObjectWriter.format(range.upperBound, decimals: 3))"
                throw InvalidSetting(parameter: parameter, value: value, reason: "must be in \(bounds)")
            }
        }
        if beganReversals > reversals {
            throw InvalidSetting(
                parameter: .beganReversals, value: Double(beganReversals),
                reason: "must not exceed reversals (\(reversals))")
        }
        if quietTime >= tooLong {
            throw InvalidSetting(
                parameter: .quietTime, value: quietTime, reason: "must be shorter than too_long (\(tooLong))")
        }
    }
}
