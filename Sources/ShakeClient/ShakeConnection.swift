// SPDX-License-Identifier: Apache-2.0
import Glibc
import NIOCore
import NIOPosix
public import ShakeProtocol

/// One connection to the daemon: send requests, read its messages.
///
/// A task of its own holds the socket for the life of the connection (NIO's `executeThenClose`): it writes what
/// ``send(_:)`` hands it and sees the connection end, while the daemon's lines reach ``messages`` straight from
/// the channel's event loop. ``close()``, ``closeAndWait()``, the
/// daemon closing, an error, or the last reference to the connection and its `messages` going away end that
/// task; it then fails the writes still waiting and ends `messages` after what was already read.
public final class ShakeConnection: Sendable {
    /// The daemon's greeting.
    public let hello: ServerMessage.Hello
    /// Everything the daemon sends after `hello`, in order; finishes when the connection closes. Read as the
    /// consumer asks: while it does not, the connection stops reading its socket (past ``backPressure``), so
    /// the daemon's queue for this client fills and it drops events and samples, reported by `dropped`.
    /// One task at a time reads it (see ``Messages``).
    public let messages: Messages
    private let link: Link

    private init(hello: ServerMessage.Hello, link: Link) {
        self.hello = hello
        self.link = link
        // The sequence keeps the link, so a caller that keeps only `messages` keeps the connection open.
        messages = Messages(link: link)
    }

    /// The daemon's messages on one connection, in order, as ``messages`` gives them: its iterators all take from
    /// the same place, so each message goes to one of them. A message already read from the socket is handed out
    /// at once; only a consumer that has to wait for the next one suspends (and can then be cancelled).
    ///
    /// One task at a time reads them: a task that asks for the next message while another task is waiting for one
    /// gets ``ConcurrentReadError`` (the task waiting goes on). The sequence ends after the last message when the
    /// connection closes, with the error that closed it if one did, and gives nil from then on; it gives nil to a
    /// task that is cancelled.
    public struct Messages: AsyncSequence, Sendable {
        public typealias Element = ServerMessage
        public typealias Failure = any Error

        fileprivate let link: Link

        public func makeAsyncIterator() -> Iterator {
            Iterator(link: link)
        }

        public struct Iterator: AsyncIteratorProtocol {
            public typealias Element = ServerMessage
            public typealias Failure = any Error

            fileprivate let link: Link

            /// The next message, nil at the end or once the task is cancelled.
            public mutating func next() async throws -> ServerMessage? {
                if Task.isCancelled { return nil }
                return try await link.nextMessage()
            }
        }
    }

    typealias Frame = LineFrameDecoder.Frame

    /// The longest line accepted from the daemon.
    static let maxLineLength = 1 << 20

    /// Lines read from the socket and not yet taken by the consumer: past the high mark the connection stops
    /// reading, below the low one it reads again; the same marks as the buffers after it.
    static let backPressure = NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark(
        lowWatermark: Watermarks.low, highWatermark: Watermarks.high)

    /// Runs `body` with a path to the socket that NIO can hold: its socket addresses take 103 bytes, Linux's
    /// 107. A longer path is reached through its folder, opened for the moment of connecting, as
    /// `/proc/self/fd/N/NAME`.
    static func withReachablePath<T>(_ path: String, _ body: (String) async throws -> T) async throws -> T {
        guard path.utf8.count > 103, let slash = path.lastIndex(of: "/") else { return try await body(path) }
        let folder = Glibc.open(
            slash == path.startIndex ? "/" : String(path[..<slash]), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { return try await body(path) }
        defer { Glibc.close(folder) }
        return try await body("/proc/self/fd/\(folder)/" + path[path.index(after: slash)...])
    }

    static func open(path: String) async throws -> ShakeConnection {
        let channel: NIOAsyncChannel<Frame, ByteBuffer>
        let incoming = WatermarkBuffer<ByteBuffer>()
        do {
            channel = try await withReachablePath(path) { reachable in
                try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .connect(unixDomainSocketPath: reachable) { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(
                                MessageDelivery(into: incoming, maxLineLength: maxLineLength))
                            return try NIOAsyncChannel<Frame, ByteBuffer>(
                                wrappingChannelSynchronously: channel,
                                configuration: .init(backPressureStrategy: backPressure))
                        }
                    }
            }
        } catch {
            throw ClientError.cannotConnect(path: path, reason: Self.describe(error))
        }
        let link = Link(channel, incoming: incoming)
        let first: ServerMessage?
        do {
            first = try await link.nextMessage()
        } catch {
            await link.closeAndWait()
            throw error
        }
        guard let first else {
            await link.closeAndWait()
            throw ClientError.closed
        }
        switch first {
        case .hello(let hello):
            guard hello.protocolVersion == ServerMessage.protocolVersion else {
                await link.closeAndWait()
                throw ClientError.protocolMismatch(
                    "the daemon speaks protocol \(hello.protocolVersion), this client \(ServerMessage.protocolVersion)")
            }
            // The rest of the stream continues where `hello` was taken.
            return ShakeConnection(hello: hello, link: link)
        case .error(let code, let message):
            await link.closeAndWait()
            throw ClientError.refused(code: code, message: message)
        default:
            await link.closeAndWait()
            throw ClientError.protocolMismatch("the daemon did not start with hello")
        }
    }

