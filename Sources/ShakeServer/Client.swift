import DequeModule
import Foundation
import Logging
import NIOCore
import ShakeDetection
import ShakeProtocol

/// One connected client, on the server's event loop.
///
/// Messages go straight to the socket while it is writable; when it is not (the client does not read), they
/// wait in an ``OutboundQueue``, which decides what is dropped, when the client is cut off and when its requests
/// are left unread. The client performs those decisions; the server counts and logs them.
final class Client {
    /// What became of a message handed to ``send(_:limits:)`` or ``reply(_:limits:)``.
    enum Delivery: Equatable {
        case delivered
        /// It waits, and the oldest waiting event or sample was dropped for it.
        case droppedOldest
        /// The client was too far behind: it was told why (if its socket took it) and closed.
        case cutOff(OutboundQueue<ByteBuffer>.CutOff)
    }

    let channel: any Channel
    let peer: PeerCredentials?
    var isSubscriber = true
    var phases = Set(ShakeEvent.Phase.allCases)
    var wantsSamples = false
    var badLines = 0
    private var queue = OutboundQueue<ByteBuffer>()
    /// Called once answers no longer wait, to go on with the requests held back meanwhile (see
    /// ``ClientHandler``).
    var readingResumed: (() -> Void)?
    private var wasPaused = false

    init(channel: any Channel, peer: PeerCredentials?) {
        self.channel = channel
        self.peer = peer
    }

    /// Log metadata naming the client.
    var logMetadata: Logger.Metadata { peer?.metadata ?? ["client_pid": "unknown"] }

    /// True while answers to this client's requests wait for its socket: its further requests stay unread.
    var isReadingPaused: Bool { queue.isReadingPaused }

    /// Sends an event or a sample: when the client does not keep up, the oldest of these are dropped.
    @discardableResult
    func send(_ buffer: ByteBuffer, limits: OutboundQueue<ByteBuffer>.Limits) -> Delivery {
        enqueue(buffer, kind: .droppable, limits: limits)
    }

    /// Sends an answer to the client's own request: never dropped (a client that asks without reading is cut
    /// off instead, past the answer limit).
    @discardableResult
    func reply(_ buffer: ByteBuffer, limits: OutboundQueue<ByteBuffer>.Limits) -> Delivery {
        enqueue(buffer, kind: .answer, limits: limits)
    }

    private func enqueue(
        _ buffer: ByteBuffer, kind: OutboundQueue<ByteBuffer>.Kind, limits: OutboundQueue<ByteBuffer>.Limits
    ) -> Delivery {
        switch queue.enqueue(buffer, kind: kind, writable: channel.isWritable, limits: limits) {
        case .write(let buffer):
            channel.writeAndFlush(buffer, promise: nil)
            return .delivered
        case .queued(let droppedOldest):
            drain()
            return droppedOldest ? .droppedOldest : .delivered
        case .cutOff(let reason):
            // Whatever the socket takes now is delivered; a client that does not read may never see it.
            channel.writeAndFlush(ServerMessage.tooSlow(reason).buffer, promise: nil)
            channel.close(promise: nil)
            return .cutOff(reason)
        case .discard:
            return .delivered
        }
    }

    /// Writes what waits, while the socket takes it; reads again once no answer waits.
    func drain() {
        var wrote = false
        while channel.isWritable, let output = queue.next() {
            switch output {
            case .message(let buffer): channel.write(buffer, promise: nil)
            case .dropped(let count): channel.write(ServerMessage.dropped(count: count).buffer, promise: nil)
            }
            wrote = true
        }
        if wrote { channel.flush() }
        if queue.isReadingPaused {
            wasPaused = true
        } else if wasPaused && !queue.isClosing {
            wasPaused = false
            readingResumed?()
        }
    }

    /// Writes everything still owed, then closes.
    func flushAndClose() -> EventLoopFuture<Void> {
        for buffer in queue.close() { channel.write(buffer, promise: nil) }
        // A client that does not read would hold the flush forever: give it a second, then close regardless.
        let channel = self.channel
        let deadline = channel.eventLoop.scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
        return channel.writeAndFlush(ByteBuffer())
            .flatMap { channel.close() }
            .always { _ in deadline.cancel() }
            .recover { _ in }
    }

    func close() {
        queue.cutOff()
        channel.close(promise: nil)
    }
}

extension ServerMessage {
    /// The line as the socket carries it.
    var buffer: ByteBuffer {
        let line = self.line
        var buffer = ByteBufferAllocator().buffer(capacity: line.utf8.count + 1)
        buffer.writeString(line)
        buffer.writeInteger(UInt8(ascii: "\n"))
        return buffer
    }

    /// The last line to a client that is cut off.
    static func tooSlow(_ reason: OutboundQueue<ByteBuffer>.CutOff) -> ServerMessage {
        switch reason {
        case .tooManyDropped(let count):
            .error(
                code: "too_slow", message: "disconnected: \(count) messages dropped because this client did not read")
        case .tooManyAnswers(let count):
            .error(code: "too_slow", message: "disconnected: \(count) answers waiting because this client did not read")
        }
    }
}

/// Connects a channel to the server.
///
/// It is also where a client's requests stop being read while answers to it wait: lines already read wait here
/// (no more than one read brought), and the reads the channel asks for are held back, until the client's queue
/// has written its answers.
final class ClientHandler: ChannelDuplexHandler {
    typealias InboundIn = LineFrameDecoder.Frame
    typealias OutboundIn = ByteBuffer

    private let server: ShakeServer
    private var client: Client?
    /// Lines that arrive before the peer's credentials are known.
    private var early: [LineFrameDecoder.Frame] = []
    private var active = false
    /// Lines read while answers waited, handled once they are written.
    private var held = Deque<LineFrameDecoder.Frame>()
    /// A read the channel asked for while answers waited.
    private var readHeld = false
    private var resumeScheduled = false

    init(server: ShakeServer) {
        self.server = server
    }

    func channelActive(context: ChannelHandlerContext) {
        active = true
        let channel = context.channel
        let credentials: EventLoopFuture<PeerCredentials?> =
            (channel as? any SocketOptionProvider).map { PeerCredentialsReader.read($0, on: channel.eventLoop) }
            ?? channel.eventLoop.makeSucceededFuture(nil)
        credentials.whenSuccess { [self] peer in
            guard active else { return }
            let client = Client(channel: channel, peer: peer)
            client.readingResumed = { [self] in scheduleResume(channel) }
            self.client = client
            server.accept(client)
            for frame in early { server.receive(frame, from: client) }
            early.removeAll()
        }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard let client else {
            if early.count < 64 { early.append(frame) }
            return
        }
        if client.isReadingPaused || !held.isEmpty {
            held.append(frame)
        } else {
            server.receive(frame, from: client)
        }
    }

    func read(context: ChannelHandlerContext) {
        if let client, client.isReadingPaused || !held.isEmpty {
            readHeld = true
        } else {
            context.read()
        }
    }

    /// Goes on with the held lines in a turn of the loop of its own (not inside the write that resumed it).
    private func scheduleResume(_ channel: any Channel) {
        guard !resumeScheduled else { return }
        resumeScheduled = true
        channel.eventLoop.assumeIsolated().execute { [self] in
            resumeScheduled = false
            resume(channel)
        }
    }

    private func resume(_ channel: any Channel) {
        guard active, let client else { return }
        while !client.isReadingPaused, let frame = held.popFirst() {
            server.receive(frame, from: client)
        }
        if held.isEmpty && !client.isReadingPaused && readHeld {
            readHeld = false
            channel.read()
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        client?.drain()
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
