// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import Logging
import ShakeConfig
import ShakeMQTT
import ShakeProtocol
import SystemdSupport
import UnixSignals

#if canImport(Glibc)
    import Glibc
#endif

@main
struct ShakedMQTT: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shaked-mqtt",
        abstract: "Forward shake events from shaked to an MQTT broker, with Home Assistant discovery.",
        discussion: """
            Subscribes to the shaked daemon and publishes every event to PREFIX/DEVICE/event (QoS 1 by default), \
            a retained PREFIX/DEVICE/availability (online, offline; the last will) and a retained \
            PREFIX/DEVICE/state, and Home Assistant's discovery configuration. Events that arrive while the broker \
            is away wait in a bounded queue. The configuration is /etc/shaked/mqtt.yaml and the *.yaml files of \
            /etc/shaked/mqtt.yaml.d; the password comes from a file or a systemd credential, never from the \
            command line. See shaked-mqtt(8) and shaked-mqtt.yaml(5).
            """,
        version: ShakedVersion.current)

    @Option(name: .long, help: "The configuration file (default: /etc/shaked/mqtt.yaml, when it exists).")
    var config: String?

    @Flag(
        name: .long, help: "Validate the configuration, print the settings in force and where each came from, and exit."
    )
    var checkConfig = false

    @Flag(name: .long, help: "Print the running forwarder's status (connected, queued, published, dropped) and exit.")
    var status = false

    @Flag(
        name: .long,
        help:
            "Remove this device from the broker: empty its retained availability, state and Home Assistant discovery topics."
    )
    var retire = false

    @Option(
        name: .long,
        help: "The daemon's socket (default: daemon.socket, else $SHAKED_SOCKET, else /run/shaked/shaked.sock).")
    var socket: String?

    @Option(name: .long, help: "The status file (default: $RUNTIME_DIRECTORY/status, else /run/shaked-mqtt/status).")
    var statusFile: String?

    @Option(
        name: .long, help: "Where the last delivered event is kept (default: $STATE_DIRECTORY/cursor; none without it)."
    )
    var cursorFile: String?

    @Option(name: .long, help: "trace, debug, info, notice, warning, error or critical (default: logging.level, info).")
    var logLevel: String?

    func validate() throws {
        if let logLevel, LogLevel(parsing: logLevel) == nil {
            throw ValidationError(
                "'\(logLevel)' is not a level; allowed: \(LogLevel.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if [checkConfig, status, retire].filter({ $0 }).count > 1 {
            throw ValidationError("--check-config, --status and --retire are each a command of their own")
        }
    }

    var environment: [String: String] { ProcessInfo.processInfo.environment }

    var defaultStatusPath: String {
        statusFile ?? environment["RUNTIME_DIRECTORY"].map { "\(firstDirectory($0))/status" }
            ?? "/run/shaked-mqtt/status"
    }

    func firstDirectory(_ list: String) -> String {
        String(list.split(separator: ":").first ?? Substring(list))
    }

    mutating func run() async throws {
        if status {
            guard let text = try? String(contentsOfFile: defaultStatusPath, encoding: .utf8),
                let status = ForwarderStatus(fileText: text)
            else {
                printError("shaked-mqtt: no status at \(defaultStatusPath): is the forwarder running?")
                throw ExitCode(1)
            }
            print(status.summary)
            return
        }
        let main = config ?? MQTTConfiguration.defaultPath
        var layered: Layered<MQTTConfiguration>
        do {
            layered = try MQTTConfiguration.load(
                main: main, mainMustExist: config != nil, dropIns: MQTTConfiguration.dropIns(for: main))
        } catch {
            printError("shaked-mqtt: the configuration is not valid:\n\(error)")
            throw ExitCode(78)  // EX_CONFIG
        }
        // The command line over the files.
        if let socket { layered.override(\.socket, with: socket, key: "daemon.socket", option: "--socket") }
        if let level = logLevel.flatMap(LogLevel.init(parsing:)) {
            layered.override(\.logLevel, with: level, key: "logging.level", option: "--log-level")
        }
        let configuration = layered.configuration
        let device =
            configuration.topics.device
            ?? DeviceName.choose(
                machineID: try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8), hostName: hostName())
        if checkConfig {
            printCheck(layered, device: device)
            return
        }
        let level = Logger.Level(rawValue: configuration.logLevel.rawValue) ?? .info
        let journal = JournalStream.isStandardErrorJournal(environment: environment)
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler =
                journal
                ? JournalLogHandler(label: label, identifier: "shaked-mqtt")
                : StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "shaked-mqtt")
        let password: String?
        do {
            password = try readPassword(configuration.broker)
        } catch {
            logger.error("cannot read the broker's password", metadata: ["reason": "\(error)"])
            throw ExitCode(78)
        }
        let settings = ForwarderSettings(
            configuration: configuration, device: device, deviceName: hostName(), password: password,
            sensitivity: daemonSensitivity(), statusPath: retire ? nil : defaultStatusPath,
            cursorPath: cursorFile ?? environment["STATE_DIRECTORY"].map { "\(firstDirectory($0))/cursor" },
            version: ShakedVersion.current)
        let forwarder = Forwarder(settings: settings, logger: logger)
        if retire {
            let done = try forwarder.retire(timeout: 10)
            guard done else {
                logger.error(
                    "the broker did not take the retirement", metadata: ["broker": "\(configuration.broker.address)"])
                throw ExitCode(1)
            }
            print("shaked-mqtt: \(device) retired from \(configuration.broker.address)")
            return
        }
        // A parent may hand down blocked signals: unblock the two that stop the forwarder, and trap them before
        // anything starts, so that even an early one says offline and disconnects cleanly.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for number in [SIGTERM, SIGINT] { sigaddset(&unblock, number) }
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        signal(SIGPIPE, SIG_IGN)
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        do {
            try await forwarder.run(
                socket: configuration.socket,
                stop: {
                    for await signal in signals {
                        logger.info("stopping on a signal", metadata: ["signal": "\(signal)"])
                        return
                    }
                })
        } catch {
            logger.error("the forwarder stopped", metadata: ["reason": "\(error)"])
            throw ExitCode(1)
        }
    }

    /// `--check-config`: the files read, then every key of the schema with its value in force and where it came
    /// from (a line per row, so a new key shows by its row alone), then the topics those values make.
    func printCheck(_ layered: Layered<MQTTConfiguration>, device: String) {
        let configuration = layered.configuration
        // What the forwarder makes of the keys left unset.
        var unset = [
            "broker.client_id": "shaked-\(device)", "topics.device": device,
            "daemon.socket": SocketPath.forClients(environment: environment),
        ]
        if configuration.broker.address.usesTLS { unset["broker.ca_file"] = "the system's (/etc/ssl/certs)" }
        var lines = ["files: \(layered.files.isEmpty ? "none (defaults)" : layered.files.joined(separator: ", "))"]
        lines += layered.keyLines(MQTTConfiguration.schema, unset: unset)
        let topics = ForwarderTopics(prefix: configuration.topics.prefix, device: device)
        lines.append("topics: \(topics.event), \(topics.availability), \(topics.state)")
        print(lines.joined(separator: "\n"))
    }

    /// The password from `broker.password_file` or the credential `broker.password_credential`: the first line.
    func readPassword(_ broker: MQTTConfiguration.BrokerSection) throws -> String? {
        let path: String
        if let file = broker.passwordFile {
            path = file
        } else if let name = broker.passwordCredential {
            guard let directory = environment["CREDENTIALS_DIRECTORY"] else {
                throw PasswordError(
                    "broker.password_credential names '\(name)', but no credentials were passed ($CREDENTIALS_DIRECTORY "
                        + "is unset; LoadCredential=\(name):FILE in the unit passes it)")
            }
            path = "\(directory)/\(name)"
        } else {
            return nil
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw PasswordError("\(path) cannot be read") }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count >= 0 else { throw PasswordError("\(path) cannot be read") }
        let text = String(decoding: buffer[..<count], as: UTF8.self)
        let line = text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let password = line.hasSuffix("\r") ? String(line.dropLast()) : line
        guard !password.isEmpty else { throw PasswordError("\(path) holds no password on its first line") }
        return password
    }

    struct PasswordError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// The daemon's detector sensitivity from its configuration, when readable.
    func daemonSensitivity() -> String? {
        let main = "/etc/shaked/shaked.yaml"
        let layered = try? ConfigLoader.loadLayered(
            main: main, mainMustExist: false, dropIns: ConfigLoader.dropIns(for: main))
        return layered?.configuration.detector.sensitivity.rawValue
    }

    func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "shaked" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A line on standard error.
func printError(_ text: String) {
    let bytes = Array((text + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}
