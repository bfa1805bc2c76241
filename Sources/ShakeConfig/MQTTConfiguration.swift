// SPDX-License-Identifier: Apache-2.0
public import ShakeDetection
import ShakeProtocol

/// The forwarder's configuration (`/etc/shaked/mqtt.yaml` and its drop-ins): the broker, the topics, the queue,
/// Home Assistant's discovery. Read with the daemon's YAML reader and errors; a missing key keeps its default,
/// documented in `config/mqtt.yaml`.
public struct MQTTConfiguration: Sendable, Hashable {
    public var broker = BrokerSection()
    public var topics = TopicsSection()
    public var queue = QueueSection()
    public var homeAssistant = HomeAssistantSection()
    /// The daemon's socket; nil: `$SHAKED_SOCKET`, else `/run/shaked/shaked.sock`.
    public var socket: String?
    public var logLevel = LogLevel.info

    public init() {}

    /// `broker:`.
    public struct BrokerSection: Sendable, Hashable {
        public var address = BrokerAddress.tcp(host: "localhost", port: 1883, tls: false)
        /// The MQTT client id; nil: `shaked-DEVICE`.
        public var clientID: String?
        /// Seconds between keep-alive pings.
        public var keepAlive = 30
        public var username: String?
        /// A file holding the password (its first line).
        public var passwordFile: String?
        /// A systemd credential (`LoadCredential=NAME:...`) holding the password, read from
        /// `$CREDENTIALS_DIRECTORY/NAME`.
        public var passwordCredential: String?
        /// TLS: the CA certificates to trust (a file); nil with `mqtts://`: the system's (`/etc/ssl/certs`).
        public var caFile: String?
        /// TLS: a client certificate and its key, for brokers that ask for one.
        public var certFile: String?
        public var keyFile: String?

        public init() {}

        public static let keepAlives: ClosedRange<Int> = 5...3600
    }

    /// `topics:`.
    public struct TopicsSection: Sendable, Hashable {
        /// The first level of every topic.
        public var prefix = "shaked"
        /// This device's level; nil: `/etc/machine-id`, else the host name.
        public var device: String?
        /// QoS of the event messages (the retained ones are always sent at QoS 1).
        public var qos = 1
        /// The phases sent; all by default.
        public var phases: Set<ShakeEvent.Phase> = [.began, .ended, .cancelled]

        public init() {}
    }

    /// `queue:`.
    public struct QueueSection: Sendable, Hashable {
        /// Events held while the broker is away; beyond it the oldest waiting are dropped (and counted).
        public var size = 1000

        public init() {}

        public static let sizes: ClosedRange<Int> = 1...1_000_000
    }

    /// `home_assistant:`.
    public struct HomeAssistantSection: Sendable, Hashable {
        /// Publish Home Assistant's MQTT discovery configuration.
        public var discovery = true
        /// Home Assistant's discovery prefix.
        public var prefix = "homeassistant"

        public init() {}
    }

    /// The sections a file may have.
    public static var sections: [String] { schema.sections }
}

/// Where the broker is, as `broker.uri` names it: `mqtt://HOST[:PORT]`, `mqtts://HOST[:PORT]`, `unix:/PATH`.
public enum BrokerAddress: Sendable, Hashable, CustomStringConvertible {
    case tcp(host: String, port: Int, tls: Bool)
    case unix(path: String)

