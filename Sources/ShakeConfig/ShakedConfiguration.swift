// SPDX-License-Identifier: Apache-2.0
public import IIOModel
public import ShakeDetection

/// Everything the configuration file sets. Each section mirrors a part of the daemon; a missing key keeps its
/// default, documented in `config/shaked.yaml`.
public struct ShakedConfiguration: Sendable, Hashable {
    /// Where samples come from: `sensor:`.
    public var sensor = SensorSection()
    /// The detector's settings: a sensitivity preset, adjusted by any explicit parameters.
    public var detector = DetectorSection()
    /// The subscribers' socket: `socket:`.
    public var socket = SocketSection()
    /// Limits on what clients may cost: `clients:`.
    public var clients = ClientsSection()
    /// Who may do what: `access:`.
    public var access = AccessSection()
    /// `logging:`.
    public var logging = LoggingSection()
    /// The D-Bus service on the system bus: `dbus:`.
    public var dbus = DBusSection()

    public init() {}

    /// The `sensor:` section.
    public struct SensorSection: Sendable, Hashable {
        /// `iio`, `iio:URI` or `replay:FILE`.
        public var source = SourceSpec.iio(uri: nil)
        /// Which accelerometer (`display`, `base`, `iio:deviceN`, a name or label; `auto` picks one).
        public var device = DeviceRequest.automatic
        /// The sampling rate to ask the sensor for, Hz.
        public var rate = 100.0
        /// Capture even while nobody listens.
        public var alwaysOn = false
        /// Capture for a listener (socket subscriber or D-Bus claim) only while its user has an active, unlocked
        /// session, as logind says; root's listeners always count.
        public var followSession = true
        /// Whether to relay the accelerometer to iio-sensor-proxy through a uinput accelerometer.
        public var relay = Relay.auto

        public init() {}

        /// `sensor.relay`: a uinput accelerometer that reports what iio-sensor-proxy would have read from the
        /// IIO device shaked owns, so that auto-rotate keeps working.
        public enum Relay: String, Sendable, Hashable, CaseIterable {
            /// When iio-sensor-proxy is installed (its udev rule is present).
            case auto
            case on
            case off
        }

        /// The rates that may be asked for, Hz.
        public static let rates: ClosedRange<Double> = 1...10_000
    }

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

    /// The `socket:` section.
    public struct SocketSection: Sendable, Hashable {
        /// The socket file; nil: `$SHAKED_SOCKET`, else `$RUNTIME_DIRECTORY/shaked.sock`, else
        /// `/run/shaked/shaked.sock`.
        public var path: String?
        /// The socket file's permissions.
        public var mode: UInt32 = 0o666
        /// The socket file's group, by name or number; nil leaves the daemon's own.
        public var group: Account?

        public init() {}

        /// Parses an octal permission mode such as `0660` (or `0o660`); nil for anything else or above 0777.
        public static func mode(parsing text: String) -> UInt32? {
            let digits = text.hasPrefix("0o") ? text.dropFirst(2) : text[...]
            guard !digits.isEmpty, digits.allSatisfy({ ("0"..."7").contains($0) }), let mode = UInt32(digits, radix: 8),
                mode <= 0o777
            else { return nil }
            return mode
        }
    }

    /// The `clients:` section: what one client, or all of them, may cost.
    public struct ClientsSection: Sendable, Hashable {
        public var maxClients = 2048
        public var queueLimit = 256
        public var dropLimit = 4096
        public var maxLineLength = 4096
        public var maxBadLines = 20
        public var replayCapacity = 1024
        public var maxClientsPerUser = 256
        public var reservedClients = 32
        public var clientBuffer = 64 * 1024
        public var totalBuffer = 16 * 1024 * 1024

        public init() {}

