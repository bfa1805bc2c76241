import Foundation
import Logging
import NIOCore
import ShakeDetection
import ShakeProtocol

/// One connected client, on the server's event loop.
///
/// Messages go straight to the socket while it is writable; when it is not (the client does not read), they
/// wait in a bounded queue that drops its oldest entries, and the client is told how many it lost once it reads
/// again.
final class Client {
    let channel: any Channel
    let peer: PeerCredentials?
    unowned let server: ShakeServer
    var isSubscriber = true
    var phases = Set(ShakeEvent.Phase.allCases)
    var wantsSamples = false
    var badLines = 0
    var droppedTotal = 0
    private var droppedUnreported = 0
    private var pending: [ByteBuffer] = []
    private var isDroppable: [Bool] = []
    private var droppableCount = 0
    private var pendingHead = 0
    private var closing = false

    init(channel: any Channel, peer: PeerCredentials?, server: ShakeServer) {
        self.channel = channel
        self.peer = peer
        self.server = server
    }

    /// Log metadata naming the client.
    var logMetadata: Logger.Metadata { peer?.metadata ?? ["client_pid": "unknown"] }

    private var pendingCount: Int { pending.count - pendingHead }

    /// Sends an event or a sample: when the client does not keep up, the oldest of these are dropped.
    func send(_ buffer: ByteBuffer) {
        enqueue(buffer, droppable: true)
    }

    /// Sends an answer to the client's own request: never dropped (a client that asks without reading is cut
    /// off instead, past four queues' worth).
    func reply(_ buffer: ByteBuffer) {
        enqueue(buffer, droppable: false)
    }

    private func enqueue(_ buffer: ByteBuffer, droppable: Bool) {
        guard !closing else { return }
        if pendingCount == 0 && droppedUnreported == 0 && channel.isWritable {
            channel.writeAndFlush(buffer, promise: nil)
            return
        }
        if droppable, droppableCount >= server.configuration.queueLimit {
            // Drop the oldest event or sample waiting; answers to requests stay.
            if let index = (pendingHead..<pending.count).first(where: { isDroppable[$0] }) {
                pending.remove(at: index)
                isDroppable.remove(at: index)
                droppableCount -= 1
            }
            droppedUnreported += 1
            droppedTotal += 1
            server.dropped(1, by: self)
        }
        if !droppable && pendingCount >= 4 * server.configuration.queueLimit {
            server.dropped(server.configuration.dropLimit + 1, by: self)
            return
        }
        pending.append(buffer)
        isDroppable.append(droppable)
        if droppable { droppableCount += 1 }
        if pendingHead > 64 && pendingHead * 2 > pending.count {
            pending.removeFirst(pendingHead)
            isDroppable.removeFirst(pendingHead)
            pendingHead = 0
        }
        drain()
    }

    /// Writes what waits, while the socket takes it.
    func drain() {
        guard !closing || pendingCount > 0 else { return }
        var wrote = false
        while channel.isWritable && (droppedUnreported > 0 || pendingCount > 0) {
            if droppedUnreported > 0 {
                channel.write(server.buffer(ServerMessage.dropped(count: droppedUnreported).line), promise: nil)
                droppedUnreported = 0
            } else {
                channel.write(pending[pendingHead], promise: nil)
                if isDroppable[pendingHead] { droppableCount -= 1 }
                pendingHead += 1
            }
            wrote = true
        }
        if pendingCount == 0 {
            pending.removeAll(keepingCapacity: true)
            isDroppable.removeAll(keepingCapacity: true)
            pendingHead = 0
            // Caught up: the drop limit counts from here.
            droppedTotal = 0
        }
        if wrote { channel.flush() }
    }

    /// Writes everything still owed, then closes.
    func flushAndClose() -> EventLoopFuture<Void> {
        closing = true
        for index in pendingHead..<pending.count { channel.write(pending[index], promise: nil) }
        pending.removeAll()
        isDroppable.removeAll()
        pendingHead = 0
        // A client that does not read would hold the flush forever: give it a second, then close regardless.
        let channel = self.channel
        let deadline = channel.eventLoop.scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
        return channel.writeAndFlush(ByteBuffer())
            .flatMap { channel.close() }
            .always { _ in deadline.cancel() }
            .recover { _ in }
    }

    func close() {
        closing = true
        channel.close(promise: nil)
    }

    /// Closes a client that does not read, with a last line saying why (written if the socket takes it).
    func cutOff(with notice: ByteBuffer) {
        closing = true
        pending.removeAll()
        isDroppable.removeAll()
        pendingHead = 0
        // Whatever the socket takes now is delivered; a client that does not read may never see it.
        channel.writeAndFlush(notice, promise: nil)
        channel.close(promise: nil)
    }
}

/// Connects a channel to the server.
final class ClientHandler: ChannelInboundHandler {
    typealias InboundIn = LineFrameDecoder.Frame

    private let server: ShakeServer
    private var client: Client?
    /// Lines that arrive before the peer's credentials are known.
    private var early: [LineFrameDecoder.Frame] = []
    private var active = false

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
            let client = Client(channel: channel, peer: peer, server: server)
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
        server.receive(frame, from: client)
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
