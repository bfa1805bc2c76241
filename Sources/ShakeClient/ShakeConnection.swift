import Foundation
import Glibc
import NIOCore
import NIOPosix
public import ShakeProtocol

/// One connection to the daemon: send requests, read its messages.
public final class ShakeConnection: Sendable {
    /// The daemon's greeting.
    public let hello: ServerMessage.Hello
    /// Everything the daemon sends after `hello`, in order; finishes when the connection closes. Read as the
    /// consumer asks: while it does not, the connection stops reading its socket (past ``backPressure``), so
    /// the daemon's queue for this client fills and it drops events and samples, reported by `dropped`.
    public let messages: AsyncThrowingStream<ServerMessage, any Error>
    private let channel: any Channel
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>

    private init(hello: ServerMessage.Hello, reader: MessageReader, channel: NIOAsyncChannel<Frame, ByteBuffer>) {
        self.hello = hello
        messages = AsyncThrowingStream { try await reader.next() }
        self.channel = channel.channel
        outbound = channel.outbound
    }

    typealias Frame = LineFrameDecoder.Frame

    /// The longest line accepted from the daemon.
    static let maxLineLength = 1 << 20

    /// Lines read from the socket and not yet taken by the consumer: past the high mark the connection stops
    /// reading, below the low one it reads again.
    static let backPressure = NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark(
        lowWatermark: 16, highWatermark: 64)

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
        do {
            channel = try await withReachablePath(path) { reachable in
                try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .connect(unixDomainSocketPath: reachable) { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(
                                ByteToMessageHandler(LineFrameDecoder(maxLength: maxLineLength)))
                            return try NIOAsyncChannel<Frame, ByteBuffer>(
                                wrappingChannelSynchronously: channel,
                                configuration: .init(backPressureStrategy: backPressure))
                        }
                    }
            }
        } catch {
            throw ClientError.cannotConnect(path: path, reason: Self.describe(error))
        }
        let reader = MessageReader(channel.inbound)
        let first: ServerMessage?
        do {
            first = try await reader.next()
        } catch {
            await close(channel.channel)
            throw error
        }
        guard let first else {
            await close(channel.channel)
            throw ClientError.closed
        }
        switch first {
        case .hello(let hello):
            guard hello.protocolVersion == ServerMessage.protocolVersion else {
                await close(channel.channel)
                throw ClientError.protocolMismatch(
                    "the daemon speaks protocol \(hello.protocolVersion), this client \(ServerMessage.protocolVersion)")
            }
            // The rest of the stream continues where the reader stopped.
            return ShakeConnection(hello: hello, reader: reader, channel: channel)
        case .error(let code, let message):
            await close(channel.channel)
            throw ClientError.refused(code: code, message: message)
        default:
            await close(channel.channel)
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
        try await outbound.write(buffer)
    }

    /// Sends raw bytes (for tests of the daemon's error handling).
    public func send(raw text: String) async throws {
        var buffer = channel.allocator.buffer(capacity: text.utf8.count)
        buffer.writeString(text)
        try await outbound.write(buffer)
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

/// Reads the daemon's lines one at a time, as they are asked for, and parses them; a line this client cannot
/// decode (a newer daemon's message) is skipped, not fatal.
///
/// `@unchecked Sendable`: its iterator is only ever used by one reader at a time — `open`, before the connection
/// exists, then the `messages` stream, which awaits one `next()` at a time (an `AsyncThrowingStream` has a single
/// consumer).
private final class MessageReader: @unchecked Sendable {
    private var iterator: NIOAsyncChannelInboundStream<LineFrameDecoder.Frame>.AsyncIterator

    init(_ inbound: NIOAsyncChannelInboundStream<LineFrameDecoder.Frame>) {
        iterator = inbound.makeAsyncIterator()
    }

    func next() async throws -> ServerMessage? {
        while let frame = try await iterator.next() {
            guard case .line(let line) = frame else { continue }
            if let message = try? ServerMessage.parse(line.readableBytesView) { return message }
        }
        return nil
    }
}
