// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import NumberFormat
import ShakeConfig
import ShakeDetection

#if canImport(Glibc)
    import Glibc
#endif

extension Shaked {
    /// The file to read: --config, else the installed one when it exists.
    var configPath: String? {
        config ?? (FileManager.default.fileExists(atPath: Self.defaultConfigPath) ? Self.defaultConfigPath : nil)
    }

    /// The configuration in force: the file's (or the defaults), then the drop-ins
    /// (`/usr/lib/shaked/shaked.yaml.d`, `FILE.d`), with the options given on the command line over it all.
    /// Called at start and on every reload, so the command line keeps winning.
    /// - Parameters:
    ///   - path: the main file, which must exist; nil: the installed one when it exists.
    ///   - accounts: looks up the users and groups the files name.
    /// - Throws: ``ConfigErrors`` naming every problem's file, line and key.
    func effectiveConfiguration(
        path: String?, accounts: AccountResolver = .system
    ) throws(ConfigErrors) -> ShakedConfiguration {
        try layeredConfiguration(path: path, accounts: accounts).configuration
    }

    /// ``effectiveConfiguration(path:accounts:)`` with the files read and where each value came from.
    func layeredConfiguration(
        path: String?, accounts: AccountResolver = .system
    ) throws(ConfigErrors) -> LayeredConfiguration {
        let main = path ?? Self.defaultConfigPath
        var layered = try ConfigLoader.loadLayered(
            main: main, mainMustExist: path != nil, dropIns: ConfigLoader.dropIns(for: main), accounts: accounts)
        var configuration = layered.configuration
        func given(_ key: String, _ option: String) { layered.origins[key] = "the command line (\(option))" }
        if let source {
            configuration.sensor.source = source
            given("sensor.source", "--source")
        }
        if let device {
            configuration.sensor.device = device
            given("sensor.device", "--device")
        }
        if let rate {
            configuration.sensor.rate = rate
            given("sensor.rate", "--rate")
        }
        if alwaysOn {
            configuration.sensor.alwaysOn = true
            given("sensor.always_on", "--always-on")
        }
        if let sensitivity {
            configuration.detector.sensitivity = sensitivity
            given("detector.sensitivity", "--sensitivity")
        }
        if let logLevel {
            configuration.logging.level = logLevel
            given("logging.level", "--log-level")
        }
        if let socket {
            configuration.socket.path = socket
            given("socket.path", "--socket")
        }
        if let socketMode, let mode = ShakedConfiguration.SocketSection.mode(parsing: socketMode) {
            configuration.socket.mode = mode
            given("socket.mode", "--socket-mode")
        }
        if let socketGroup {
            configuration.socket.group = .group(.name(socketGroup))
            given("socket.group", "--socket-group")
        }
        if let adminGroup {
            configuration.access.samples = .accounts([.group(.name(adminGroup))])
            configuration.access.simulate = .accounts([.group(.name(adminGroup))])
            given("access.samples", "--admin-group")
            given("access.simulate", "--admin-group")
        }
        // The combination must hold too: a preset from the command line with the files' parameters.
        do {
            try configuration.detector.settings().validate()
        } catch {
            let key = "detector.\(error.parameter.rawValue)"
            throw ConfigErrors([
                ConfigError(
                    file: layered.origins[key] ?? layered.files.last ?? "the command line", key: key,
                    message: error.reason)
            ])
        }
        layered.configuration = configuration
        return layered
    }

    /// `--check-config [FILE]`: validates the file and its drop-ins, prints what the daemon would run with and
    /// where each value comes from, or every problem; returns the exit status. Every line is printed with its
    /// control characters escaped: file names and values (a double-quoted `"\e[2J"`) must not drive the terminal.
    func checkConfiguration() -> Int32 {
        let path = file ?? config
        do {
            let layered = try layeredConfiguration(path: path ?? configPath)
            let defaults = ShakedConfiguration()
            var lines: [String] = []
            if layered.files.isEmpty {
                lines.append("no configuration file at \(Self.defaultConfigPath): the built-in defaults apply")
            } else {
                lines += layered.files.map { "\($0): valid" }
            }
            lines += ConfigurationSummary.lines(layered.configuration)
            // Every key away from its default, as the schema shows it: a new key appears here by its row alone.
            let changed = ShakedConfiguration.schema.keys.filter { $0.differs(layered.configuration, defaults) }
            if !changed.isEmpty {
                lines.append(
                    "not default: "
                        + changed.map { "\($0.path) \($0.value(layered.configuration) ?? "unset")" }.joined(
                            separator: ", "))
            }
            if layered.origins.isEmpty {
                lines.append("every value is the default")
            } else {
                lines.append("set by:")
                let width = layered.origins.keys.map(\.count).max()! + 2
                for key in layered.origins.keys.sorted() {
                    lines.append(
                        "  " + key + ":" + String(repeating: " ", count: width - key.count - 1) + layered.origins[key]!)
                }
            }
            for line in lines { print(PrintableText.escaping(line)) }
            return 0
        } catch {
            for problem in error.errors {
                _ = Array("shaked: \(problem)\n".utf8).withUnsafeBytes {
                    write(STDERR_FILENO, $0.baseAddress, $0.count)
                }
            }
            return 64
        }
    }
}

/// A readable account of a configuration, for `--check-config` and the log.
enum ConfigurationSummary {
    static func lines(_ configuration: ShakedConfiguration) -> [String] {
        let sensor = configuration.sensor
        let detector = configuration.detector
        let overrides = detector.overrides.sorted { $0.key.rawValue < $1.key.rawValue }
            .map { "\($0.key.rawValue) \(DecimalText.format($0.value, decimals: 3))" }
        let socket = configuration.socket
        let clients = configuration.clients
        return [
            "sensor:   \(sensor.source), device \(sensor.device == .automatic ? "auto" : sensor.device.description), \(DecimalText.format(sensor.rate, decimals: 3)) Hz"
                + (sensor.alwaysOn ? ", always on" : ", only while somebody listens"),
            "detector: \(detector.sensitivity.rawValue)"
                + (overrides.isEmpty ? "" : " with \(overrides.joined(separator: ", "))"),
            "socket:   \(socket.path ?? "default path"), mode 0\(String(socket.mode, radix: 8)), group "
                + (socket.group?.description ?? "unchanged"),
            "clients:  at most \(clients.maxClients), queue \(clients.queueLimit), drop limit \(clients.dropLimit), "
                + "lines \(clients.maxLineLength) bytes, \(clients.maxBadLines) bad lines, replay \(clients.replayCapacity), "
                + "\(clients.maxClientsPerUser) per user, \(clients.reservedClients) reserved, buffers "
                + "\(clients.clientBuffer) bytes a client and \(clients.totalBuffer) in all",
            "access:   subscribe \(configuration.access.subscribe); samples \(configuration.access.samples); "
                + "simulate \(configuration.access.simulate); key \(configuration.access.key) (root always)",
            "logging:  \(configuration.logging.level)",
        ]
    }
}
