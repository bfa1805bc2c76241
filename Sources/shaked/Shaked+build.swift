import ArgumentParser
import IIOSensor
import Logging
import ShakeConfig
import ShakeDetection

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
            let section = try config.map { try ConfigLoader.load(path: $0).detector } ?? .init()
            settings = section.settings(sensitivity: sensitivity)
            try settings.validate()
        } catch {
            logger.critical("\(error)")
            throw ExitCode(64)
        }

        let sink = EventSink(printEvents: printEvents, logger: logger)
        switch SourceSpec(parsing: source)! {
        case .iio(let uri):
            let configuration = SensorSource.Configuration(
                request: device.map(DeviceRequest.init(parsing:)) ?? .automatic, rate: rate)
            return Daemon(
                settings: settings, sink: sink, logger: logger,
                input: .iio(backend: LibIIOBackend(uri: uri), configuration: configuration))
        case .replay(let path):
            return Daemon(
                settings: settings, sink: sink, logger: logger,
                input: .replay(path: path, speed: speed, loop: loop))
        }
    }
}
