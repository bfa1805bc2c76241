// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
public import ShakeDetection
public import ShakeProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// A client of the shaked daemon: subscribe to shake events, ask for status, simulate a shake, stream samples.
///
/// ```swift
/// let client = ShakeClient()
/// for try await shake in client.events(phases: [.ended]) {
///     print("shake #\(shake.seq)")
/// }
/// ```
public struct ShakeClient: Sendable {
    /// The daemon's socket.
    public var socketPath: String

    /// A client of the daemon at `socketPath` (by default `$SHAKED_SOCKET`, else `/run/shaked/shaked.sock`).
    public init(socketPath: String? = nil) {
        self.socketPath = socketPath ?? SocketPath.forClients(environment: ProcessInfo.processInfo.environment)
    }

    /// Opens a connection; the daemon's `hello` is read before this returns.
    public func connect() async throws -> ShakeConnection {
        try await ShakeConnection.open(path: socketPath)
    }

    /// The daemon's status.
    public func status() async throws -> ServerMessage.Status {
        try await withConnection { connection in
            try await connection.send(.status)
            for try await message in connection.messages {
                switch message {
                case .status(let status): return status
                case .error(let code, let message): throw ClientError.refused(code: code, message: message)
                default: continue
                }
            }
            throw ClientError.closed
        }
    }

    /// Asks the daemon to run a simulated shake through its detector; its events carry `simulated`.
    public func simulate() async throws {
        try await expectOK(.simulate)
    }

    private func expectOK(_ request: Request) async throws {
        try await withConnection { connection in
            try await connection.send(request)
            for try await message in connection.messages {
                switch message {
                case .ok(let name) where name == request.name: return
                case .error(let code, let message): throw ClientError.refused(code: code, message: message)
                default: continue
                }
            }
            throw ClientError.closed
        }
    }

    /// Runs `body` on a new connection, and closes it (waiting until it is closed) however `body` ends.
    private func withConnection<Result: Sendable>(
        _ body: @Sendable (ShakeConnection) async throws -> Result
    ) async throws -> Result {
        let connection = try await connect()
        do {
            let result = try await body(connection)
            await connection.closeAndWait()
            return result
        } catch {
            await connection.closeAndWait()
            throw error
        }
    }

    /// Raw samples from the daemon's sensor, as they arrive (needs the daemon's permission).
    public func samples() -> AsyncThrowingStream<Sample, any Error> {
        Self.stream { continuation in await deliverSamples(to: continuation) }
    }

    /// Raw samples, as ``samples()``, for the time `body` runs: when it returns or throws, the connection is
    /// closed before this returns. A program that exits right after leaves no socket behind.
    public func withSamples<Result>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (AsyncThrowingStream<Sample, any Error>) async throws -> Result
    ) async throws -> Result {
        try await Self.withStream(
            isolation: isolation, producer: { continuation in await deliverSamples(to: continuation) }, body)
    }

    private func deliverSamples(to continuation: Feed<Sample>) async {
        do {
            try await withConnection { connection in
                try await connection.send(.subscribe(phases: [.ended]))
                try await connection.send(.samples)
                for try await message in connection.messages {
                    switch message {
                    case .sample(let sample): await continuation.yield(sample)
                    case .error(let code, let message): throw ClientError.refused(code: code, message: message)
                    default: continue
                    }
                }
            }
            continuation.finish()
        } catch {
            continuation.finish(throwing: error)
        }
    }

    /// Hands a producer's elements to the consumer through a small buffer: `yield` returns at once while it has
    /// room and waits while it is full (``WatermarkBuffer``), so a consumer that does not ask holds the producer
    /// up, and with it the reading of the socket — at most `high` elements pile up in between.
    struct Feed<Element: Sendable>: Sendable {
        let buffer = WatermarkBuffer<Element>()

        func yield(_ element: Element) async {
            await buffer.yield(element)
        }

        func finish() {
            buffer.finish()
        }

        func finish(throwing error: any Error) {
            buffer.finish(throwing: error)
        }

        /// The consumer's side; `keepAlive` lives as long as the stream.
        func stream(keepAlive: (any Sendable)? = nil) -> AsyncThrowingStream<Element, any Error> {
            let buffer = self.buffer
            return AsyncThrowingStream {
                _ = keepAlive
                return try await buffer.next()
            }
        }
    }

    /// Cancels the producer once the stream it feeds is gone, whether consumed to the end or dropped halfway.
    private final class ProducerTask<Element: Sendable>: Sendable {
        let task: Task<Void, Never>
        let buffer: WatermarkBuffer<Element>

        init(_ task: Task<Void, Never>, buffer: WatermarkBuffer<Element>) {
            self.task = task
            self.buffer = buffer
        }

        deinit {
            buffer.consumerFinished()
            task.cancel()
        }
    }

    /// A stream fed by `producer` in a task of its own, which is cancelled when the consumer stops.
    static func stream<Element: Sendable>(
        _ producer: @escaping @Sendable (Feed<Element>) async -> Void
    ) -> AsyncThrowingStream<Element, any Error> {
        let feed = Feed<Element>()
        let task = ProducerTask(Task { await producer(feed) }, buffer: feed.buffer)
        return feed.stream(keepAlive: task)
    }

    /// Runs `body` with a stream fed by `producer` in a child task, which is cancelled and awaited once `body`
    /// returns or throws: whatever the producer opened is closed by then.
    static func withStream<Element: Sendable, Result>(
        isolation: isolated (any Actor)?,
        producer: @escaping @Sendable (Feed<Element>) async -> Void,
        _ body: (AsyncThrowingStream<Element, any Error>) async throws -> Result
    ) async throws -> Result {
        let feed = Feed<Element>()
        return try await withThrowingTaskGroup(of: Void.self, isolation: isolation) { group in
            group.addTask { await producer(feed) }
            // On a throw the group cancels and awaits the producer itself; on a return it would only await it.
            defer { feed.buffer.consumerFinished() }
            let result = try await body(feed.stream())
            group.cancelAll()
            return result
        }
    }
}

/// What went wrong talking to the daemon.
public enum ClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The socket could not be reached (no daemon, no permission).
    case cannotConnect(path: String, reason: String)
    /// The daemon refused the request.
    case refused(code: String, message: String)
    /// The daemon speaks another protocol version, or did not say hello.
    case protocolMismatch(String)
    /// The connection closed.
    case closed
    /// The daemon sent a line longer than `limit` bytes (the protocol's lines are far shorter): the connection was
    /// closed after the lines before it.
    case lineTooLong(limit: Int)

    public var description: String {
        switch self {
        case .cannotConnect(let path, let reason): "cannot connect to \(path): \(reason)"
        case .refused(let code, let message): "the daemon refused (\(code)): \(message)"
        case .protocolMismatch(let message): "protocol mismatch: \(message)"
        case .closed: "the daemon closed the connection"
        case .lineTooLong(let limit): "the daemon sent a line longer than \(limit) bytes"
        }
    }
}

/// Thrown to a task that asks for the next element of a connection's ``ShakeConnection/messages`` (or of a stream
/// this library returns) while another task is waiting for one: one task at a time reads a sequence. The task
/// that was waiting is not disturbed; the one refused may ask again once the other has stopped.
public struct ConcurrentReadError: Error, Sendable, Hashable, CustomStringConvertible {
    public init() {}

    public var description: String {
        "another task is already reading these messages: one task at a time may read them"
    }
}
