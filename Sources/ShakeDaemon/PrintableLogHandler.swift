// SPDX-License-Identifier: Apache-2.0
public import Logging
import NumberFormat

/// Wraps a log handler so that what it writes has no control characters: the message and every metadata value
/// are escaped (``PrintableText``) before the handler sees them. Log lines quote values from the configuration,
/// file names and errors, which may hold an escape sequence or a newline (a double-quoted `"\e[2J"` in a file, a
/// drop-in named with a newline), and standard error may be a terminal or a log that is read line by line.
public struct PrintableLogHandler: LogHandler {
    private var handler: any LogHandler

    public init(_ handler: any LogHandler) {
        self.handler = handler
    }

    public var logLevel: Logger.Level {
        get { handler.logLevel }
        set { handler.logLevel = newValue }
    }

    public var metadata: Logger.Metadata {
        get { handler.metadata }
        set { handler.metadata = newValue.mapValues(Self.printable) }
    }

    public var metadataProvider: Logger.MetadataProvider? {
        get { handler.metadataProvider }
        set { handler.metadataProvider = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { handler[metadataKey: key] }
        set { handler[metadataKey: key] = newValue.map(Self.printable) }
    }

    public func log(event: LogEvent) {
        var event = event
        event.message = Logger.Message(stringLiteral: PrintableText.escaping(event.message.description))
        event.metadata = event.metadata?.mapValues(Self.printable)
        handler.log(event: event)
    }

    /// A metadata value with its text escaped, lists and dictionaries item by item.
    static func printable(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): .string(PrintableText.escaping(text))
        case .stringConvertible(let convertible): .string(PrintableText.escaping(convertible.description))
        case .array(let items): .array(items.map(printable))
        case .dictionary(let entries): .dictionary(entries.mapValues(printable))
        }
    }
}
