// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import Logging
import ShakeConfig
import ShakeDaemon
import ShakeProtocol
import ShakeServer
import SystemdSupport

#if canImport(Glibc)
    import Glibc
#endif

extension Shaked {
    /// Wires the daemon: configuration, logging, the source and the event outputs.
    func build() throws -> Daemon {
        let path = configPath
        let configuration: ShakedConfiguration
        var configError: ConfigErrors?
        do {
            configuration = try effectiveConfiguration(path: path)
        } catch {
            configuration = ShakedConfiguration()
            configError = error
        }
        let level = LogLevelControl(Logger.Level(configuration.logging.level))
        let logger = Self.bootstrapLogging(level: level)
        if let configError {
            // A bad configuration at start refuses to start, saying why.
            for problem in configError.errors {
                logger.critical("refusing to start", metadata: ["error": "\(problem)"])
            }
            throw ExitCode(64)
        }
        logger.info(
            "configuration", metadata: ["file": "\(path ?? "built-in defaults (no \(Self.defaultConfigPath))")"])
        for line in ShakedConfiguration.schema.summary(configuration) {
            logger.debug("configuration section", metadata: ["section": "\(line)"])
        }

        let run = Daemon.RunOptions(
            printEvents: printEvents, speed: speed, loop: loop, listener: noSocket ? nil : listener(configuration))
        let reload: @Sendable () throws -> ShakedConfiguration = { [self] in
            try effectiveConfiguration(path: configPath)
        }
        return Daemon(
            configuration: configuration, run: run, logger: logger, logLevel: level, reload: reload,
            configPath: { [self] in configPath })
    }

    /// Journald with structured fields when standard error is the journal (systemd sets JOURNAL_STREAM),
    /// else readable lines on standard error, control characters escaped either way. The level can change on
    /// reload.
    static func bootstrapLogging(level: LogLevelControl) -> Logger {
        let journal = JournalStream.isStandardErrorJournal(environment: ProcessInfo.processInfo.environment)
        LoggingSystem.bootstrap { label in
            let handler: any LogHandler =
                journal
                ? JournalLogHandler(label: label, identifier: "shaked") : StreamLogHandler.standardError(label: label)
            return LevelControlledLogHandler(PrintableLogHandler(handler), level: level)
        }
        return Logger(label: "shaked")
    }

    /// Where to listen: a socket passed by systemd wins over the configured path.
    func listener(_ configuration: ShakedConfiguration) -> ShakeServer.Listener {
        let environment = ProcessInfo.processInfo.environment
        if let passed = ListenFDs.from(environment: environment, pid: getpid()), let fd = passed.descriptors.first {
            for name in ListenFDs.variables { unsetenv(name) }
            return .descriptor(fd)
        }
        let path = configuration.socket.path ?? SocketPath.default(environment: environment)
        // The folder of the (absolute) path: what comes before its last slash.
        let directory = path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        if !FileManager.default.fileExists(atPath: directory) {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        let group = configuration.socket.group.flatMap { AccountResolver.system.resolve($0)?.id }
        return .path(path, mode: configuration.socket.mode, group: group)
    }
}
