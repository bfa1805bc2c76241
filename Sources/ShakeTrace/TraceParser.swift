// SPDX-License-Identifier: Apache-2.0
public import ShakeDetection

/// Parses the trace format: CSV with the header `time,x,y,z` (seconds; m/s², gravity included).
///
/// Lines starting with `#` are comments and blank lines are ignored, before or after the header. Every other
/// line must be a row of exactly four numbers. Values may be `nan` or `inf` (a sensor can deliver them; the
/// detector drops them), but anything that is not a number is an error naming the line. Spaces around fields
/// and Windows line endings are accepted.
public struct TraceParser: Sendable {
    /// The name used in error messages.
    public var source: String

    public init(source: String) {
        self.source = source
    }

    /// The only header the format has.
    public static let header = "time,x,y,z"

    /// Parses a whole trace held in memory.
    /// - Throws: ``TraceError`` naming the first malformed line.
    public func parse(_ bytes: [UInt8]) throws(TraceError) -> [Sample] {
        var samples: [Sample] = []
        samples.reserveCapacity(bytes.count / 28)
        try parse(bytes) { samples.append($0) }
        return samples
    }

    /// Parses a trace given as text.
    public func parse(_ text: String) throws(TraceError) -> [Sample] {
        try parse(Array(text.utf8))
    }

    /// Parses a whole trace, handing each sample to `body` in order.
    public func parse(_ bytes: [UInt8], _ body: (Sample) -> Void) throws(TraceError) {
        var parser = self
        var lineStart = 0
        let end = bytes.count
        while lineStart < end {
            var lineEnd = lineStart
            while lineEnd < end, bytes[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
            if let sample = try parser.feed(line: bytes[lineStart..<lineEnd]) { body(sample) }
            lineStart = lineEnd + 1
        }
        try parser.finish()
    }

    /// The longest line the format has room for: a row of four numbers takes under a hundred bytes, and a comment
    /// that needs more is not a trace. Longer lines are an error, so that input that is not a trace (a binary
    /// file, /dev/zero) costs bounded memory.
    public static let maxLineLength = 4096

    private var lineNumber = 0
    private var sawHeader = false

    /// Parses the next line (without its newline), one at a time: the streaming form of ``parse(_:_:)``.
    /// - Returns: the line's sample, or nil for a comment, a blank line or the header.
    /// - Throws: ``TraceError`` naming the line when it is malformed or longer than ``maxLineLength``.
    public mutating func feed(line bytes: ArraySlice<UInt8>) throws(TraceError) -> Sample? {
        lineNumber += 1
        guard bytes.count <= Self.maxLineLength else {
            throw TraceError(
                file: source, line: lineNumber,
                message: "longer than \(Self.maxLineLength) bytes: not a trace (CSV time,x,y,z)")
        }
        let line = trimmed(bytes, bytes.startIndex..<bytes.endIndex)
        guard !line.isEmpty, bytes[line.lowerBound] != UInt8(ascii: "#") else { return nil }
        if !sawHeader {
            let text = String(decoding: bytes[line], as: UTF8.self)
            guard
                text.unicodeScalars.filter({ $0 != " " && $0 != "\t" }).map(String.init).joined()
                    == Self.header
            else {
                // What the line holds is not quoted: a file that is not a trace (`replay:/etc/shadow`, named by
                // whoever may edit a configuration) must not have its first line copied into an error or a log.
                throw TraceError(
                    file: source, line: lineNumber,
                    message: "expected the header '\(Self.header)': not a trace (CSV time,x,y,z)")
            }
            sawHeader = true
            return nil
        }
        return try parseRow(bytes, line, lineNumber: lineNumber)
    }

    /// Ends a streamed parse.
    /// - Throws: ``TraceError`` when no header was seen.
    public func finish() throws(TraceError) {
        guard sawHeader else {
            throw TraceError(file: source, message: "empty trace: no '\(Self.header)' header")
        }
    }

    private static let fieldNames = ["time", "x", "y", "z"]

    private func parseRow(_ bytes: ArraySlice<UInt8>, _ line: Range<Int>, lineNumber: Int) throws(TraceError) -> Sample
    {
        var values = (0.0, 0.0, 0.0, 0.0)
        var count = 0
        var fieldStart = line.lowerBound
        while true {
            var fieldEnd = fieldStart
            while fieldEnd < line.upperBound, bytes[fieldEnd] != UInt8(ascii: ",") { fieldEnd += 1 }
            guard count < 4 else {
                throw TraceError(
                    file: source, line: lineNumber, message: "expected 4 fields (time,x,y,z), found more")
            }
            let field = trimmed(bytes, fieldStart..<fieldEnd)
            let text = String(decoding: bytes[field], as: UTF8.self)
            guard let value = Double(text) else {
                let name = Self.fieldNames[count]
                throw TraceError(
                    file: source, line: lineNumber,
                    message: text.isEmpty ? "\(name) is empty" : "\(name) is not a number: '\(text.prefix(40))'")
            }
            switch count {
            case 0: values.0 = value
            case 1: values.1 = value
            case 2: values.2 = value
            default: values.3 = value
            }
            count += 1
            guard fieldEnd < line.upperBound else { break }
            fieldStart = fieldEnd + 1
        }
        guard count == 4 else {
            throw TraceError(
                file: source, line: lineNumber, message: "expected 4 fields (time,x,y,z), found \(count)")
        }
        return Sample(time: values.0, x: values.1, y: values.2, z: values.3)
    }

    private func trimmed(_ bytes: ArraySlice<UInt8>, _ range: Range<Int>) -> Range<Int> {
        var start = range.lowerBound
        var end = range.upperBound
        while start < end, Self.isSpace(bytes[start]) { start += 1 }
        while start < end, Self.isSpace(bytes[end - 1]) { end -= 1 }
        return start..<end
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }
}
