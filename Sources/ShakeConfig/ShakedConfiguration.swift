public import ShakeDetection

/// Everything the configuration file sets. Each section mirrors a part of the daemon; a missing key keeps its
/// default, documented in `config/shaked.yaml`.
public struct ShakedConfiguration: Sendable, Hashable {
    /// The detector's settings: a sensitivity preset, adjusted by any explicit parameters.
    public var detector = DetectorSection()

    public init() {}

    /// The `detector:` section.
    public struct DetectorSection: Sendable, Hashable {
        /// The preset the settings start from.
        public var sensitivity = DetectorSettings.Sensitivity.medium
        /// Explicit parameters that override the preset's values.
        public var overrides: [DetectorSettings.Parameter: Double] = [:]

        public init() {}

        /// The settings for a preset (this section's own, or `sensitivity` when given), with the overrides
        /// applied.
        public func settings(sensitivity: DetectorSettings.Sensitivity? = nil) -> DetectorSettings {
            var settings = DetectorSettings.preset(sensitivity ?? self.sensitivity)
            for parameter in DetectorSettings.Parameter.allCases {
                if let value = overrides[parameter] { settings[parameter] = value }
            }
            return settings
        }
    }
}