        /// Each key with its allowed range, in file order.
        public static var limits: [(key: String, range: ClosedRange<Int>, path: WritableKeyPath<Self, Int>)] {
            [
                ("max_clients", 1...65_536, \.maxClients),
                ("queue_limit", 16...65_536, \.queueLimit),
                ("drop_limit", 16...1_048_576, \.dropLimit),
                ("max_line_length", 256...1_048_576, \.maxLineLength),
                ("max_bad_lines", 1...10_000, \.maxBadLines),
                ("replay_capacity", 1...65_536, \.replayCapacity),
                ("max_clients_per_user", 1...65_536, \.maxClientsPerUser),
                ("reserved_clients", 0...65_536, \.reservedClients),
                ("client_buffer", 4096...16_777_216, \.clientBuffer),
                ("total_buffer", 1_048_576...1_073_741_824, \.totalBuffer),
            ]
        }
    }

    /// The `access:` section. Root may always do everything.
    public struct AccessSection: Sendable, Hashable {
        /// Who may subscribe to events, ask for status and replay (beyond being able to open the socket).
        public var subscribe = AccessRule.everyone
        /// Who may stream raw samples (raw motion data can reveal what a person types).
        public var samples = AccessRule.accounts([.group(.name("shaked-admin"))])
        /// Who may inject simulated shakes.
        public var simulate = AccessRule.accounts([.group(.name("shaked-admin"))])
        /// Who may have the daemon press a key chord for them (`shakectl key`). The daemon presses it only while
        /// their own session is active and unlocked, so everyone by default.
        public var key = AccessRule.everyone

        public init() {}
    }

    /// The `dbus:` section.
    public struct DBusSection: Sendable, Hashable {
        /// Whether to offer the shake object on the system bus.
        public enum Mode: String, Sendable, Hashable, CaseIterable {
            /// When the system bus can be reached; a bus that cannot be reached or a name that cannot be taken
            /// is logged, and the daemon serves its socket alone.
            case auto
            /// Always: a bus that cannot be reached or a name that cannot be taken stops the daemon.
            case on
            /// Never.
            case off
        }

        public var mode = Mode.auto

        public init() {}
    }

    /// The `logging:` section.
    public struct LoggingSection: Sendable, Hashable {
        /// trace, debug, info, notice, warning, error or critical.
        public var level = LogLevel.info

        public init() {}

        public static let levels = LogLevel.allCases.map(\.rawValue)
    }
}

/// A user or group named in the configuration: by name, or by number.
public enum AccountID: Sendable, Hashable, CustomStringConvertible {
    case name(String)
    case number(UInt32)

    public var description: String {
        switch self {
        case .name(let name): name
        case .number(let number): String(number)
        }
    }
}

/// One entry of an access list.
public enum Account: Sendable, Hashable, CustomStringConvertible {
    case user(AccountID)
    case group(AccountID)

    /// Parses `user:NAME`, `group:NAME` (or a number instead of the name); a bare name is a group name.
    public init?(parsing text: String) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let (kind, name) = parts.count == 2 ? (parts[0], parts[1]) : ("group", parts[0])
        guard !name.isEmpty, !name.contains(where: { $0 == " " || $0 == ":" }) else { return nil }
        let id = UInt32(name).map(AccountID.number) ?? .name(name)
        switch kind {
        case "user": self = .user(id)
        case "group": self = .group(id)
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .user(let id): "user:\(id)"
        case .group(let id): "group:\(id)"
        }
    }
}

/// Who may do something: everyone, or root and the listed users and groups.
public enum AccessRule: Sendable, Hashable, CustomStringConvertible {
    case everyone
    case accounts([Account])

    public var description: String {
        switch self {
        case .everyone: "everyone"
        case .accounts(let accounts):
            accounts.isEmpty ? "root only" : accounts.map(\.description).joined(separator: ", ")
        }
    }
}

/// How much the daemon logs, as `logging.level` and `--log-level` name it (any case).
public enum LogLevel: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case trace, debug, info, notice, warning, error, critical

    public init?(parsing text: String) {
        self.init(rawValue: text.lowercased())
    }

    public var description: String { rawValue }
}
