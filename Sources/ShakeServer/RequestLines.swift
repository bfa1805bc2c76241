// SPDX-License-Identifier: Apache-2.0
import NIOCore
import ShakeProtocol

/// A client's request bytes, split into lines one at a time, when the server asks for the next one. No I/O.
///
/// Unlike a decoder that hands on every line a read brought at once, nothing is split ahead of being handled:
/// what waits is the raw bytes of one read (a client whose lines wait is not read again), whatever those bytes
/// hold. The limit on a line is the one in force when the line is taken, so a reloaded `max_line_length` applies
/// to connections already open. A line over the limit is reported once as `tooLong` and its bytes are dropped up
/// to the next newline, so a peer that sends megabytes without a newline costs at most the limit.
struct RequestLines {
    private var buffer: ByteBuffer?
    private var discarding = false

    init() {}

    /// Bytes received and not yet taken as lines.
    var waitingBytes: Int { buffer?.readableBytes ?? 0 }

    mutating func append(_ bytes: ByteBuffer) {
        if buffer == nil || buffer!.readableBytes == 0 {
            buffer = bytes
        } else {
            var incoming = bytes
            buffer!.writeBuffer(&incoming)
        }
    }

    /// The next whole line (a trailing `\r` dropped), or nil when no whole line waits.
    mutating func next(maxLength: Int) -> LineFrameDecoder.Frame? {
        while var bytes = buffer, bytes.readableBytes > 0 {
            defer { buffer = bytes }
            let view = bytes.readableBytesView
            guard let newline = view.firstIndex(of: UInt8(ascii: "\n")) else {
                if discarding {
                    bytes.moveReaderIndex(forwardBy: bytes.readableBytes)
                } else if bytes.readableBytes > maxLength {
                    discarding = true
                    bytes.moveReaderIndex(forwardBy: bytes.readableBytes)
                    return .tooLong
                }
                return nil
            }
            let length = newline - view.startIndex
            if discarding {
                // The end of a line already reported as too long.
                bytes.moveReaderIndex(forwardBy: length + 1)
                discarding = false
                continue
            }
            if length > maxLength {
                bytes.moveReaderIndex(forwardBy: length + 1)
                return .tooLong
            }
            var line = bytes.readSlice(length: length)!
            bytes.moveReaderIndex(forwardBy: 1)
            if line.readableBytes > 0, line.getInteger(at: line.writerIndex - 1, as: UInt8.self) == UInt8(ascii: "\r") {
                line.moveWriterIndex(to: line.writerIndex - 1)
            }
            return .line(line)
        }
        buffer = nil
        return nil
    }

    /// Whether a whole line (or the end of a line too long) waits.
    var hasLine: Bool {
        guard let buffer else { return false }
        return buffer.readableBytesView.contains(UInt8(ascii: "\n"))
    }
}

extension RequestError {
    /// An empty line: not a request (it counts as a bad line, so that a flood of them is not free).
    static let emptyLine = RequestError(code: "empty_line", message: "an empty line is not a request")
}
