// SPDX-License-Identifier: Apache-2.0
import NIOCore
import NIOEmbedded
import ShakeProtocol
import Synchronization
import Testing

@testable import ShakeClient

/// Counts the `read`s that pass the handler under test on their way to the socket.
final class ReadCounter: ChannelOutboundHandler, Sendable {
    typealias OutboundIn = ByteBuffer
    let reads = Atomic(0)

    func read(context: ChannelHandlerContext) {
        reads.add(1, ordering: .relaxed)
        context.read()
    }
}

/// `MessageDelivery` on a channel without a socket: the lines it splits off the reads and offers to the
/// connection's buffer, and the reads it holds back while the consumer is behind.
@Suite struct MessageDeliveryTests {
    let buffer = WatermarkBuffer<ByteBuffer>(low: 2, high: 4)
    let counter = ReadCounter()

    func channel() async throws -> NIOAsyncTestingChannel {
        let buffer = buffer
        let counter = counter
        return try await NIOAsyncTestingChannel { channel in
            try channel.pipeline.syncOperations.addHandlers([counter, MessageDelivery(into: buffer, maxLineLength: 8)])
        }
    }

    /// The channel asks for the next read, as NIO does after each; returns the reads that reached the socket.
    func read(_ channel: NIOAsyncTestingChannel) async throws -> Int {
        let counter = counter
        return try await channel.testingEventLoop.executeInContext {
            channel.read()
            return counter.reads.load(ordering: .relaxed)
        }
    }

    /// One read's bytes.
    func receive(_ bytes: String, on channel: NIOAsyncTestingChannel) async throws {
        try await channel.writeInbound(ByteBuffer(string: bytes))
    }

    func deliver(_ text: String, to channel: NIOAsyncTestingChannel) async throws {
        try await receive(text + "\n", on: channel)
    }

    func take() async throws -> String? {
        try await buffer.next().map { String(buffer: $0) }
    }

    @Test func readsAreHeldAtTheHighMarkAndResumedAtTheLow() async throws {
        let channel = try await channel()
        for index in 1...3 { try await deliver("\(index)", to: channel) }
        #expect(try await read(channel) == 1)
        // The fourth line fills the buffer: the next read waits for the consumer.
        try await deliver("4", to: channel)
        #expect(try await read(channel) == 1)
        // The lines of a read under way still go in, past the mark.
        try await deliver("5", to: channel)
        #expect(try await take() == "1")
        #expect(try await take() == "2")
        #expect(try await read(channel) == 1)
        // Down to the low mark: the read held back goes out (on the loop; the next look is queued after it).
        #expect(try await take() == "3")
        #expect(try await read(channel) == 3)
        #expect(try await take() == "4")
        #expect(try await take() == "5")
        // Lines are not passed on: the stream behind the handler sees only the connection's end.
        #expect(try await channel.readInbound(as: LineFrameDecoder.Frame.self) == nil)
        _ = try await channel.finish()
    }

    @Test func theLinesOfOneReadGoInTogetherAndALineCutByTheReadWaitsForItsEnd() async throws {
        let channel = try await channel()
        // One read past the high mark: all its lines go in, and the next read waits.
        try await receive("1\n2\r\n\n4\n5\n6", on: channel)
        #expect(try await read(channel) == 0)
        for expected in ["1", "2", "", "4"] { #expect(try await take() == expected) }
        try await receive("7\n", on: channel)
        #expect(try await take() == "5")
        #expect(try await take() == "67")
        // A line without its newline when the connection ends is not delivered.
        try await receive("8", on: channel)
        _ = try await channel.finish()
        buffer.finish()
        #expect(try await take() == nil)
    }

    @Test func aLineTooLongEndsTheConnectionAfterTheLinesBeforeIt() async throws {
        let channel = try await channel()
        try await receive("first\n12345", on: channel)
        // Over the 8 bytes: the connection ends here, with the error, and what follows is not delivered.
        await #expect(throws: ClientError.lineTooLong(limit: 8)) { try await receive("6789\nnever\n", on: channel) }
        #expect(!channel.isActive)
        buffer.finish()
        #expect(try await take() == "first")
        #expect(try await take() == nil)
        // Finished like the others (a testing channel left unfinished keeps its pipeline in a cycle: a leak at
        // exit under LeakSanitizer); it is closed already, which finish reports.
        _ = try? await channel.finish()
    }
}

/// The splitting `MessageDelivery` uses, without a channel.
@Suite struct LineFrameDecoderTests {
    func frames(_ text: String, maxLength: Int = 8) -> [String] {
        var decoder = LineFrameDecoder(maxLength: maxLength)
        var bytes = ByteBuffer(string: text)
        var found: [String] = []
        while let frame = decoder.next(from: &bytes) {
            switch frame {
            case .line(let line): found.append(String(buffer: line))
            case .tooLong: found.append("<too long>")
            }
        }
        return found
    }

