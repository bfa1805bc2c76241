// SPDX-License-Identifier: Apache-2.0
public import NIOCore

/// Splits a byte stream into lines at `\n` (a trailing `\r` is dropped), refusing lines longer than a limit: a
/// ``LineSplitter`` with its limit fixed, as a NIO decoder or on its own.
///
/// A line over the limit is reported once as ``Frame/tooLong`` and its bytes are discarded up to the next
/// newline, so that a peer sending megabytes without a newline costs at most `maxLength` bytes of memory.
public struct LineFrameDecoder: ByteToMessageDecoder {
    public typealias Frame = LineSplitter.Frame

    public typealias InboundOut = Frame

    public let maxLength: Int
    private var splitter = LineSplitter()

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
        splitter.next(from: &buffer, maxLength: maxLength)
    }

    public mutating func decodeLast(
        context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
    ) throws -> DecodingState {
        // A last line without a newline is ignored: the peer went away before finishing it.
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        return .needMoreData
    }
}
