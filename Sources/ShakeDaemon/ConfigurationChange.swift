// SPDX-License-Identifier: Apache-2.0
public import Logging
public import ShakeConfig
public import ShakeDetection
public import ShakeServer

/// What a reload changes: the configuration in force and the one read again (with the server's part of each,
/// accounts resolved) in, what applies now and what waits for a restart out. No I/O: the daemon applies it.
public struct ConfigurationChange: Sendable, Equatable {
    /// The detector's new settings, when they changed: a shake in progress is decided under them.
    public var detectorSettings: DetectorSettings?
    /// The server's new configuration, when it changed: limits apply from now on, and clients the new access
    /// rules no longer allow lose what they may no longer do (see ``AccessPolicy/revocation(for:wantsSamples:)``).
    public var server: ServerConfiguration?
    /// The new log level, when it changed.
    public var logLevel: Logger.Level?
    /// The new `sensor.always_on`, when it changed.
    public var alwaysOn: Bool?
    /// The sections that take effect now, for the log: `detector`, `clients`, `access`, `logging`,
    /// `sensor.always_on`.
    public var applied: [String] = []
    /// The keys that changed since the daemon started and take effect only when it restarts.
    public var needsRestart: [String] = []

    /// - Parameters:
    ///   - old: the configuration in force; `new`: the one read again; `started`: the one the daemon started
    ///     with (the sensor and socket in use).
    ///   - oldServer, newServer: the server's part of `old` and `new`; nil when there is no socket.
    public init(
        from old: ShakedConfiguration, to new: ShakedConfiguration, started: ShakedConfiguration,
        oldServer: ServerConfiguration?, newServer: ServerConfiguration?
    ) {
        if new.detector != old.detector {
            detectorSettings = new.detector.settings()
            applied.append("detector")
        }
        if let newServer, newServer != oldServer {
            server = newServer
            if new.clients != old.clients { applied.append("clients") }
            if new.access != old.access { applied.append("access") }
        }
        if new.logging != old.logging {
            logLevel = Logger.Level(new.logging.level)
            applied.append("logging")
        }
        if new.sensor.alwaysOn != old.sensor.alwaysOn {
            alwaysOn = new.sensor.alwaysOn
            applied.append("sensor.always_on")
        }
        if new.sensor.source != started.sensor.source { needsRestart.append("sensor.source") }
        if new.sensor.device != started.sensor.device { needsRestart.append("sensor.device") }
        if new.sensor.rate != started.sensor.rate { needsRestart.append("sensor.rate") }
        if new.sensor.relay != started.sensor.relay { needsRestart.append("sensor.relay") }
        if new.socket != started.socket { needsRestart.append("socket") }
        if new.sensor.followSession != started.sensor.followSession { needsRestart.append("sensor.follow_session") }
        if new.dbus != started.dbus { needsRestart.append("dbus") }
    }
}

extension Logger.Level {
    /// The logger's level for the configuration's.
    public init(_ level: LogLevel) {
        switch level {
        case .trace: self = .trace
        case .debug: self = .debug
        case .info: self = .info
        case .notice: self = .notice
        case .warning: self = .warning
        case .error: self = .error
        case .critical: self = .critical
        }
    }
}
