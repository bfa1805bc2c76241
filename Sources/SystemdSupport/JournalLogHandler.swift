// SPDX-License-Identifier: Apache-2.0
import CSystemd
public import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// A swift-log handler that writes to the systemd journal through `sd_journal_sendv`, one entry per message,
/// with the logger's metadata as structured fields (`sensor=...` becomes `SENSOR=...`), so that
/// `journalctl -u shaked SEQ=12` or `CLIENT_UID=1000` finds entries without parsing text.
public struct JournalLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    public var metadataProvider: Logger.MetadataProvider?
    /// `SYSLOG_IDENTIFIER`: the program's name in `journalctl` output.
    public let identifier: String
    private let label: String

    public init(label: String, identifier: String) {
        self.label = label
        self.identifier = identifier
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let fields = JournalFields.make(
            message: "\(event.message)", level: event.level, metadata: merged, identifier: identifier,
            logger: label, file: event.file, function: event.function, line: event.line)
        JournalFields.send(fields)
    }
}

/// The journal entry for one log message: pure, so it can be checked without a journal.
public enum JournalFields {
    /// syslog priorities: 2 critical ... 7 debug. swift-log's trace and debug both map to debug.
    public static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// The fields, each `NAME=value`, MESSAGE first.
    public static func make(
        message: String, level: Logger.Level, metadata: Logger.Metadata, identifier: String, logger: String,
        file: String, function: String, line: UInt
    ) -> [String] {
        var fields = [
            "MESSAGE=\(message)", "PRIORITY=\(priority(level))", "SYSLOG_IDENTIFIER=\(identifier)",
            "LOGGER=\(logger)", "CODE_FILE=\(file)", "CODE_LINE=\(line)", "CODE_FUNC=\(function)",
        ]
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            guard let name = fieldName(key) else { continue }
            fields.append("\(name)=\(value)")
        }
        return fields
    }

    /// A journal field name for a metadata key: upper case letters, digits and underscores, not starting with
    /// an underscore or a digit (those are reserved for fields the journal adds itself), at most 64 characters.
    public static func fieldName(_ key: String) -> String? {
        var name = String(
            key.uppercased().unicodeScalars.map { scalar -> Character in
                let isAllowed = ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_"
                return isAllowed ? Character(scalar) : "_"
            })
        while name.first == "_" { name.removeFirst() }
        if let first = name.first, first.isNumber { name = "F_" + name }
        guard !name.isEmpty else { return nil }
        let reserved = ["MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "LOGGER", "CODE_FILE", "CODE_LINE", "CODE_FUNC"]
        if reserved.contains(name) { name = "META_" + name }
        return String(name.prefix(64))
    }

    /// Sends an entry to the journal; fails silently, like a log line to a closed standard error would.
    public static func send(_ fields: [String]) {
        // One buffer holds every field; the vectors point into it while it is pinned.
        var bytes: [UInt8] = []
        var ranges: [(start: Int, count: Int)] = []
        for field in fields {
            ranges.append((bytes.count, field.utf8.count))
            bytes.append(contentsOf: field.utf8)
        }
        bytes.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            var vectors = ranges.map { iovec(iov_base: base + $0.start, iov_len: $0.count) }
            _ = sd_journal_sendv(&vectors, Int32(vectors.count))
        }
    }
}

/// Whether standard error goes to the journal: systemd sets `JOURNAL_STREAM` to the device and inode of the
/// stream it connects, and a process whose standard error was redirected since must not log to the journal.
public enum JournalStream {
    public static func isStandardErrorJournal(environment: [String: String]) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(STDERR_FILENO, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }
}
