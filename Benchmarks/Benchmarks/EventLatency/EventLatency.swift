// SPDX-License-Identifier: Apache-2.0
import Benchmark
import CEpoll
import Foundation
import Logging
import NIOPosix
import ShakeClient
import ShakeDetection
import ShakeProtocol
import ShakeServer
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Event latency: from the moment the detector hands an event to the server (the sample that decides it has
/// just been processed) to its arrival at the last of N subscribers, over real Unix sockets. Measured twice: at
/// the subscribers' sockets (one reader thread with epoll, sharing the machine's cores with the server), and
/// through the Swift client library with every subscriber parsing and delivering the event to its own async
/// sequence. One iteration is one event; the
/// wall-clock percentiles are the latency percentiles.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock],
        timeUnits: .microseconds,
        warmupIterations: 20,
        maxDuration: .seconds(10),
        maxIterations: 500
    )
    for subscribers in [1, 100, 1000] {
        // The physical limit on this machine, in the same run: a plain loop writing the server's event line to
        // N connected Unix sockets, read by the same epoll reader. The figures below are stated as ratios to it.
        // Like the server's fan-out, the loop runs on an event loop thread of its own, woken for each event,
        // while the reader waits on the sockets.
        Benchmark("plain write to \(subscribers) sockets (baseline)") { benchmark in
            let rig = try await Rigs.shared.baselineRig(sockets: subscribers)
            benchmark.startMeasurement()
            rig.writeOnLoopAndWait()
            benchmark.stopMeasurement()
        }
        // The same loop on the reader's own thread: no thread woken, no reader awake while it writes. For
        // reference only (a fan-out from the server's event loop cannot be like this).
        Benchmark("plain write to \(subscribers) sockets (reader's thread)") { benchmark in
            let rig = try await Rigs.shared.baselineRig(sockets: subscribers)
            benchmark.startMeasurement()
            rig.writeAndWait()
            benchmark.stopMeasurement()
        }
        // Arrival at the subscribers' sockets: what any subscriber process can see first.
        Benchmark("event to \(subscribers) subscribers (socket)") { benchmark in
            let rig = try await Rigs.shared.socketRig(subscribers: subscribers)
            benchmark.startMeasurement()
            rig.publishAndWait()
            benchmark.stopMeasurement()
        }
        // Arrival through the Swift client library (parsed, delivered to an async sequence per subscriber),
        // all subscribers in this process.
        Benchmark("event to \(subscribers) subscribers (ShakeClient)") { benchmark in
            let rig = try await Rigs.shared.rig(subscribers: subscribers)
            benchmark.startMeasurement()
            await rig.publishAndWait()
            benchmark.stopMeasurement()
        }
    }
}

/// Subscribers as plain sockets, all read by one thread with epoll(7) (which, unlike poll(2), costs nothing per
/// idle socket): latency to the last byte's arrival.
final class SocketRig: @unchecked Sendable {
    let server: ShakeServer
    let subscribers: Int
    private var descriptors: [Int32] = []
    private let epoll: Int32
    private var newlines = 0
    /// The number of the last event published (the daemon's event path gives them).
    private var seq = 0

    init(subscribers: Int) async throws {
        self.subscribers = subscribers
        let path: String
        (server, path) = try await startServer(name: "raw-\(subscribers)")
        epoll = epoll_create1(0)
        for _ in 0..<subscribers {
            let fd = connectedSocket(path)
            descriptors.append(fd)
            var event = epoll_event()
            event.events = UInt32(EPOLLIN.rawValue)
            event.data.fd = fd
            precondition(epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event) == 0, "cannot watch a subscriber")
        }
        wait(forNewlines: subscribers)  // every hello
    }

    /// Reads whatever arrived until `count` more newlines have been seen in total.
    private func wait(forNewlines count: Int) {
        readNewlines(epoll, until: newlines + count, counted: &newlines)
    }

    /// Publishes one event and returns when every subscriber's socket has delivered it.
    func publishAndWait() {
        seq += 1
        server.publish(.began(time: 1), seq: seq)
        wait(forNewlines: subscribers)
    }
}

/// N connected Unix socket pairs: one loop writes the same line to every writing end, one epoll reader (as
/// ``SocketRig``'s) waits for it at every reading end. No server, no channels: the cost of the system calls.
///
/// The loop runs where the server's fan-out runs, on an event loop thread of its own (``writeOnLoopAndWait()``):
/// the event reaches the writing thread the same way (a wake-up of a loop asleep in epoll), and the reader waits on
/// the sockets while the loop writes, woken as lines arrive, in both. (Written on the reader's own thread, before
/// the reading, ``writeAndWait()``, the loop would pay neither: on a machine whose cores are busy, the wake-ups
/// are what a fan-out from another thread waits for most, not its own work.)
final class BaselineRig: @unchecked Sendable {
    let sockets: Int
    private var writers: [Int32] = []
    private let epoll: Int32
    private var newlines = 0
    private let line: [UInt8]
    /// One thread, as the server has.
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    init(sockets: Int) async throws {
        self.sockets = sockets
        line = try await Self.eventLine()
        epoll = epoll_create1(0)
        for _ in 0..<sockets {
            var pair: [Int32] = [0, 0]
            precondition(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0, "cannot make a socket pair")
            writers.append(pair[0])
            var event = epoll_event()
            event.events = UInt32(EPOLLIN.rawValue)
            event.data.fd = pair[1]
            precondition(epoll_ctl(epoll, EPOLL_CTL_ADD, pair[1], &event) == 0, "cannot watch a socket")
        }
    }

