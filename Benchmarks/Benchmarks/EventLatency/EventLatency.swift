import Benchmark
import Foundation
import Logging
import ShakeClient
import ShakeDetection
import ShakeProtocol
import ShakeServer
import Synchronization

/// Event latency: from the moment the detector hands an event to the server (the sample that decides it has
/// just been processed) to its arrival at the last of N subscribers, over real Unix sockets, with the
/// subscribers reading through the Swift client library. One iteration is one event; the wall-clock
/// percentiles are the latency percentiles.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock],
        timeUnits: .microseconds,
        warmupIterations: 20,
        maxDuration: .seconds(10),
        maxIterations: 500
    )
    for subscribers in [1, 100, 1000] {
        Benchmark("event to \(subscribers) subscribers") { benchmark in
            let rig = try await Rigs.shared.rig(subscribers: subscribers)
            benchmark.startMeasurement()
            await rig.publishAndWait()
            benchmark.stopMeasurement()
        }
    }
}

/// One server and its subscribers per size, made once and kept for the run.
actor Rigs {
    static let shared = Rigs()
    private var rigs: [Int: LatencyRig] = [:]

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
        var limit = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < 8192 {
            limit.rlim_cur = min(limit.rlim_max, 8192)
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        }
        self.subscribers = subscribers
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("shaked-bench-\(getpid())-\(subscribers).sock").path
        var logger = Logger(label: "bench")
        logger.logLevel = .critical
        server = ShakeServer(hooks: .init(status: { .init(sensor: .none, shaking: false) }), logger: logger)
        try await server.start(.path(path))
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
            state.mutex.withLock {
                $0.target += subscribers
                $0.waiter = continuation
            }
            server.publish(.began(time: 1))
        }
    }
}
