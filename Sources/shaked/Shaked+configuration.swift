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
        if let source { layered.override(\.sensor.source, with: source, key: "sensor.source", option: "--source") }
        if let device { layered.override(\.sensor.device, with: device, key: "sensor.device", option: "--device") }
        if let rate { layered.override(\.sensor.rate, with: rate, key: "sensor.rate", option: "--rate") }
        if alwaysOn {
            layered.override(\.sensor.alwaysOn, with: true, key: "sensor.always_on", option: "--always-on")
        }
        if let sensitivity {
            layered.override(
                \.detector.sensitivity, with: sensitivity, key: "detector.sensitivity", option: "--sensitivity")
        }
        if let logLevel {
            layered.override(\.logging.level, with: logLevel, key: "logging.level", option: "--log-level")
        }
        if let socket { layered.override(\.socket.path, with: socket, key: "socket.path", option: "--socket") }
        if let socketMode, let mode = ShakedConfiguration.SocketSection.mode(parsing: socketMode) {
            layered.override(\.socket.mode, with: mode, key: "socket.mode", option: "--socket-mode")
        }
        if let socketGroup {
            layered.override(
                \.socket.group, with: .group(.name(socketGroup)), key: "socket.group", option: "--socket-group")
        }
        if let adminGroup {
            let admins = AccessRule.accounts([.group(.name(adminGroup))])
            layered.override(\.access.samples, with: admins, key: "access.samples", option: "--admin-group")
            layered.override(\.access.simulate, with: admins, key: "access.simulate", option: "--admin-group")
        }
        // The combination must hold too: a preset from the command line with the files' parameters.
        do {
            try layered.configuration.detector.settings().validate()
        } catch {
            let key = "detector.\(error.parameter.rawValue)"
            throw ConfigErrors([
                ConfigError(
                    file: layered.origins[key] ?? layered.files.last ?? "the command line", key: key,
                    message: error.reason)
            ])
        }
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
            lines += ShakedConfiguration.schema.summary(layered.configuration)
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