    /// Parses a URI, or returns why it is not one.
    public static func parse(_ text: String) -> Result<BrokerAddress, BrokerAddressError> {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst(5))
            guard path.hasPrefix("/") else {
                return .failure(.init("unix: needs an absolute path (unix:/run/mosquitto.sock)"))
            }
            return .success(.unix(path: path))
        }
        let tls: Bool
        let rest: Substring
        if text.hasPrefix("mqtt://") {
            (tls, rest) = (false, text.dropFirst(7))
        } else if text.hasPrefix("mqtts://") {
            (tls, rest) = (true, text.dropFirst(8))
        } else {
            return .failure(.init("expected mqtt://HOST[:PORT], mqtts://HOST[:PORT] or unix:/PATH"))
        }
        var host = rest
        var port = tls ? 8883 : 1883
        if host.hasSuffix("/") { host = host.dropLast() }
        if host.hasPrefix("[") {
            // An IPv6 address: [::1]:1883.
            guard let close = host.firstIndex(of: "]") else { return .failure(.init("an IPv6 address needs its ']'")) }
            let after = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let number = Int(after.dropFirst()) else {
                    return .failure(.init("expected :PORT after the address"))
                }
                port = number
            }
        } else if let colon = host.lastIndex(of: ":") {
            guard let number = Int(host[host.index(after: colon)...]) else {
                return .failure(.init("the port is not a number"))
            }
            port = number
            host = host[..<colon]
        }
        guard !host.isEmpty else { return .failure(.init("no host name")) }
        guard !host.contains(where: { $0 == "/" || $0 == "@" || $0 == "?" || $0 == " " }) else {
            return .failure(.init("a host name only (no user, path or query; the user name is broker.username)"))
        }
        guard (1...65535).contains(port) else {
            return .failure(.init("port \(port) is out of range; allowed: 1...65535"))
        }
        return .success(.tcp(host: String(host), port: port, tls: tls))
    }

    public var usesTLS: Bool {
        if case .tcp(_, _, true) = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .tcp(let host, let port, let tls):
            let shown = host.contains(where: { $0 == ":" }) ? "[\(host)]" : host
            return "\(tls ? "mqtts" : "mqtt")://\(shown):\(port)"
        case .unix(let path): return "unix:\(path)"
        }
    }
}

public struct BrokerAddressError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

extension MQTTConfiguration {
    /// The main file's default place.
    public static let defaultPath = "/etc/shaked/mqtt.yaml"

    /// The drop-ins of a main file: the `*.yaml` files of `MAIN.d`, sorted by name.
    public static func dropIns(for main: String) -> [String] {
        ConfigLoader.dropIns(for: main, vendor: nil)
    }

    /// Reads the main file (when it exists, or must), then each drop-in, later keys overriding earlier ones, as the
    /// daemon's files are read; every problem is reported with its file, line and key.
    /// - Throws: ``ConfigErrors``.
    public static func load(main: String, mainMustExist: Bool, dropIns: [String]) throws(ConfigErrors)
        -> Layered<MQTTConfiguration>
    {
        try schema.layered(
            files: ConfigLoader.layerFiles(main: main, mainMustExist: mainMustExist, dropIns: dropIns),
            defaults: MQTTConfiguration(), accounts: .system,
            whole: { configuration, set in
                var problems: [ConfigError] = []
                if configuration.broker.passwordFile != nil, configuration.broker.passwordCredential != nil {
                    problems.append(
                        ConfigError(
                            file: set.files.last ?? main, key: "broker.password_file",
                            message: "password_file and password_credential are both set; keep one"))
                }
                if (configuration.broker.certFile == nil) != (configuration.broker.keyFile == nil) {
                    problems.append(
                        ConfigError(
                            file: set.files.last ?? main, key: "broker.cert_file",
                            message: "cert_file and key_file go together; set both or neither"))
                }
                return problems
            })
    }

    /// Parses one file's text alone (the tests' entry): each key as in ``load(main:mainMustExist:dropIns:)``,
    /// without the checks across keys.
    public static func parse(_ text: String, source: String) throws(ConfigErrors) -> MQTTConfiguration {
        try schema.layered(
            files: [source], defaults: MQTTConfiguration(), accounts: .system,
            document: { (file) throws(ConfigError) in try ConfigLoader.compose(text, source: file) }
        ).configuration
    }
}

extension NodeReader {
    /// A topic level: not empty, no `/`, `+`, `#` or control characters, at most 128 bytes.
    static func topicLevelProblem(_ text: String) -> String? {
        if text.isEmpty { return "must not be empty" }
        if text.utf8.count > 128 { return "is longer than 128 bytes" }
        if text.unicodeScalars.contains(where: {
            $0 == "/" || $0 == "+" || $0 == "#" || $0.value < 0x20 || $0.value == 0x7F
        }) {
            return "may not hold '/', '+', '#' or control characters"
        }
        return nil
    }

