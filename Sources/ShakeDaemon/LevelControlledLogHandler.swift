// SPDX-License-Identifier: Apache-2.0
import BlockingWork
public import Logging

/// The daemon's log level, shared by every logger so that a reload can change it.
public final class LogLevelControl: Sendable {
    private let current: Locked<Logger.Level>

    public init(_ level: Logger.Level) {
        current = Locked(level)
    }

    public var level: Logger.Level {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }
}

/// Wraps a log handler so that its level is the daemon's, wherever the logger was copied to.
public struct LevelControlledLogHandler: LogHandler {
    private var handler: any LogHandler
    private let control: LogLevelControl

    public init(_ handler: any LogHandler, level control: LogLevelControl) {
        var handler = handler
        handler.logLevel = .trace  // The control filters.
        self.handler = handler
        self.control = control
    }

    public var logLevel: Logger.Level {
        get { control.level }
        set { control.level = newValue }
    }

    public var metadata: Logger.Metadata {
        get { handler.metadata }
        set { handler.metadata = newValue }
    }

    public var metadataProvider: Logger.MetadataProvider? {
        get { handler.metadataProvider }
        set { handler.metadataProvider = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { handler[metadataKey: key] }
        set { handler[metadataKey: key] = newValue }
    }

    public func log(event: LogEvent) {
        handler.log(event: event)
    }
}
