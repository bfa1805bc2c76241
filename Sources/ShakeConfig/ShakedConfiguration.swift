// SPDX-License-Identifier: Apache-2.0
public import IIOModel
import NumberFormat
public import ShakeDetection
public import ShakeProtocol

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
        /// The measuring range to ask the sensor for while capturing.
        public var range = SensorRange.automatic

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

    /// The `clients:` section: what one client, or all of them, may cost; the server takes it as it is.
    public typealias ClientsSection = ClientLimits

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

extension ShakedConfiguration {
    /// Every key of `shaked.yaml`, one row each, in file order (the sections in the order they first appear):
    /// the loader, its lists of known keys, `--check-config`, what a reload applies and the man page's test all
    /// read these rows. A new key is its field above and its row here.
    public static let schema = ConfigSchema<ShakedConfiguration>(
        sensorKeys + detectorKeys + socketKeys + clientsKeys + accessKeys + [
            Key(
                "logging", "level", \.logging.level, type: "level",
                range: LoggingSection.levels.joined(separator: ", "),
                reload: .applied(.logLevel, as: "logging"), doc: "How much the daemon logs.", show: \.rawValue
            ) { (reader, node, key) throws(ConfigError) in
                let text = try reader.string(node, key: key).lowercased()
                guard let level = LogLevel(parsing: text) else {
                    let allowed = LoggingSection.levels.joined(separator: ", ")
                    throw reader.error(node, key: key, "'\(text)' is not a level; allowed: \(allowed)")
                }
                return level
            },
            Key(
                "dbus", "mode", \.dbus.mode, type: "auto, on or off", reload: .restart(as: "dbus"),
                doc: "Whether to offer the shake object on the system bus.", show: \.rawValue
            ) { (reader, node, key) throws(ConfigError) in
                // YAML reads a bare on and off as booleans; here they are the words.
                let text = try reader.string(node, key: key).lowercased()
                guard let mode = DBusSection.Mode(rawValue: text) else {
                    let allowed = DBusSection.Mode.allCases.map(\.rawValue).joined(separator: ", ")
                    throw reader.error(node, key: key, "'\(text)' is not a mode; allowed: \(allowed)")
                }
                return mode
            },
        ])

    typealias Key = ConfigKey<ShakedConfiguration>

