// SPDX-License-Identifier: Apache-2.0
import NIOCore
import ShakeProtocol

/// Connects a channel to the server, and decides when the client's requests are read.
///
/// Request bytes wait here unsplit (``RequestLines``) and are taken a line at a time, only while the server lets
/// this client go on (``ShakeServer/mayRead(_:)``: no answer waits for it, its buffers are within budget) and
/// while the loop's turn has room (``ShakeServer/takeLine()``). Reads the channel asks for are held back until
/// every line already read is handled: a client that asks without reading stalls itself, not the daemon, and
/// costs at most one read of bytes.
final class ClientHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer

    private let server: ShakeServer
    private var client: Client?
    private var lines = RequestLines()
    private var active = false
    /// A read the channel asked for while lines waited.
    private var readHeld = false
    /// Waiting for a turn of the loop (``ShakeServer/waitForTurn(_:)``).
    private var waitingForTurn = false
    /// The client shut down its sending side.
    private var inputClosed = false
    /// Inside ``handleLines()``.
    private var handling = false
    /// Lines handled since the connection opened.
    private var linesHandled = 0
    private var context: ChannelHandlerContext?

    init(server: ShakeServer) {
        self.server = server
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        active = true
        let channel = context.channel
        let credentials: EventLoopFuture<PeerCredentials?> =
            (channel as? any SocketOptionProvider).map { PeerCredentialsReader.read($0, on: channel.eventLoop) }
            ?? channel.eventLoop.makeSucceededFuture(nil)
        // The credentials are read on the channel's loop, and the handler lives there: no hop, no Sendable capture.
        credentials.assumeIsolated().whenSuccess { [self] peer in
            guard active else { return }
            let client = Client(channel: channel, peer: peer, outbound: self.context)
            client.readingResumed = { [self] in handleLines() }
            self.client = client
            server.accept(client)
            handleLines()
        }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lines.append(unwrapInboundIn(data))
        handleLines()
    }

    func read(context: ChannelHandlerContext) {
        if mayReadMore {
            context.read()
        } else {
            readHeld = true
        }
    }

    /// Whether more bytes may be read: the client is set up, no whole line waits, and the server lets it go on.
    private var mayReadMore: Bool {
        guard let client else { return false }
        return !waitingForTurn && !lines.hasLine && server.mayRead(client)
    }

    /// Handles the lines that wait, as far as the server lets this client go on, then reads again if held back.
    func handleLines() {
        // Answering a line can complete a write, which calls this again: the loop below goes on instead.
        guard active, let client, !waitingForTurn, !handling else { return }
        handling = true
        defer { handling = false }
        var handled = 0
        while !client.isClosing && server.mayRead(client) && lines.hasLine {
            // A client goes on past its share only while nobody else waits.
            guard handled < ShakeServer.linesPerClientTurn || !server.othersWaitForTurn, server.takeLine() else {
                waitingForTurn = true
                server.waitForTurn(newcomer: linesHandled < ShakeServer.newcomerLines) { [self] in
                    waitingForTurn = false
                    handleLines()
                }
                handling = false
                return
            }
            guard let frame = lines.next(maxLength: server.maxLineLength) else { break }
            server.receive(frame, from: client)
            handled += 1
            linesHandled += 1
        }
        // A line too long without its newline yet is reported as soon as it is too long.
        if !client.isClosing && !lines.hasLine, let frame = lines.next(maxLength: server.maxLineLength) {
            server.receive(frame, from: client)
        }
        if readHeld && mayReadMore && !inputClosed, let context {
            readHeld = false
            context.read()
        }
    }

    /// A client that shut down its sending side (`nc -N`, `socat` at the end of its input) still gets what it
    /// subscribed to, until it closes: its last requests are handled, and the connection stays for output (a
    /// write to a client that has gone fails and closes it).
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            inputClosed = true
            handleLines()
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        client?.writabilityChanged()
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        active = false
        if let client { server.remove(client) }
        client = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