    func path(_ value: Node, key: String) throws(ConfigError) -> String {
        let text = try string(value, key: key)
        guard text.hasPrefix("/") else { throw error(value, key: key, "expected an absolute path, found '\(text)'") }
        return text
    }
}

extension MQTTConfiguration {
    typealias Key = ConfigKey<MQTTConfiguration>

    /// Every key of `mqtt.yaml`, one row each, in file order: the loader, its lists of known keys and the man
    /// page's test read these rows. The forwarder reads its files only when it starts.
    public static let schema = ConfigSchema<MQTTConfiguration>([
        Key(
            "broker", "uri", \.broker.address, type: "mqtt://HOST[:PORT], mqtts://HOST[:PORT] or unix:/PATH",
            reload: .restart(as: "broker.uri"), doc: "Where the broker is.", show: \.description
        ) { (reader, node, key) throws(ConfigError) in
            let text = try reader.string(node, key: key)
            switch BrokerAddress.parse(text) {
            case .success(let address): return address
            case .failure(let problem): throw reader.error(node, key: key, "'\(text)': \(problem)")
            }
        },
        Key(
            "broker", "client_id", \.broker.clientID, type: "text", reload: .restart(as: "broker.client_id"),
            doc: "The MQTT client id; unset: shaked-DEVICE.", show: { $0 }
        ) { (reader, node, key) throws(ConfigError) in
            let text = try reader.string(node, key: key)
            guard !text.isEmpty, text.utf8.count <= 128, !text.unicodeScalars.contains(where: { $0.value < 0x20 })
            else {
                throw reader.error(node, key: key, "expected 1 to 128 bytes of printable text")
            }
            return text
        },
        Key(
            "broker", "keepalive", \.broker.keepAlive, type: "whole number (seconds)",
            range: "\(BrokerSection.keepAlives.lowerBound)...\(BrokerSection.keepAlives.upperBound)",
            reload: .restart(as: "broker.keepalive"), doc: "Seconds between keep-alive pings.", show: { String($0) }
        ) { (reader, node, key) throws(ConfigError) in
            try reader.integer(node, key: key, in: BrokerSection.keepAlives)
        },
        Key(
            "broker", "username", \.broker.username, type: "text", reload: .restart(as: "broker.username"),
            doc: "The user name to log in with.", show: { $0 }
        ) { (reader, node, key) throws(ConfigError) in
            let text = try reader.string(node, key: key)
            guard !text.isEmpty else {
                throw reader.error(node, key: key, "must not be empty; leave the key out instead")
            }
            return text
        },
        path("password_file", \.broker.passwordFile, "A file holding the password (its first line)."),
        Key(
            "broker", "password_credential", \.broker.passwordCredential, type: "a credential's name",
            reload: .restart(as: "broker.password_credential"),
            doc: "A systemd credential holding the password.", show: { $0 }
        ) { (reader, node, key) throws(ConfigError) in
            let text = try reader.string(node, key: key)
            guard !text.isEmpty, !text.contains(where: { $0 == "/" }), text != ".", text != ".." else {
                throw reader.error(
                    node, key: key, "expected a credential's name (LoadCredential=NAME:...), found '\(text)'")
            }
            return text
        },
        path("ca_file", \.broker.caFile, "TLS: the CA certificates to trust."),
        path("cert_file", \.broker.certFile, "TLS: a client certificate."),
        path("key_file", \.broker.keyFile, "TLS: the client certificate's key."),
        Key(
            "topics", "prefix", \.topics.prefix, type: "topic levels", reload: .restart(as: "topics.prefix"),
            doc: "The first level of every topic.", show: { $0 }
        ) { (reader, node, key) throws(ConfigError) in
            let text = try reader.string(node, key: key)
            for level in text.split(separator: "/", omittingEmptySubsequences: false) {
                if let problem = NodeReader.topicLevelProblem(String(level)) {
                    throw reader.error(node, key: key, "'\(text)': each level \(problem)")
                }
            }
            return text
        },
        Key(
            "topics", "device", \.topics.device, type: "topic level", reload: .restart(as: "topics.device"),
            doc: "This device's level; unset: the machine id, else the host name.", show: { $0 }
        ) { (reader, node, key) throws(ConfigError) in try topicLevel(reader, node, key) },
        Key(
            "topics", "qos", \.topics.qos, type: "0 or 1", reload: .restart(as: "topics.qos"),
            doc: "QoS of the event messages.", show: { String($0) }
        ) { (reader, node, key) throws(ConfigError) in try reader.integer(node, key: key, in: 0...1) },
        Key(
            "topics", "phases", \.topics.phases, type: "a list of began, ended, cancelled",
            reload: .restart(as: "topics.phases"), doc: "The phases sent.",
            show: { phases in
                "[" + ShakeEvent.Phase.allCases.filter { phases.contains($0) }.map(\.rawValue).joined(separator: ", ")
                    + "]"
            }
        ) { (reader, node, key) throws(ConfigError) in
            let allowed = "allowed: a list of began, ended, cancelled"
            guard case .sequence(let items) = node.content, !items.isEmpty else {
                throw reader.error(node, key: key, allowed)
            }
            var phases: Set<ShakeEvent.Phase> = []
            for item in items {
                guard let text = item.scalar?.string, let phase = ShakeEvent.Phase(rawValue: text) else {
                    throw reader.error(
                        item, key: key, "'\(item.scalar?.string ?? "a collection")' is not a phase; \(allowed)")
                }
                phases.insert(phase)
            }
            return phases
        },
        Key(
            "queue", "size", \.queue.size, type: "whole number",
            range: "\(QueueSection.sizes.lowerBound)...\(QueueSection.sizes.upperBound)",
            reload: .restart(as: "queue.size"), doc: "Events held while the broker is away.", show: { String($0) }
        ) { (reader, node, key) throws(ConfigError) in try reader.integer(node, key: key, in: QueueSection.sizes) },
        Key(
            "home_assistant", "discovery", \.homeAssistant.discovery, type: "true or false",
            reload: .restart(as: "home_assistant.discovery"),
            doc: "Publish Home Assistant's MQTT discovery configuration.", show: { String($0) }
        ) { (reader, node, key) throws(ConfigError) in try reader.bool(node, key: key) },
        Key(
            "home_assistant", "prefix", \.homeAssistant.prefix, type: "topic level",
            reload: .restart(as: "home_assistant.prefix"), doc: "Home Assistant's discovery prefix.", show: { $0 }
        ) { (reader, node, key) throws(ConfigError) in try topicLevel(reader, node, key) },
        Key(
            "daemon", "socket", \.socket, type: "absolute path", reload: .restart(as: "daemon.socket"),
            doc: "The daemon's socket; unset: $SHAKED_SOCKET, else /run/shaked/shaked.sock.", show: { $0 }
        ) { (reader, node, key) throws(ConfigError) in
            let text = try reader.string(node, key: key)
            if let problem = SocketPath.problem(with: text) { throw reader.error(node, key: key, problem) }
            return text
        },
        Key(
            "logging", "level", \.logLevel, type: "level",
            range: ShakedConfiguration.LoggingSection.levels.joined(separator: ", "),
            reload: .restart(as: "logging.level"), doc: "How much the forwarder logs.", show: \.rawValue
        ) { (reader, node, key) throws(ConfigError) in
            let text = try reader.string(node, key: key).lowercased()
            guard let level = LogLevel(parsing: text) else {
                let allowed = ShakedConfiguration.LoggingSection.levels.joined(separator: ", ")
                throw reader.error(node, key: key, "'\(text)' is not a level; allowed: \(allowed)")
            }
            return level
        },
    ])

    /// A key holding an absolute path, unset by default.
    static func path(_ name: String, _ field: any (WritableKeyPath<Self, String?> & Sendable), _ doc: String) -> Key {
        Key(
            "broker", name, field, type: "absolute path", reload: .restart(as: "broker.\(name)"), doc: doc, show: { $0 }
        ) { (reader, node, key) throws(ConfigError) in try reader.path(node, key: key) }
    }

    /// One topic level, read.
    static func topicLevel(_ reader: NodeReader, _ node: Node, _ key: String) throws(ConfigError) -> String {
        let text = try reader.string(node, key: key)
        if let problem = NodeReader.topicLevelProblem(text) {
            throw reader.error(node, key: key, "'\(text)' \(problem)")
        }
        return text
    }
}