    static let sensorKeys: [Key] = [
        Key(
            "sensor", "source", \.sensor.source, type: "iio, iio:URI or replay:FILE",
            reload: .restart(as: "sensor.source"), doc: "Where samples come from.", show: \.description
        ) { (reader, node, key) throws(ConfigError) in
            let text = try reader.string(node, key: key)
            guard let source = SourceSpec(parsing: text) else {
                throw reader.error(node, key: key, "'\(text)' is not a source; allowed: iio, iio:URI, replay:FILE")
            }
            return source
        },
        Key(
            "sensor", "device", \.sensor.device, type: "auto, display, base, iio:deviceN, a name or a label",
            reload: .restart(as: "sensor.device"), doc: "Which accelerometer.",
            show: { $0 == .automatic ? "auto" : $0.description }
        ) { (reader, node, key) throws(ConfigError) in
            let text = try reader.string(node, key: key)
            guard !text.isEmpty else {
                throw reader.error(node, key: key, "expected display, base, iio:deviceN, a name or a label")
            }
            return DeviceRequest(parsing: text)
        },
        Key(
            "sensor", "rate", \.sensor.rate, type: "number (Hz)", range: "1...10000",
            reload: .restart(as: "sensor.rate"), doc: "The sampling rate to ask the sensor for.",
            show: { DecimalText.format($0, decimals: 3) }
        ) { (reader, node, key) throws(ConfigError) in
            let rate = try reader.number(node, key: key)
            guard SensorSection.rates.contains(rate) else {
                throw reader.error(node, key: key, "\(rate) is out of range; allowed: 1...10000 (Hz)")
            }
            return rate
        },
        Key(
            "sensor", "always_on", \.sensor.alwaysOn, type: "true or false",
            reload: .applied(.alwaysOn, as: "sensor.always_on"), doc: "Capture even while nobody listens.",
            show: { String($0) }
        ) { (reader, node, key) throws(ConfigError) in try reader.bool(node, key: key) },
        Key(
            "sensor", "relay", \.sensor.relay, type: "auto, on or off", reload: .restart(as: "sensor.relay"),
            doc: "Relay the accelerometer to iio-sensor-proxy through a uinput accelerometer.", show: \.rawValue
        ) { (reader, node, key) throws(ConfigError) in
            // `on` and `off` are also YAML's booleans: taken by their text, so a bare `relay: on` works.
            let text = node.scalar?.string.lowercased() ?? ""
            guard let relay = SensorSection.Relay(rawValue: text) else {
                throw reader.error(
                    node, key: key, "expected auto, on or off, found '\(node.scalar?.string ?? "a collection")'")
            }
            return relay
        },
        Key(
            "sensor", "follow_session", \.sensor.followSession, type: "true or false",
            reload: .restart(as: "sensor.follow_session"),
            doc: "Capture for a listener only while its user's session is active and unlocked.", show: { String($0) }
        ) { (reader, node, key) throws(ConfigError) in try reader.bool(node, key: key) },
        Key(
            "sensor", "range", \.sensor.range, type: "auto, keep or a number (g)", range: "1...1000",
            reload: .restart(as: "sensor.range"),
            doc: "The measuring range to set while capturing: auto (at least ±4 g), keep, or at least N g.",
            show: \.description
        ) { (reader, node, key) throws(ConfigError) in
            let text = try reader.string(node, key: key)
            guard let range = SensorRange(parsing: text) else {
                throw reader.error(
                    node, key: key, "'\(text)' is not a range; allowed: auto, keep, or a number of g in 1...1000")
            }
            return range
        },
    ]

    static let detectorKeys: [Key] =
        [
            Key(
                "detector", "sensitivity", \.detector.sensitivity, type: "light, medium or hard",
                reload: .applied(.detector, as: "detector"), doc: "The preset the parameters start from.",
                show: \.rawValue
            ) { (reader, node, key) throws(ConfigError) in
                let text = try reader.string(node, key: key)
                guard let sensitivity = DetectorSettings.Sensitivity(rawValue: text) else {
                    let allowed = DetectorSettings.Sensitivity.allCases.map(\.rawValue).joined(separator: ", ")
                    throw reader.error(node, key: key, "'\(text)' is not a sensitivity; allowed: \(allowed)")
                }
                return sensitivity
            }
        ]
        + DetectorSettings.Parameter.allCases.map { parameter in
            Key(
                "detector", parameter.rawValue, type: parameter.isCount ? "whole number" : "number",
                range: parameter.allowedText, reload: .applied(.detector, as: "detector"),
                doc: "Overrides the preset's \(parameter.rawValue) (docs/detection.md).",
                read: { (reader, node, key, configuration) throws(ConfigError) in
                    let number = try reader.number(node, key: key)
                    if parameter.isCount && number != number.rounded() {
                        throw reader.error(node, key: key, "expected a whole number, found \(number)")
                    }
                    let range = parameter.allowed
                    guard range.contains(number) else {
                        let bounds =
                            parameter.isCount
                            ? "\(Int(range.lowerBound))...\(Int(range.upperBound))"
                            : "\(range.lowerBound)...\(range.upperBound)"
                        throw reader.error(node, key: key, "\(number) is out of range; allowed: \(bounds)")
                    }
                    configuration.detector.overrides[parameter] = number
                },
                value: { $0.detector.overrides[parameter].map { DecimalText.format($0, decimals: 3) } },
                differs: { $0.detector.overrides[parameter] != $1.detector.overrides[parameter] })
        }

