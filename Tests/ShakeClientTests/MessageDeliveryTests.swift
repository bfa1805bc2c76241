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

/// `MessageDelivery` on a channel without a socket: the lines it offers to the connection's buffer, and the reads
/// it holds back while the consumer is behind.
@Suite struct MessageDeliveryTests {
    let buffer = WatermarkBuffer<ByteBuffer>(low: 2, high: 4)
    let counter = ReadCounter()

    func channel() async throws -> NIOAsyncTestingChannel {
        let buffer = buffer
        let counter = counter
        return try await NIOAsyncTestingChannel { channel in
            try channel.pipeline.syncOperations.addHandlers([counter, MessageDelivery(into: buffer)])
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

    func deliver(_ text: String, to channel: NIOAsyncTestingChannel) async throws {
        try await channel.writeInbound(LineFrameDecoder.Frame.line(ByteBuffer(string: text)))
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

    @Test func aTooLongFrameIsNotOffered() async throws {
        let channel = try await channel()
        try await channel.writeInbound(LineFrameDecoder.Frame.tooLong)
        try await deliver("after", to: channel)
        #expect(try await take() == "after")
        _ = try await channel.finish()
    }
}
