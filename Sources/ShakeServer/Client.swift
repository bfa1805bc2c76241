// SPDX-License-Identifier: Apache-2.0
import DequeModule
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
        /// It was dropped, or waits and the oldest waiting event or sample was dropped for it.
        case droppedOldest
        /// The client was too far behind: it was told why (if its socket took it) and closed.
        case cutOff(OutboundQueue<ByteBuffer>.CutOff)
    }

    let channel: any Channel
    let peer: PeerCredentials?
    var isSubscriber = true
    var phases = Set(ShakeEvent.Phase.allCases) {
        didSet { phaseMask = Self.mask(of: phases) }
    }
    /// ``phases`` as one bit per phase: what the fan-out of an event tests, client after client.
    private(set) var phaseMask = Client.mask(of: Set(ShakeEvent.Phase.allCases))
    var wantsSamples = false
    /// Whether this client keeps the sensor capturing: once it asked for events, samples or a key chord, or stayed
    /// ``ShakeServer/listenerGrace`` without asking for any (the protocol's default subscriber). A connection
    /// that only asks for `status` and leaves turns no capture on or over to another rate.
    var keepsCapture = false
    /// Whether the daemon presses a key chord for this client (a `key` request it accepted).
    var hasKey = false
    /// The connection's number in this run (1, 2, 3...), given when it is accepted: how the daemon names it.
    var number: UInt64 = 0
    var badLines = 0
    private var queue = OutboundQueue<ByteBuffer>(weight: \.readableBytes)
    /// Bytes handed to the channel that the kernel has not taken yet: what the channel held after the last flush,
    /// or after the last write the kernel took later (``watchUntilTaken()``).
    private var inFlight = 0
    /// An empty write with a promise waits behind bytes the kernel did not take at once.
    private var watching = false
    /// The channel's writability as its changes were reported (``writabilityChanged()``): what every message
    /// tests, without a load of the channel's atomic flag.
    private var writable: Bool
    /// Inside ``accounted(_:)``: changes of ``owed`` are reported once, when the outermost call ends.
    private var accounting = false
    /// Called with the change, whenever ``owed`` changes: the server keeps the total over its clients.
    var owedChanged: ((Int) -> Void)?
    /// Called when this client's requests may be read again: its answers were written, or the bytes it is owed
    /// went down (see ``ClientHandler``).
    var readingResumed: (() -> Void)?

    /// The client's handler's place in the channel's pipeline: what is written from there goes straight to the
    /// socket, past the handlers in between (the client's own handler passes writes on untouched). Nil when the
    /// client was made without a handler: writes go through the whole pipeline then.
    private let outbound: ChannelHandlerContext?
    /// The channel's options, read on its loop: fetched once, not for every flush.
    private let options: (any NIOSynchronousChannelOptions)?

    init(channel: any Channel, peer: PeerCredentials?, outbound: ChannelHandlerContext? = nil) {
        self.channel = channel
        self.peer = peer
        self.outbound = outbound
        options = channel.syncOptions
        writable = channel.isWritable
    }

    /// Whether an event of `phase` is sent to this client.
    @inline(__always)
    func wants(_ phase: ShakeEvent.Phase) -> Bool {
        isSubscriber && phaseMask & Self.bit(of: phase) != 0
    }

    private static func bit(of phase: ShakeEvent.Phase) -> UInt8 {
        switch phase {
        case .began: 1
        case .ended: 2
        case .cancelled: 4
        }
    }

    private static func mask(of phases: Set<ShakeEvent.Phase>) -> UInt8 {
        phases.reduce(0) { $0 | bit(of: $1) }
    }

    /// Log metadata naming the client.
    var logMetadata: Logger.Metadata { peer?.metadata ?? ["client_pid": "unknown"] }

    /// True while answers to this client's requests wait for its socket: its further requests stay unread.
    var isReadingPaused: Bool { queue.isReadingPaused }

    /// True once the client is being closed: nothing more of it is read or sent.
    var isClosing: Bool { queue.isClosing }

    /// Bytes the server holds for this client: waiting in its queue, or handed to the channel and not yet taken
    /// by the kernel.
    var owed: Int { queue.weightWaiting + inFlight }

    /// Sends an event or a sample: when the client does not keep up, the oldest of these are dropped.
    @discardableResult
    func send(_ buffer: ByteBuffer, limits: OutboundQueue<ByteBuffer>.Limits) -> Delivery {
        enqueue(buffer, kind: .droppable, limits: limits)
    }

    /// Drops an event or a sample instead of sending it (the server's buffers are over budget): counted and
    /// reported like one dropped for room.
    @discardableResult
    func dropInstead(limits: OutboundQueue<ByteBuffer>.Limits) -> Delivery {
        accounted {
            guard let action = queue.drop(limits: limits) else { return .droppedOldest }
            return perform(action)
        }
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
        accounted { perform(queue.enqueue(buffer, kind: kind, writable: writable, limits: limits)) }
    }

    private func perform(_ action: OutboundQueue<ByteBuffer>.EnqueueAction) -> Delivery {
        switch action {
        case .write(let buffer):
            write(buffer)
            flush()
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

    /// Hands `buffer` to the channel. Whatever the kernel does not take at the next ``flush()`` is owed until it
    /// does; a write needs no promise of its own.
    private func write(_ buffer: ByteBuffer) {
        if let outbound {
            outbound.write(NIOAny(buffer), promise: nil)
        } else {
            channel.write(buffer, promise: nil)
        }
    }

    /// Sends what was written to the kernel, and counts what it did not take at once as owed.
    private func flush() {
        if let outbound { outbound.flush() } else { channel.flush() }
        inFlight = bytesHeldByChannel
        if inFlight > 0 && !watching { watchUntilTaken() }
    }

    /// Bytes the channel holds that the kernel has not taken yet (none once it is closed).
    private var bytesHeldByChannel: Int {
        (try? options?.getOption(.bufferedWritableBytes)) ?? 0
    }

    /// Puts an empty write with a promise behind the bytes the channel holds: the channel completes it once the
    /// kernel has taken them (or fails it as it closes). Then what was written since, if anything, is watched
    /// the same way. One promise per client with bytes waiting, none for a line the kernel takes at once.
    private func watchUntilTaken() {
        watching = true
        let promise = channel.eventLoop.makePromise(of: Void.self)
        promise.futureResult.assumeIsolated().whenComplete { [self] result in
            watching = false
            // Reported once, by the outermost ``accounted(_:)``: a flush of ours that completed this, or this one
            // (including a next watch its own flush completes at once).
            accounted {
                inFlight = bytesHeldByChannel
                // A failed write (the channel closing) is not tried again: the next would fail the same way at once.
                if case .success = result, inFlight > 0 { watchUntilTaken() }
            }
        }
        if let outbound {
            outbound.write(NIOAny(ByteBuffer()), promise: promise)
            outbound.flush()
        } else {
            channel.writeAndFlush(ByteBuffer(), promise: promise)
        }
    }

    /// Runs `body` and reports the change it made to ``owed``, once, and that the client's requests may be read
    /// again if it made it nothing. Calls within it (a drain while enqueueing, bytes taken inside a flush of its
    /// own, an answer to a request read in between) are counted in that one change, not reported again.
    private func accounted<T>(_ body: () -> T) -> T {
        guard !accounting else { return body() }
        accounting = true
        let before = owed
        defer {
            accounting = false
            let after = owed
            if after != before { owedChanged?(after - before) }
            if before > 0 && after == 0 { readingResumed?() }
        }
        return body()
    }

    /// The channel's writability changed: writes what waits, if it takes more now.
    func writabilityChanged() {
        writable = channel.isWritable
        drain()
    }

    /// Writes what waits, while the socket takes it; reads again once no answer waits.
    func drain() {
        let wasPaused = queue.isReadingPaused
        accounted {
            var wrote = false
            while writable, let output = queue.next() {
                switch output {
                case .message(let buffer): write(buffer)
                case .dropped(let count): write(ServerMessage.dropped(count: count).buffer)
                }
                wrote = true
            }
            if wrote { flush() }
        }
        if wasPaused && !queue.isReadingPaused && !queue.isClosing { readingResumed?() }
    }

    /// Writes everything still owed, then closes.
    func flushAndClose() -> EventLoopFuture<Void> {
        accounted {
            for buffer in queue.close() { self.channel.write(buffer, promise: nil) }
        }
        // A client that does not read would hold the flush forever: give it a second, then close regardless.
        let channel = self.channel
        let deadline = channel.eventLoop.scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
        return channel.writeAndFlush(ByteBuffer())
            .flatMap { channel.close() }
            .always { _ in deadline.cancel() }
            .recover { _ in }
    }

    func close() {
        accounted { queue.cutOff() }
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
