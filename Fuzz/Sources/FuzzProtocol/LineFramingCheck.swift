// SPDX-License-Identifier: Apache-2.0
import FuzzSupport
import NIOCore
import NIOEmbedded
import ShakeProtocol

/// Feeds bytes through ``LineFrameDecoder`` in a channel, in uneven chunks, and compares the frames with what
/// the framing rules of docs/protocol.md say they must be.
enum LineFramingCheck {
    /// A small limit, so that fuzzed inputs reach the too-long paths often.
    static let limit = 12

    enum Expected: Equatable {
        case line([UInt8])
        case tooLong
    }

    /// The frames the rules give for a whole stream: each `\n`-terminated line, one trailing `\r` dropped, or
    /// `tooLong` when it is longer than the limit (a `\r` counts). An unterminated rest gives `tooLong` once it is
    /// over the limit, nothing otherwise.
    static func expectedFrames(_ bytes: [UInt8]) -> [Expected] {
        var pieces = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        let rest = pieces.removeLast()
        var frames: [Expected] = []
        for piece in pieces {
            if piece.count > limit {
                frames.append(.tooLong)
            } else if piece.last == UInt8(ascii: "\r") {
                frames.append(.line(Array(piece.dropLast())))
            } else {
                frames.append(.line(Array(piece)))
            }
        }
        if rest.count > limit { frames.append(.tooLong) }
        return frames
    }

    /// Runs the decoder and returns each line it delivered, after checking the frames against the rules.
    static func run(_ bytes: [UInt8]) -> [[UInt8]] {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(LineFrameDecoder(maxLength: limit)))
        var frames: [Expected] = []
        var start = 0
        while start < bytes.count {
            // Chunk sizes 1...8 taken from the data itself, so the fuzzer explores where reads split lines.
            let end = min(bytes.count, start + Int(bytes[start] % 8) + 1)
            var buffer = channel.allocator.buffer(capacity: end - start)
            buffer.writeBytes(bytes[start..<end])
            do {
                try channel.writeInbound(buffer)
                while let frame = try channel.readInbound(as: LineFrameDecoder.Frame.self) {
                    switch frame {
                    case .line(let line): frames.append(.line(Array(line.readableBytesView)))
                    case .tooLong: frames.append(.tooLong)
                    }
                }
            } catch {
                fail("LineFrameDecoder threw \(error) on \(preview(bytes))")
            }
            start = end
        }
        do {
            _ = try channel.finish(acceptAlreadyClosed: true)
        } catch {
            fail("closing the channel threw \(error) on \(preview(bytes))")
        }
        let expected = expectedFrames(bytes)
        require(
            frames == expected,
            "LineFrameDecoder gave \(frames.count) frames, the rules \(expected.count), on \(preview(bytes))")
        return frames.compactMap { frame in
            if case .line(let line) = frame { line } else { nil }
        }
    }
}
