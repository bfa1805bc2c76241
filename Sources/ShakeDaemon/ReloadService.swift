// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import Logging
import ServiceLifecycle
import ShakeConfig
import ShakeDetection
import ShakeServer
import UnixSignals

/// SIGHUP: reads the configuration again. The signal is trapped before the group starts (the daemon may say it is
/// ready before this service runs), so none is lost in between.
struct ReloadService: Service {
    let hangUps: UnixSignalsSequence
    let reload: ConfigurationReload

    func run() async {
        for await _ in hangUps.cancelOnGracefulShutdown() {
            await reload.run()
        }
    }
}

/// The configuration in force, and what a reload does with a new one: ``ConfigurationChange`` decides, this
/// applies it to the parts that own each setting (the detector, the server, the log level, the bus's access
/// rule, the capture gate) and says so in the log and to systemd.
final class ConfigurationReload: Sendable {
    struct Parts: Sendable {
        let source: SourceLoop
        let server: ShakeServer?
        let bus: ShakeBus?
        let capture: CaptureSwitch
        let status: StatusBoard
        let notices: SystemdNotices
        let logLevel: LogLevelControl
    }

    /// The configuration the daemon started with: sensor and socket changes need a restart.
    private let started: ShakedConfiguration
    /// The configuration in force (the latest that validated).
    private let inForce: Locked<ShakedConfiguration>
    private let read: @Sendable () throws -> ShakedConfiguration
    private let path: @Sendable () -> String?
    private let parts: Parts
    private let logger: Logger

    init(
        started: ShakedConfiguration, read: @escaping @Sendable () throws -> ShakedConfiguration,
        path: @escaping @Sendable () -> String?, parts: Parts, logger: Logger
    ) {
        self.started = started
        inForce = Locked(started)
        self.read = read
        self.path = path
        self.parts = parts
        self.logger = logger
    }

    /// The detector's settings in force.
    var settings: DetectorSettings { inForce.withLock { $0.detector }.settings() }

    /// Reads the configuration again. A file that does not validate changes nothing; one that does takes effect
    /// at once for the detector (a shake in progress is decided under the new settings), access, client limits,
    /// capture always-on and the log level. Sensor and socket changes need a restart.
    func run() async {
        parts.notices.notifier.reloading()
        logger.info("reloading the configuration", metadata: ["file": "\(path() ?? "none: built-in defaults")"])
        let new: ShakedConfiguration
        do {
            new = try read()
        } catch {
            // Whatever was wrong (a file that does not validate, cannot be read or may not be trusted), the reload
            // ends here: the settings in force stay, and systemd hears READY again.
            parts.status.update { $0.rejectedReloads += 1 }
            let problems = (error as? ConfigErrors)?.errors.map(\.description) ?? ["\(error)"]
            for problem in problems {
                logger.error("configuration rejected; the running settings stay", metadata: ["error": "\(problem)"])
            }
            parts.notices.notifier.ready(status: "configuration rejected: \(problems.joined(separator: "; "))")
            return
        }
        let old = inForce.withLock { $0 }
        let server = parts.server
        let newServer = ServerConfiguration(new)
        let change = ConfigurationChange(
            from: old, to: new, started: started, oldServer: server.map { _ in ServerConfiguration(old) },
            newServer: server.map { _ in newServer })
        if let settings = change.detectorSettings { parts.source.update(settings: settings) }
        if let server, let configuration = change.server { await server.update(configuration) }
        if let level = change.logLevel { parts.logLevel.level = level }
        inForce.withLock { $0 = new }
        parts.status.update {
            $0.reloads += 1
            $0.sensitivity = new.detector.sensitivity
        }
        parts.bus?.accessChanged(newServer.access.subscribe)
        parts.status.changed()
        if let alwaysOn = change.alwaysOn { parts.capture.update { $0.alwaysOnChanged(alwaysOn) } }
        if !change.needsRestart.isEmpty {
            logger.warning(
                "changed settings take effect when the daemon restarts",
                metadata: ["keys": "\(change.needsRestart.joined(separator: ", "))"])
        }
        logger.info(
            "configuration reloaded",
            metadata: [
                "changed": "\(change.applied.isEmpty ? "nothing" : change.applied.joined(separator: ", "))",
                "sensitivity": "\(new.detector.sensitivity.rawValue)",
            ])
        parts.notices.notifier.ready(status: "configuration reloaded")
    }
}