    static let socketKeys: [Key] = [
        Key(
            "socket", "path", \.socket.path, type: "absolute path", reload: .restart(as: "socket"),
            doc: "The socket file; unset: $SHAKED_SOCKET, else $RUNTIME_DIRECTORY/shaked.sock, else /run/shaked.",
            show: { $0 }
        ) { (reader, node, key) throws(ConfigError) in
            let text = try reader.string(node, key: key)
            if let problem = SocketPath.problem(with: text) { throw reader.error(node, key: key, problem) }
            return text
        },
        Key(
            "socket", "mode", \.socket.mode, type: "octal mode", reload: .restart(as: "socket"),
            doc: "The socket file's permissions.", show: { "0" + String($0, radix: 8) }
        ) { (reader, node, key) throws(ConfigError) in try reader.mode(node, key: key) },
        Key(
            "socket", "group", \.socket.group, type: "group name or number", reload: .restart(as: "socket"),
            doc: "The socket file's group; unset: the daemon's own.",
            show: { account in
                guard case .group(let id) = account else { return nil }
                return id.description
            }
        ) { (reader, node, key) throws(ConfigError) in
            let text = try reader.string(node, key: key)
            return try reader.account("group:\(text)", node: node, key: key)
        },
    ]

    static let clientsKeys: [Key] = [
        clients("max_clients", \.clients.maxClients, 1...65_536, "Most clients connected at once."),
        clients("queue_limit", \.clients.queueLimit, 16...65_536, "Messages queued for a client that does not read."),
        clients("drop_limit", \.clients.dropLimit, 16...1_048_576, "Dropped messages before a client is disconnected."),
        clients("max_line_length", \.clients.maxLineLength, 256...1_048_576, "The longest request line, bytes."),
        clients(
            "max_bad_lines", \.clients.maxBadLines, 1...10_000, "Bad request lines before a client is disconnected."),
        clients("replay_capacity", \.clients.replayCapacity, 1...65_536, "Recent events kept for replay."),
        clients("max_clients_per_user", \.clients.maxClientsPerUser, 1...65_536, "Most connections one user may hold."),
        clients(
            "reserved_clients", \.clients.reservedClients, 0...65_536, "Slots kept for root and the admin accounts."),
        clients(
            "client_buffer", \.clients.clientBuffer, 4096...16_777_216, "Bytes held for one client that does not read."),
        clients(
            "total_buffer", \.clients.totalBuffer, 1_048_576...1_073_741_824, "Bytes held for all clients together."),
    ]

    static func clients(
        _ name: String, _ field: any (WritableKeyPath<ShakedConfiguration, Int> & Sendable), _ range: ClosedRange<Int>,
        _ doc: String
    ) -> Key {
        Key(
            "clients", name, field,
            type: "whole number", range: "\(range.lowerBound)...\(range.upperBound)",
            reload: .applied(.server, as: "clients"), doc: doc, show: { String($0) }
        ) { (reader, node, key) throws(ConfigError) in try reader.integer(node, key: key, in: range) }
    }

    static let accessKeys: [Key] = [
        access("subscribe", \.access.subscribe, "Who may subscribe to events, ask for status and replay."),
        access("samples", \.access.samples, "Who may stream raw samples."),
        access("simulate", \.access.simulate, "Who may inject simulated shakes."),
        access("key", \.access.key, "Who may have the daemon press a key chord for them."),
    ]

    static func access(
        _ name: String, _ field: any (WritableKeyPath<ShakedConfiguration, AccessRule> & Sendable), _ doc: String
    ) -> Key {
        Key(
            "access", name, field,
            type: "everyone, root, or a list of user:NAME and group:NAME", reload: .applied(.server, as: "access"),
            doc: doc,
            show: { rule in
                switch rule {
                case .everyone: "everyone"
                case .accounts(let accounts):
                    accounts.isEmpty ? "root" : "[" + accounts.map(\.description).joined(separator: ", ") + "]"
                }
            }
        ) { (reader, node, key) throws(ConfigError) in try reader.accessRule(node, key: key) }
    }
}