    /// Hands the loop to the event loop thread, as ``ShakeServer/publish(_:simulated:at:)`` hands it the event,
    /// then reads until every socket has delivered the line.
    func writeOnLoopAndWait() {
        group.next().execute { [writers, line] in Self.write(line, to: writers) }
        readNewlines(epoll, until: newlines + sockets, counted: &newlines)
    }

    /// The line the server writes for the event the other rigs publish, read from a real subscriber.
    static func eventLine() async throws -> [UInt8] {
        let (server, path) = try await startServer(name: "baseline-line")
        let fd = connectedSocket(path)
        defer { close(fd) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var published = false
        // The hello first, then the event's line.
        while received.filter({ $0 == 10 }).count < 2 {
            if !published, received.contains(10) {
                server.publish(.began(time: 1), seq: 1)
                published = true
            }
            let read = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            precondition(read > 0, "the server closed the connection")
            received += buffer[0..<read]
        }
        let lines = received.split(separator: 10, omittingEmptySubsequences: true)
        return Array(lines[1]) + [10]
    }

    /// Writes the line to every socket on this thread, then reads until every one has delivered it.
    func writeAndWait() {
        Self.write(line, to: writers)
        readNewlines(epoll, until: newlines + sockets, counted: &newlines)
    }

    /// The plain loop: one `write` per socket.
    private static func write(_ line: [UInt8], to writers: [Int32]) {
        line.withUnsafeBytes { bytes in
            for fd in writers {
                let written = Glibc.write(fd, bytes.baseAddress, bytes.count)
                precondition(written == bytes.count, "a short write")
            }
        }
    }
}

/// A quiet server on a fresh socket path, with the descriptor limit raised for many subscribers.
func startServer(name: String) async throws -> (ShakeServer, String) {
    raiseDescriptorLimit()
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("shaked-bench-\(getpid())-\(name).sock")
        .path
    var logger = Logger(label: "bench")
    logger.logLevel = .critical
    let server = ShakeServer(hooks: .init(status: { .init(sensor: .none, shaking: false) }), logger: logger)
    try await server.start(.path(path))
    return (server, path)
}

func raiseDescriptorLimit() {
    var limit = rlimit()
    if getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < 8192 {
        limit.rlim_cur = min(limit.rlim_max, 8192)
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    }
}

/// One server and its subscribers per size, made once and kept for the run.
actor Rigs {
    static let shared = Rigs()
    private var rigs: [Int: LatencyRig] = [:]
    private var socketRigs: [Int: SocketRig] = [:]
    private var baselineRigs: [Int: BaselineRig] = [:]

    func baselineRig(sockets: Int) async throws -> BaselineRig {
        if let rig = baselineRigs[sockets] { return rig }
        let rig = try await BaselineRig(sockets: sockets)
        baselineRigs[sockets] = rig
        return rig
    }

    func socketRig(subscribers: Int) async throws -> SocketRig {
        if let rig = socketRigs[subscribers] { return rig }
        let rig = try await SocketRig(subscribers: subscribers)
        socketRigs[subscribers] = rig
        return rig
    }

    func rig(subscribers: Int) async throws -> LatencyRig {
        if let rig = rigs[subscribers] { return rig }
        let rig = try await LatencyRig(subscribers: subscribers)
        rigs[subscribers] = rig
        return rig
    }
}

final class LatencyRig: Sendable {
    let server: ShakeServer
    let subscribers: Int
    private final class State: Sendable {
        let mutex = Mutex<(arrived: Int, target: Int, waiter: CheckedContinuation<Void, Never>?)>((0, 0, nil))
    }
    private let state = State()
    private let connections: [ShakeConnection]

    init(subscribers: Int) async throws {
        self.subscribers = subscribers
        let path: String
        (server, path) = try await startServer(name: "client-\(subscribers)")
        var connections: [ShakeConnection] = []
        for _ in 0..<subscribers {
            connections.append(try await ShakeClient(socketPath: path).connect())
        }
        self.connections = connections
        for connection in connections {
            Task { [state] in
                for try await message in connection.messages {
                    guard case .shake = message else { continue }
                    let waiter: CheckedContinuation<Void, Never>? = state.mutex.withLock {
                        $0.arrived += 1
                        guard $0.arrived == $0.target, let waiter = $0.waiter else { return nil }
                        $0.waiter = nil
                        return waiter
                    }
                    waiter?.resume()
                }
            }
        }
    }

    /// Publishes one event and returns when every subscriber has received it.
    func publishAndWait() async {
        await withCheckedContinuation { continuation in
            let seq = state.mutex.withLock {
                $0.target += subscribers
                $0.waiter = continuation
                return $0.target / subscribers
            }
            server.publish(.began(time: 1), seq: seq)
        }
    }
}

/// A blocking Unix stream socket connected to `path`, as a plain subscriber has it.
private func connectedSocket(_ path: String) -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { buffer in
        for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
    }
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    precondition(connected == 0, "cannot connect")
    return fd
}

/// Reads whatever the sockets watched by `epoll` deliver until `newlines` reaches `target`: the one reader of the
/// socket subscribers and of the baseline.
private func readNewlines(_ epoll: Int32, until target: Int, counted newlines: inout Int) {
    var buffer = [UInt8](repeating: 0, count: 4096)
    var events = [epoll_event](repeating: epoll_event(), count: 256)
    while newlines < target {
        let ready = epoll_wait(epoll, &events, Int32(events.count), 1000)
        guard ready > 0 else { continue }
        for index in 0..<Int(ready) {
            let fd = events[index].data.fd
            let read = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if read > 0 { newlines += buffer[0..<read].reduce(0) { $0 + ($1 == 10 ? 1 : 0) } }
        }
    }
}
