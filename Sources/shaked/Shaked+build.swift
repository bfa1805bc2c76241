import ArgumentParser
import Foundation
import IIOSensor
import Logging
import ShakeConfig
import ShakeDetection
import ShakeProtocol
import ShakeServer
import SystemdSupport

/// Where samples come from, as `--source` names it.
enum SourceSpec: Equatable {
    /// Linux IIO through libiio; nil for the local context.
    case iio(uri: String?)
    case replay(path: String)

    init?(parsing text: String) {
        if text == "iio" {
            self = .iio(uri: nil)
        } else if text.hasPrefix("iio:"), text.count > 4 {
            self = .iio(uri: String(text.dropFirst(4)))
        } else if text.hasPrefix("replay:"), text.count > 7 {
            self = .replay(path: String(text.dropFirst(7)))
        } else {
            return nil
        }
    }
}

enum LogLevelName {
    static func parse(_ text: String) -> Logger.Level? {
        Logger.Level(rawValue: text.lowercased())
    }
}

extension Shaked {
    /// Wires the daemon: logging, the detector's settings, the source and the event output.
    func build() throws -> Daemon {
        let level = LogLevelName.parse(logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "shaked")

        // Settings: the command line over the configuration file over the defaults.
        let settings: DetectorSettings
        do {
            settings = try ConfigLoader.detectorSettings(configPath: config, sensitivity: sensitivity).settings
        } catch {
            logger.critical("\(error)")
            throw ExitCode(64)
        }

        let sink = EventSink(printEvents: printEvents, logger: logger)
        let options = daemonOptions(logger: logger)
        switch SourceSpec(parsing: source)! {
        case .iio(let uri):
            let configuration = SensorSource.Configuration(
                request: device.map(DeviceRequest.init(parsing:)) ?? .automatic, rate: rate)
            return Daemon(
                settings: settings, sink: sink, logger: logger,
                input: .iio(backend: LibIIOBackend(uri: uri), configuration: configuration), options: options)
        case .replay(let path):
            return Daemon(
                settings: settings, sink: sink, logger: logger,
                input: .replay(path: path, speed: speed, loop: loop), options: options)
        }
    }

    /// Where to listen (a socket passed by systemd wins), and who may do what.
    func daemonOptions(logger: Logger) -> Daemon.Options {
        var options = Daemon.Options()
        options.printEvents = printEvents
        options.alwaysOn = alwaysOn
        let environment = ProcessInfo.processInfo.environment
        if noSocket {
            options.listener = nil
        } else if let passed = ListenFDs.from(environment: environment, pid: getpid()),
            let fd = passed.descriptors.first
        {
            for name in ListenFDs.variables { unsetenv(name) }
            options.listener = .descriptor(fd)
        } else {
            let path = socket ?? SocketPath.default(environment: environment)
            let directory = (path as NSString).deletingLastPathComponent
            if !FileManager.default.fileExists(atPath: directory) {
                try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            }
            let group = socketGroup.flatMap { getgrnam($0)?.pointee.gr_gid }
            options.listener = .path(path, mode: UInt32(socketMode, radix: 8) ?? 0o666, group: group)
        }
        if let group = getgrnam(adminGroup) {
            options.serverConfiguration.access.privileged = PeerRule(users: [], groups: [group.pointee.gr_gid])
        } else {
            logger.debug("no group \(adminGroup): only root may stream samples and simulate shakes")
        }
        return options
    }
}