    private static func describe(_ error: any Error) -> String {
        if let io = error as? IOError {
            return String(cString: strerror(io.errnoCode))
        }
        return "\(error)"
    }

    /// Sends a request; returns once it is written to the socket. Throws ``ClientError/closed`` once the
    /// connection is closed.
    public func send(_ request: Request) async throws {
        var buffer = link.allocator.buffer(capacity: 64)
        buffer.writeString(request.line)
        buffer.writeInteger(UInt8(ascii: "\n"))
        try await link.write(buffer)
    }

    /// Sends raw bytes (for tests of the daemon's error handling).
    public func send(raw text: String) async throws {
        var buffer = link.allocator.buffer(capacity: text.utf8.count)
        buffer.writeString(text)
        try await link.write(buffer)
    }

    /// Starts closing the connection and returns at once: `messages` ends after what was already read, and
    /// sends still waiting fail.
    public func close() {
        link.close()
    }

    /// Closes the connection and returns once the socket is closed and the connection's task has ended, so
    /// that nothing of it is left when the process exits right after.
    public func closeAndWait() async {
        await link.closeAndWait()
    }
}

/// The socket of one connection and the task that owns it. The task runs NIO's `executeThenClose` scope for
/// as long as the connection lives: it writes what `write` queues and waits for the inbound stream to end. The
/// messages themselves do not pass through it: ``MessageDelivery`` splits each read into lines on the event loop
/// and hands them to `incoming` (a ``WatermarkBuffer``), the lines of a read at once; while the
/// consumer does not take them, it stops reading the socket. When the inbound stream ends — the daemon closed,
/// an error, or `close` — the task ends `incoming`, closes the channel, fails the writes left, and leaves the
/// scope, which finishes NIO's writer and waits for the socket to close.
///
/// The task holds the channel, the buffer and the write queue, never the link, so dropping the last
/// `ShakeConnection` (and its `messages`) runs `deinit`, which closes: no task or socket outlives them.
private final class Link: Sendable {
    typealias Frame = LineFrameDecoder.Frame

    /// A write waiting for the task, and who waits for it.
    struct Write: Sendable {
        let bytes: ByteBuffer
        let done: CheckedContinuation<Void, any Error>
    }

    let incoming: WatermarkBuffer<ByteBuffer>
    let allocator: ByteBufferAllocator
    private let channel: any Channel
    private let writes: AsyncStream<Write>.Continuation
    private let task: Task<Void, Never>

    init(_ asyncChannel: NIOAsyncChannel<Frame, ByteBuffer>, incoming: WatermarkBuffer<ByteBuffer>) {
        self.incoming = incoming
        channel = asyncChannel.channel
        allocator = asyncChannel.channel.allocator
        let (queue, writes) = AsyncStream.makeStream(of: Write.self)
        self.writes = writes
        task = Task {
            await Self.serve(asyncChannel, incoming: incoming, queue: queue, writes: writes)
        }
    }

    deinit {
        close()
    }

    /// The task's work, from connect to closed socket.
    private static func serve(
        _ asyncChannel: NIOAsyncChannel<Frame, ByteBuffer>, incoming: WatermarkBuffer<ByteBuffer>,
        queue: AsyncStream<Write>, writes: AsyncStream<Write>.Continuation
    ) async {
        // The body throws nothing: a failed read ends `incoming` with its error, a failed write fails its send.
        try? await asyncChannel.executeThenClose { inbound, outbound in
            await withDiscardingTaskGroup { group in
                group.addTask {
                    // Ends when `writes` is finished and what was queued before has been written or failed.
                    for await write in queue {
                        do {
                            try await outbound.write(write.bytes)
                            write.done.resume()
                        } catch {
                            write.done.resume(throwing: ClientError.closed)
                        }
                    }
                }
                await waitForTheEnd(of: inbound, into: incoming)
                // Nothing more is read: close first, so that the writes left fail at once instead of waiting
                // for a socket nobody reads.
                asyncChannel.channel.close(promise: nil)
                writes.finish()
            }
        }
    }

    /// Waits until the channel closes or fails, and ends `incoming` so. The inbound stream carries no frame
    /// (``MessageDelivery`` takes them all before it), only the end or the error, which come after every line
    /// read before them has been handed to `incoming`, since both travel the pipeline in order.
    private static func waitForTheEnd(
        of inbound: NIOAsyncChannelInboundStream<Frame>, into incoming: WatermarkBuffer<ByteBuffer>
    ) async {
        do {
            for try await _ in inbound {}
            incoming.finish()
        } catch {
            incoming.finish(throwing: error)
        }
    }

