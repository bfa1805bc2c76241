// SPDX-License-Identifier: Apache-2.0
public import NIOCore

/// Splits a byte stream into lines at `\n` (a trailing `\r` is dropped), refusing lines longer than a limit.
///
/// A line over the limit is reported once as ``Frame/tooLong`` and its bytes are discarded up to the next
/// newline, so that a peer sending megabytes without a newline costs at most `maxLength` bytes of memory.
public struct LineFrameDecoder: ByteToMessageDecoder {
    public enum Frame: Sendable {
        case line(ByteBuffer)
        case tooLong
    }

    public typealias InboundOut = Frame

    public let maxLength: Int
    private var discarding = false

    public init(maxLength: Int) {
        self.maxLength = maxLength
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let frame = next(from: &buffer) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(frame))
        return .continue
    }

    /// The next frame taken from the front of `buffer`, or nil when no whole line waits there (the bytes of a line
    /// too long are dropped meanwhile). No I/O: what ``decode(context:buffer:)`` does without a channel, for a
    /// handler that splits the bytes of a read itself.
    public mutating func next(from buffer: inout ByteBuffer) -> Frame? {
        while true {
            let view = buffer.readableBytesView
            guard let newline = view.firstIndex(of: UInt8(ascii: "\n")) else {
                if discarding {
                    buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
                } else if buffer.readableBytes > maxLength {
                    discarding = true
                    buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
                    return .tooLong
                }
                return nil
            }
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

    public mutating func decodeLast(
        context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
    ) throws -> DecodingState {
        // A last line without a newline is ignored: the peer went away before finishing it.
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        return .needMoreData
    }
}
