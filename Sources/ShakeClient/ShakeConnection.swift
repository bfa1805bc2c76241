import Foundation
import Glibc
import NIOCore
import NIOPosix
public import ShakeProtocol

/// One connection to the daemon: send requests, read its messages.
public final class ShakeConnection: Sendable {
    /// The daemon's greeting.
    public let hello: ServerMessage.Hello
    /// Everything the daemon sends after `hello`, in order; finishes when the connection closes.
    public let messages: AsyncThrowingStream<ServerMessage, any Error>
    private let channel: any Channel

    private init(
        hello: ServerMessage.Hello, messages: AsyncThrowingStream<ServerMessage, any Error>, channel: any Channel
    ) {
        self.hello = hello
        self.messages = messages
        self.channel = channel
    }

    /// The longest line accepted from the daemon.
    static let maxLineLength = 1 << 20

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
        let (stream, continuation) = AsyncThrowingStream<ServerMessage, any Error>.makeStream()
        let channel: any Channel
        do {
            channel = try await withReachablePath(path) { reachable in
                try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .channelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(
                                ByteToMessageHandler(LineFrameDecoder(maxLength: maxLineLength)))
                            try channel.pipeline.syncOperations.addHandler(MessageHandler(continuation: continuation))
                        }
                    }
                    .connect(unixDomainSocketPath: reachable).get()
            }
        } catch {
            continuation.finish()
            throw ClientError.cannotConnect(path: path, reason: Self.describe(error))
        }
        var iterator = stream.makeAsyncIterator()
        guard let first = try await iterator.next() else {
            await close(channel)
            throw ClientError.closed
        }
        switch first {
        case .hello(let hello):
            guard hello.protocolVersion == ServerMessage.protocolVersion else {
                await close(channel)
                throw ClientError.protocolMismatch(
                    "the daemon speaks protocol \(hello.protocolVersion), this client \(ServerMessage.protocolVersion)")
            }
            // The rest of the stream continues where the iterator stopped.
            let rest = AsyncThrowingStream<ServerMessage, any Error> {
                try await iterator.next()
            }
            return ShakeConnection(hello: hello, messages: rest, channel: channel)
        case .error(let code, let message):
            await close(channel)
            throw ClientError.refused(code: code, message: message)
        default:
            await close(channel)
            throw ClientError.protocolMismatch("the daemon did not start with hello")
        }
    }

    /// Closes `channel` and returns once nothing of it remains: NIO completes `closeFuture` just before it drops
    /// the socket's cached addresses, in the same turn of the event loop, so this waits for one turn more.
    private static func close(_ channel: any Channel) async {
        channel.close(promise: nil)
        try? await channel.closeFuture.get()
        try? await channel.eventLoop.submit {}.get()
    }

    private static func describe(_ error: any Error) -> String {
        if let io = error as? IOError {
            return String(cString: strerror(io.errnoCode))
        }
        return "\(error)"
    }

    /// Sends a request.
    public func send(_ request: Request) async throws {
        var buffer = channel.allocator.buffer(capacity: 64)
        buffer.writeString(request.line)
        buffer.writeInteger(UInt8(ascii: "\n"))
        try await channel.writeAndFlush(buffer)
    }

    /// Sends raw bytes (for tests of the daemon's error handling).
    public func send(raw text: String) async throws {
        var buffer = channel.allocator.buffer(capacity: text.utf8.count)
        buffer.writeString(text)
        try await channel.writeAndFlush(buffer)
    }

    /// Starts closing the connection and returns at once.
    public func close() {
        channel.close(promise: nil)
    }

    /// Closes the connection and returns once the socket is closed, so that nothing of it is left when the
    /// process exits right after.
    public func closeAndWait() async {
        await Self.close(channel)
    }
}

private final class MessageHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = LineFrameDecoder.Frame

    let continuation: AsyncThrowingStream<ServerMessage, any Error>.Continuation

    init(continuation: AsyncThrowingStream<ServerMessage, any Error>.Continuation) {
        self.continuation = continuation
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .line(let line) = unwrapInboundIn(data) else { return }
        // A line this client cannot decode (a newer daemon's message) is skipped, not fatal.
        if let message = try? ServerMessage.parse(line.readableBytesView) {
            continuation.yield(message)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        continuation.finish()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        continuation.finish(throwing: error)
        context.close(promise: nil)
    }
}