    /// Queues `bytes` for the task and waits until they are written.
    func write(_ bytes: ByteBuffer) async throws {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            if case .terminated = writes.yield(Write(bytes: bytes, done: done)) {
                done.resume(throwing: ClientError.closed)
            }
        }
    }

    /// The next message the daemon sent, parsed on the consumer's task (the event loop only hands lines over, so
    /// that it goes on reading and writing for every other connection); a line this client cannot decode (a newer
    /// daemon's message) is skipped, not fatal. Nil at the end.
    func nextMessage() async throws -> ServerMessage? {
        while let line = try await incoming.next() {
            if let message = try? ServerMessage.parse(line.readableBytesView) { return message }
        }
        return nil
    }

    /// Ends `incoming` after what it holds (letting go a reader held up by a full buffer), stops taking writes,
    /// and closes the channel, which ends the task's reading and with it the task.
    func close() {
        incoming.finish()
        writes.finish()
        channel.close(promise: nil)
    }

    /// Closes, and returns once the task has left NIO's scope (the socket closed) and one more turn of the
    /// event loop has passed: NIO completes `closeFuture` just before it drops the socket's cached addresses,
    /// in the same turn.
    func closeAndWait() async {
        close()
        await task.value
        try? await channel.eventLoop.submit {}.get()
    }
}

/// Splits what the channel reads into the daemon's lines and hands them, on the channel's event loop, to the
/// connection's `incoming` buffer, where the consumer's task takes and parses them: the lines of one read go in
/// together (one lock, one resumption of a waiting consumer at most), with no handler between the socket and this
/// one and no frame sent down the pipeline per line. It keeps the backpressure NIO's inbound stream had: when the
/// buffer reaches its high mark it holds back the channel's next `read` until the consumer has taken the buffer
/// down to the low one, so a consumer that stops reading stops the socket being read. A line longer than
/// `maxLineLength` is dropped (``LineFrameDecoder``: at most that many bytes are kept while it lasts), and so is an
/// unfinished last line. Nothing is passed on: the `NIOAsyncChannel` behind it sees only the end of the
/// connection, or its error.
final class MessageDelivery: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = LineFrameDecoder.Frame
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let incoming: WatermarkBuffer<ByteBuffer>
    private var lines: LineFrameDecoder
    /// The bytes read and not yet split off as lines: the start of a line whose end has not come.
    private var unsplit: ByteBuffer?
    /// The lines of the read being split, kept from read to read for its storage.
    private var batch: [ByteBuffer] = []
    /// The buffer is at its high mark: `read` waits for the consumer.
    private var full = false
    /// A `read` came while full: issued once there is room.
    private var readHeldBack = false
    private var context: ChannelHandlerContext?
    /// What the buffer calls, from the consumer's task, once there is room: made once, not per message. It holds
    /// this handler until the handler is removed, which lets it go.
    private var whenRoom: (@Sendable () -> Void)?

    init(into incoming: WatermarkBuffer<ByteBuffer>, maxLineLength: Int) {
        self.incoming = incoming
        lines = LineFrameDecoder(maxLength: maxLineLength)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        whenRoom = { eventLoop.execute { handler.value.resumeReading() } }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        whenRoom = nil
        unsplit = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        guard let whenRoom else { return }
        if var waiting = unsplit.take(), waiting.readableBytes > 0 {
            waiting.writeBuffer(&bytes)
            bytes = waiting
        }
        var tooLong = false
        while !tooLong, let frame = lines.next(from: &bytes) {
            switch frame {
            case .line(let line): batch.append(line)
            case .tooLong: tooLong = true
            }
        }
        if !tooLong, bytes.readableBytes > 0 { unsplit = bytes }
        if !batch.isEmpty {
            // At the mark, the lines of a read already under way still go in: a read's worth past it at most.
            if !incoming.offer(contentsOf: batch, whenRoom: whenRoom) { full = true }
            batch.removeAll(keepingCapacity: true)
        }
        if tooLong {
            // The daemon never writes such a line: the lines before it are delivered, then the connection ends
            // with an error the consumer can name, instead of the rest of it being read on and dropped.
            context.fireErrorCaught(ClientError.lineTooLong(limit: lines.maxLength))
            context.close(promise: nil)
        }
    }

    func read(context: ChannelHandlerContext) {
        if full {
            readHeldBack = true
        } else {
            context.read()
        }
    }

    /// The consumer made room: the read held back goes out.
    private func resumeReading() {
        full = false
        guard readHeldBack, let context else { return }
        readHeldBack = false
        context.read()
    }
}