    @Test func linesAreSplitAtNewlinesWithoutATrailingReturn() {
        #expect(frames("a\nbc\r\n\nd") == ["a", "bc", ""])
    }

    @Test func aLineOverTheLimitIsReportedOnceAndDroppedToItsNewline() {
        #expect(frames("12345678\n123456789\nok\n") == ["12345678", "<too long>", "ok"])
        #expect(frames("123456789 and more without a newline") == ["<too long>"])
    }

    @Test func theRestOfALineTooLongIsDroppedAcrossBuffers() {
        var decoder = LineFrameDecoder(maxLength: 4)
        var first = ByteBuffer(string: "123456")
        #expect(decoder.next(from: &first).map { if case .tooLong = $0 { true } else { false } } == true)
        #expect(first.readableBytes == 0)
        var second = ByteBuffer(string: "789\nnext\n")
        guard case .line(let line) = decoder.next(from: &second) else {
            Issue.record("no line after the one too long")
            return
        }
        #expect(String(buffer: line) == "next")
        #expect(decoder.next(from: &second) == nil)
    }
}

/// The one splitting of both ends (the server's `RequestLines` and the client's `LineFrameDecoder`): the limit is
/// the one given as each line is taken.
@Suite struct LineSplitterTests {
    func take(_ splitter: inout LineSplitter, _ bytes: inout ByteBuffer, maxLength: Int) -> String? {
        switch splitter.next(from: &bytes, maxLength: maxLength) {
        case .line(let line)?: String(buffer: line)
        case .tooLong?: "<too long>"
        case nil: nil
        }
    }

    @Test func eachLineIsHeldToTheLimitGivenWhenItIsTaken() {
        var splitter = LineSplitter()
        var bytes = ByteBuffer(string: "123456\n123456\n12\r\n")
        #expect(take(&splitter, &bytes, maxLength: 8) == "123456")
        #expect(take(&splitter, &bytes, maxLength: 4) == "<too long>")
        #expect(take(&splitter, &bytes, maxLength: 4) == "12")
        #expect(take(&splitter, &bytes, maxLength: 4) == nil)
        #expect(bytes.readableBytes == 0)
    }

    @Test func anUnfinishedLineIsLeftInTheBufferUntilItsNewlineComes() {
        var splitter = LineSplitter()
        var bytes = ByteBuffer(string: "ab\ncd")
        #expect(take(&splitter, &bytes, maxLength: 8) == "ab")
        #expect(take(&splitter, &bytes, maxLength: 8) == nil)
        #expect(String(buffer: bytes) == "cd")
        bytes.writeString("e\n")
        #expect(take(&splitter, &bytes, maxLength: 8) == "cde")
    }

    /// A line read a byte at a time: the part already searched for its newline is not searched again, and what
    /// is taken is the same as from one read (the line, its `\r` dropped at the end, the limit crossed by the
    /// byte that crosses it and no sooner).
    @Test func aLineReadAByteAtATimeIsTakenAsFromOneRead() {
        var splitter = LineSplitter()
        var bytes = ByteBuffer()
        var taken: [String] = []
        for byte in "abcd\r\nabcdefgh\n123456789 no newline yet\nok\n".utf8 {
            bytes.writeInteger(byte)
            while let line = take(&splitter, &bytes, maxLength: 8) { taken.append(line) }
        }
        #expect(taken == ["abcd", "abcdefgh", "<too long>", "ok"])
        #expect(bytes.readableBytes == 0)
    }

    /// The bytes left by one call with a new read's written after them, as the client's handler gives them: a
    /// newline in the new part is found, after a front already searched.
    @Test func aNewlineInTheNextReadIsFoundAfterTheSearchedFront() {
        var splitter = LineSplitter()
        var bytes = ByteBuffer(string: "first\nsecond half")
        #expect(take(&splitter, &bytes, maxLength: 64) == "first")
        #expect(take(&splitter, &bytes, maxLength: 64) == nil)
        var next = ByteBuffer(string: " and end\nthird\n")
        bytes.writeBuffer(&next)
        #expect(take(&splitter, &bytes, maxLength: 64) == "second half and end")
        #expect(take(&splitter, &bytes, maxLength: 64) == "third")
        #expect(take(&splitter, &bytes, maxLength: 64) == nil)
    }
}
