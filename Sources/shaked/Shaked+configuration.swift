import ArgumentParser
import Foundation
import ShakeConfig
import ShakeDetection

extension Shaked {
    /// The file to read: --config, else the installed one when it exists.
    var configPath: String? {
        config ?? (FileManager.default.fileExists(atPath: Self.defaultConfigPath) ? Self.defaultConfigPath : nil)
    }

    /// The configuration in force: the file's (or the defaults), with the options given on the command line
    /// over it. Called at start and on every reload, so the command line keeps winning.
    /// - Throws: ``ConfigError`` naming the file and key.
    func effectiveConfiguration(path: String?) throws(ConfigError) -> ShakedConfiguration {
        var configuration =
            try path.map { path throws(ConfigError) in try ConfigLoader.load(path: path) }
            ?? ShakedConfiguration()
        if let source { configuration.sensor.source = source }
        if let device { configuration.sensor.device = device }
        if let rate { configuration.sensor.rate = rate }
        if alwaysOn { configuration.sensor.alwaysOn = true }
        if let sensitivity { configuration.detector.sensitivity = sensitivity }
        if let logLevel { configuration.logging.level = logLevel.lowercased() }
        if let socket { configuration.socket.path = socket }
        if let socketMode, let mode = ShakedConfiguration.SocketSection.mode(parsing: socketMode) {
            configuration.socket.mode = mode
        }
        if let socketGroup { configuration.socket.group = .group(.name(socketGroup)) }
        if let adminGroup {
            configuration.access.samples = .accounts([.group(.name(adminGroup))])
            configuration.access.simulate = .accounts([.group(.name(adminGroup))])
        }
        // The combination must hold too: a preset from the command line with the file's parameters.
        do {
            try configuration.detector.settings().validate()
        } catch {
            throw ConfigError(
                file: path ?? "the command line", key: "detector.\(error.parameter.rawValue)", message: error.reason)
        }
        return configuration
    }

    /// `--check-config [FILE]`: validates, prints what the daemon would run with, and returns the exit status.
    func checkConfiguration() -> Int32 {
        let path = file ?? config ?? Self.defaultConfigPath
        guard file != nil || config != nil || FileManager.default.fileExists(atPath: path) else {
            print("no configuration file at \(path): the built-in defaults apply")
            return 0
        }
        do {
            let configuration = try effectiveConfiguration(path: path)
            print("\(path): valid")
            print(ConfigurationSummary.lines(configuration).joined(separator: "\n"))
            return 0
        } catch {
            FileHandle.standardError.write(Data("shaked: \(error)\n".utf8))
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
            .map { "\($0.key.rawValue) \(JSONNumber.format($0.value))" }
        let socket = configuration.socket
        let clients = configuration.clients
        return [
            "sensor:   \(sensor.source), device \(sensor.device ?? "auto"), \(JSONNumber.format(sensor.rate)) Hz"
                + (sensor.alwaysOn ? ", always on" : ", only while somebody listens"),
            "detector: \(detector.sensitivity.rawValue)"
                + (overrides.isEmpty ? "" : " with \(overrides.joined(separator: ", "))"),
            "socket:   \(socket.path ?? "default path"), mode 0\(String(socket.mode, radix: 8)), group "
                + (socket.group?.description ?? "unchanged"),
            "clients:  at most \(clients.maxClients), queue \(clients.queueLimit), drop limit \(clients.dropLimit), "
                + "lines \(clients.maxLineLength) bytes, \(clients.maxBadLines) bad lines, replay \(clients.replayCapacity)",
            "access:   subscribe \(configuration.access.subscribe); samples \(configuration.access.samples); "
                + "simulate \(configuration.access.simulate) (root always)",
            "logging:  \(configuration.logging.level)",
        ]
    }
}

enum JSONNumber {
    static func format(_ value: Double) -> String {
        JSONObjectWriter.format(value, decimals: 3)
    }
}
