// SPDX-License-Identifier: Apache-2.0
import Logging
import NIOCore
import NIOEmbedded
import ShakeProtocol
import Testing

@testable import ShakeServer

/// Counts the `read`s that pass the handler under test on their way to the socket.
final class ReadCounter: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    var reads = 0

    func read(context: ChannelHandlerContext) {
        reads += 1
        context.read()
    }
}

/// `ClientHandler` on a channel without a socket, the server's state on the same embedded loop: which request
/// lines are handled in a turn of the loop, and when the channel's reads go out. Time is the embedded loop's,
/// moved on by hand.
@Suite struct ClientHandlerTests {
    let loop = EmbeddedEventLoop()
    let channel: EmbeddedChannel
    let counter = ReadCounter()

    init() throws {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let server = ShakeServer(
            configuration: ServerConfiguration(),
            hooks: .init(status: { .init(sensor: SensorInfo(source: "test", name: "fake", rate: 100), shaking: false) }
            ),
            logger: logger, eventLoop: loop)
        channel = EmbeddedChannel(loop: loop)
        try channel.pipeline.syncOperations.addHandlers([counter, ClientHandler(server: server)])
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
    }

    /// The lines written to the client since the last look.
    func answers() throws -> [String] {
        var lines: [String] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            lines += String(buffer: buffer).split(separator: "\n").map(String.init)
        }
        return lines
    }

    @Test func linesPastTheTurnWaitForTheNextAndHoldTheReadBack() throws {
        let hello = try answers()
        #expect(hello.count == 1 && hello[0].contains("\"hello\""))
        let request = "{\"request\":\"status\"}\n"
        try channel.writeInbound(ByteBuffer(string: String(repeating: request, count: ShakeServer.linesPerTurn + 6)))
        #expect(try answers().count == ShakeServer.linesPerTurn)
        // Whole lines wait: the channel's next read is held back.
        channel.read()
        #expect(counter.reads == 0)
        // The next turn, a pause later, handles the rest, then lets the read go.
        loop.advanceTime(by: ShakeServer.turnPause)
        let rest = try answers()
        #expect(rest.count == 6 && rest.allSatisfy { $0.contains("\"status\"") })
        #expect(counter.reads == 1)
        channel.read()
        #expect(counter.reads == 2)
        _ = try channel.finish()
    }

    @Test func aLineSplitOverReadsIsOneRequest() throws {
        _ = try answers()
        try channel.writeInbound(ByteBuffer(string: "{\"request\":\"sta"))
        #expect(try answers().isEmpty)
        channel.read()
        #expect(counter.reads == 1)
        try channel.writeInbound(ByteBuffer(string: "tus\"}\n"))
        let answer = try answers()
        #expect(answer.count == 1 && answer[0].contains("\"status\""))
        _ = try channel.finish()
    }
}
