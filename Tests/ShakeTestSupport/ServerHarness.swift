// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
public import ShakeClient
public import ShakeDetection
import ShakeProtocol
public import ShakeServer

/// A server on a fresh socket path, with a status the test controls (for the server's and the client library's
/// tests).
public final class ServerHarness: Sendable {
    public let path: String
    public let server: ShakeServer
    public let simulated = Counter()
    public let listeners = Counter()
    /// The users of the subscribers, as the server last reported them.
    public let listenerUsers = Users()
    /// The number of sample streams, as the server last reported it.
    public let sampleStreams = Counter()
    /// Every report of the listeners that keep capture on, as their number, in order.
    public let listenerReports = Log()
    /// What the server handed the daemon: `key` requests, connections whose key ended, simulate requesters.
    public let keys = Log()
    /// The number of the last event published (the daemon's event path numbers them; here the harness does).
    public let published = Counter()

    /// Publishes `event` with the next number. - Returns: its number.
    @discardableResult
    public func publish(_ event: ShakeEvent, simulated: Bool = false) -> Int {
        let seq = published.next()
        server.publish(event, seq: seq, simulated: simulated)
        return seq
    }

    public final class Log: @unchecked Sendable {
        public init() {}
        private let lock = NSLock()
        private var lines: [String] = []
        public func append(_ line: String) { lock.withLock { lines.append(line) } }
        public var current: [String] { lock.withLock { lines } }
    }

    public final class Users: @unchecked Sendable {
        public init() {}
        private let lock = NSLock()
        private var users: [UInt32?] = []
        public func set(_ new: [UInt32?]) { lock.withLock { users = new } }
        public var current: [UInt32?] { lock.withLock { users } }
    }

    public final class Counter: @unchecked Sendable {
        public init() {}
        private let lock = NSLock()
        private var value = 0
        public func set(_ new: Int) { lock.withLock { value = new } }
        public func increment() { lock.withLock { value += 1 } }
        public func next() -> Int {
            lock.withLock {
                value += 1
                return value
            }
        }
        public var current: Int { lock.withLock { value } }
    }

    public init(configuration: ServerConfiguration = ServerConfiguration(), name: String = #function) async throws {
        // A thousand subscribers need two thousand descriptors: raise the soft limit as far as allowed.
        UnixSocket.raiseDescriptorLimit(to: 8192)
        let directory = URL(fileURLWithPath: try Scratch.directory("server"))
        path = directory.appendingPathComponent("shaked.sock").path
        let simulated = self.simulated
        let listeners = self.listeners
        let listenerUsers = self.listenerUsers
        let sampleStreams = self.sampleStreams
        let listenerReports = self.listenerReports
        let keys = self.keys
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        server = ShakeServer(
            configuration: configuration,
            hooks: .init(
                status: {
                    .init(
                        sensor: SensorInfo(source: "test", name: "fake", rate: 100), shaking: false,
                        counters: ["samples": 42])
                },
                simulate: { requester in
                    simulated.increment()
                    keys.append("simulate by \(requester.map(String.init) ?? "nobody")")
                },
                listenersChanged: { subscribers, streams in
                    listenerUsers.set(subscribers)
                    sampleStreams.set(streams)
                    listeners.set(subscribers.count)
                    listenerReports.append("\(subscribers.count)")
                },
                key: { connection, user, chord, phases in
                    guard chord != "bad" else { return RequestError(code: "bad_value", message: "not a chord") }
                    let names = ShakeEvent.Phase.allCases.filter(phases.contains).map(\.rawValue)
                    keys.append("key \(connection) \(user) \(chord) \(names.joined(separator: ","))")
                    return nil
                },
                keyEnded: { connection in keys.append("ended \(connection)") }),
            logger: logger)
        try await server.start(.path(path))
    }

    public var client: ShakeClient { ShakeClient(socketPath: path) }

    public func stop() async {
        await server.shutdown()
        try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }

    /// Waits until `condition` holds, for at most `seconds` and at least 100 looks: a deadline, not a pace (it
    /// returns as soon as the condition holds), generous enough for sanitizer builds on a busy machine. The looks
    /// count because the whole suite runs at once: tests that block their threads (the command-line and
    /// integration tests) can hold up every async test for a minute, the deadline passing meanwhile, and the
    /// tasks that would make the condition true resume only when this one does.
    public static func eventually(_ seconds: Double = 30, _ condition: () async -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var looks = 0
        while Date() < deadline || looks < 100 {
            if await condition() { return true }
            looks += 1
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return await condition()
    }
}

/// A raw Unix-socket client with blocking I/O, for misbehaving peers (never reading, sending garbage).
public final class RawClient {
    public let fd: Int32

    public init(path: String) throws {
        guard let fd = UnixSocket.connect(path) else { throw POSIXError(.ECONNREFUSED) }
        self.fd = fd
        // A deadline for each read: generous, since sanitizer builds are slow.
        UnixSocket.setReceiveTimeout(fd, seconds: 30)
    }

    deinit { close(fd) }

    public func write(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes {
                Foundation.write(fd, $0.baseAddress! + offset, $0.count - offset)
            }
            if written <= 0 { return }
            offset += written
        }
    }

    private var buffered: [UInt8] = []

    /// Reads one line (without the newline), or nil at end of stream or time-out.
    public func readLine() -> String? {
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffered[..<newline], as: UTF8.self)
                buffered.removeSubrange(...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            guard count > 0 else { return nil }
            buffered += chunk[..<count]
        }
    }

    /// Reads lines until one contains `text`; returns it, or nil.
    public func readLine(containing text: String, limit: Int = 100_000) -> String? {
        for _ in 0..<limit {
            guard let line = readLine() else { return nil }
            if line.contains(text) { return line }
        }
        return nil
    }
}
