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
        // Each key as the schema says: applied by its part of the daemon, or waiting for a restart.
        var changed = Set<ReloadPolicy.Applier>()
        var appliedNames: [(ReloadPolicy.Applier, String)] = []
        for key in ShakedConfiguration.schema.keys {
            switch key.reload {
            case .applied(let applier, let name):
                guard key.differs(new, old) else { continue }
                changed.insert(applier)
                if !appliedNames.contains(where: { $0.1 == name }) { appliedNames.append((applier, name)) }
            case .restart(let name):
                if key.differs(new, started), !needsRestart.contains(name) { needsRestart.append(name) }
            }
        }
        if changed.contains(.detector) { detectorSettings = new.detector.settings() }
        // Clients and access reach the server as it resolves them: nothing applies without a socket, or when the
        // accounts named resolve as before.
        let serverChanged = newServer.map { $0 != oldServer } ?? false
        if serverChanged { server = newServer }
        if changed.contains(.logLevel) { logLevel = Logger.Level(new.logging.level) }
        if changed.contains(.alwaysOn) { alwaysOn = new.sensor.alwaysOn }
        // Whole sections first, then single keys.
        let names = appliedNames.filter { $0.0 != .server || serverChanged }.map(\.1)
        applied = names.filter { !$0.contains(".") } + names.filter { $0.contains(".") }
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
