// SPDX-License-Identifier: Apache-2.0
public import NIOCore

/// Splits bytes into lines at `\n` (a trailing `\r` is dropped), refusing lines longer than a limit. No I/O: the
/// one splitting of both ends, the client's reads (``LineFrameDecoder``) and the server's requests.
///
/// A line over the limit is reported once as ``Frame/tooLong`` and its bytes are discarded up to the next
/// newline, so that a peer sending megabytes without a newline costs at most the limit in memory. The limit is
/// given with each call: one that changes (a reloaded configuration) applies from the next line taken.
///
/// The buffer given at each call is the one given before with what was read since appended at its end (as a NIO
/// decoder's cumulation, or the bytes left by the last call with a read's bytes written after them). The part of a
/// line already searched for its newline is not searched again, so a line that comes in many small reads costs
/// its length once, not its length for each read.
public struct LineSplitter: Sendable {
    public enum Frame: Sendable {
        case line(ByteBuffer)
        case tooLong
    }

    /// The bytes of a line already reported as too long are being dropped, up to its newline.
    private var discarding = false

    /// How many bytes at the front of the buffer are known to hold no newline (searched by an earlier call).
    private var searched = 0

    public init() {}

    /// The next frame taken from the front of `buffer`, or nil when no whole line waits there (the bytes of a line
    /// too long are dropped meanwhile, and what is left of `buffer` is the start of the next line).
    public mutating func next(from buffer: inout ByteBuffer, maxLength: Int) -> Frame? {
        while true {
            let view = buffer.readableBytesView
            let from = view.startIndex + min(searched, view.count)
            guard let newline = view[from...].firstIndex(of: UInt8(ascii: "\n")) else {
                if discarding {
                    buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
                    searched = 0
                } else if buffer.readableBytes > maxLength {
                    discarding = true
                    buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
                    searched = 0
                    return .tooLong
                } else {
                    searched = view.count
                }
                return nil
            }
            searched = 0
            let length = newline - view.startIndex
            if discarding {
                // The end of a line already reported as too long.
                buffer.moveReaderIndex(forwardBy: length + 1)
                discarding = false
                continue
            }
            if length > maxLength {
                buffer.moveReaderIndex(forwardBy: length + 1)
                return .tooLong
            }
            var line = buffer.readSlice(length: length)!
            buffer.moveReaderIndex(forwardBy: 1)
            if line.readableBytes > 0, line.getInteger(at: line.writerIndex - 1, as: UInt8.self) == UInt8(ascii: "\r") {
                line.moveWriterIndex(to: line.writerIndex - 1)
            }
            return .line(line)
        }
    }
}
