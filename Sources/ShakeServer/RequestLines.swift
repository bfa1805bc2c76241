// SPDX-License-Identifier: Apache-2.0
import NIOCore
import ShakeProtocol

/// A client's request bytes, split into lines one at a time, when the server asks for the next one. No I/O.
///
/// Unlike a decoder that hands on every line a read brought at once, nothing is split ahead of being handled:
/// what waits is the raw bytes of one read (a client whose lines wait is not read again), whatever those bytes
/// hold. The limit on a line is the one in force when the line is taken, so a reloaded `max_line_length` applies
/// to connections already open. The lines are split by ``LineSplitter``, as the client splits the daemon's: a
/// line over the limit is reported once as `tooLong` and its bytes are dropped up to the next newline, so a peer
/// that sends megabytes without a newline costs at most the limit.
struct RequestLines {
    private var buffer: ByteBuffer?
    private var splitter = LineSplitter()

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
    mutating func next(maxLength: Int) -> LineSplitter.Frame? {
        guard var bytes = buffer.take(), bytes.readableBytes > 0 else { return nil }
        let frame = splitter.next(from: &bytes, maxLength: maxLength)
        if bytes.readableBytes > 0 { buffer = bytes }
        return frame
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
