// SPDX-License-Identifier: Apache-2.0
import BlockingWork
public import Logging
public import NIOCore
import NIOPosix
public import ShakeDetection
public import ShakeProtocol
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The socket server: accepts subscribers on a Unix stream socket and sends each of them every shake event as a
/// JSON line (protocol v1, `docs/protocol.md`), answers their requests, and keeps subscribers from holding each
/// other up.
///
/// All of its state lives on one event loop, in a `NIOLoopBoundBox` that checks every access is made there; the
/// public methods are safe to call from any thread.
public final class ShakeServer: Sendable {
    /// What the daemon provides to the server.
    public struct Hooks: Sendable {
        /// The daemon's state for `hello` and `status`.
        public var status: @Sendable () -> DaemonStatus
        /// Runs a simulated shake through the detector (`{"request":"simulate"}`), for the user who asked (nil
        /// when the kernel did not say).
        public var simulate: @Sendable (_ requester: UInt32?) -> Void
        /// A connection (by its number) of `user` asks the daemon to press `chord` on events of `phases`
        /// (`{"request":"key"}`); called on the server's loop. - Returns: nil when accepted, else the error to
        /// answer with (a chord the daemon cannot press, no virtual keyboard).
        public var key:
            @Sendable (_ connection: UInt64, _ user: UInt32, _ chord: String, _ phases: Set<ShakeEvent.Phase>) ->
                RequestError?
        /// A connection whose `key` was accepted closed, or may no longer ask; called on the server's loop.
        public var keyEnded: @Sendable (_ connection: UInt64) -> Void
        /// Called (on the server's loop) when the clients that want events or samples change, so capture can
        /// stop while nobody listens: the user of each subscriber (nil when the kernel did not say), and the
        /// number of sample streams.
        public var listenersChanged: @Sendable (_ subscribers: [UInt32?], _ sampleStreams: Int) -> Void

        public init(
            status: @escaping @Sendable () -> DaemonStatus,
            simulate: @escaping @Sendable (UInt32?) -> Void = { _ in },
            listenersChanged: @escaping @Sendable ([UInt32?], Int) -> Void = { _, _ in },
            key: @escaping @Sendable (UInt64, UInt32, String, Set<ShakeEvent.Phase>) -> RequestError? = { _, _, _, _ in
                RequestError(code: "key_unavailable", message: "this server presses no keys")
            },
            keyEnded: @escaping @Sendable (UInt64) -> Void = { _ in }
        ) {
            self.status = status
            self.simulate = simulate
            self.listenersChanged = listenersChanged
            self.key = key
            self.keyEnded = keyEnded
        }
    }

    /// The daemon's side of `status`.
    public struct DaemonStatus: Sendable {
        public var sensor: SensorInfo
        public var shaking: Bool
        public var counters: [String: Int]

        public init(sensor: SensorInfo, shaking: Bool, counters: [String: Int] = [:]) {
            self.sensor = sensor
            self.shaking = shaking
            self.counters = counters
        }
    }

    /// Where to listen.
    public enum Listener: Sendable {
        /// A socket file, created with the given mode and (optionally) group.
        case path(String, mode: UInt32 = 0o666, group: UInt32? = nil)
        /// A listening socket passed by systemd.
        case descriptor(Int32)
    }

    /// Where the server is in its life: ``start(_:)`` and ``shutdown()`` move it on, once each.
    public enum Lifecycle: Sendable, Equatable {
        case notStarted, starting, running, shuttingDown, stopped
    }

    /// ``start(_:)`` on a server that is not new.
    public struct AlreadyStarted: Error, Equatable {
        public var lifecycle: Lifecycle

        public init(lifecycle: Lifecycle) {
            self.lifecycle = lifecycle
        }
    }

    let logger: Logger
    let hooks: Hooks
    /// The server's own loop, one thread; nil when it was given a loop it does not own
    /// (``init(configuration:hooks:logger:eventLoop:)``).
    let group: MultiThreadedEventLoopGroup?
    let eventLoop: any EventLoop
    /// When the server was made, on a monotonic clock (running through suspend): `status`'s uptime, which a step
    /// of the wall clock does not change.
    let started = ContinuousClock.now
    /// Identifies this run: clients that see it change know seq numbers started again.
    public let run: String = {
        let hex = String(UInt64.random(in: 1...UInt64.max), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }()

    /// State confined to `eventLoop`.
    struct LoopState {
        /// The configuration in force; ``update(_:)`` changes it.
        var configuration: ServerConfiguration
        var listener: (any Channel)?
        var clients: [ObjectIdentifier: Client] = [:]
        var seq = 0
        var ring: ReplayRing<ByteBuffer>
        var counters = ServerCounters()
        var socketFile: String?
        /// The most clients connected at once since they were last all gone.
        var peakClients = 0
        /// Connections by user (uid; clients without credentials under `UInt32.max`).
        var clientsPerUser: [UInt32: Int] = [:]
        /// Clients streaming samples (kept as they change: counting them is not worth a pass over every client).
        var sampleStreams = 0
        /// Bytes held for all clients together (``Client/owed``).
        var owedTotal = 0
        /// Over ``ServerConfiguration/totalBuffer``: clients that are owed anything are neither read nor sent
        /// events, until the total is back under three quarters of it.
        var overBudget = false
        /// Request lines handled in this turn (``ShakeServer/linesPerTurn``), and the clients waiting for the next.
        var turns = RequestTurns<() -> Void>(linesPerTurn: ShakeServer.linesPerTurn)
        /// Refusals and limits, logged at most once per interval and kind.
        var warnings = LogLimiter<Warning>(interval: ShakeServer.warningInterval)
        /// The report of the warnings counted, scheduled while some are (nothing wakes an idle server for it).
        var warningsTask: Scheduled<Void>?
    }

    let loop: NIOLoopBoundBox<LoopState>

    /// What any thread may touch, under a lock: the lifecycle. Work is handed to the loop under this lock and
    /// only before ``Lifecycle/stopped``, so nothing reaches a loop that has shut down, and work handed over by
    /// one publisher after another reaches the loop in that order.
    struct Outside {
        var lifecycle = Lifecycle.notStarted
    }

    let outside = Locked(Outside())
    /// The number of sample streams, as the loop last counted them: read by ``publish(sample:)`` on the
    /// publisher's thread, so that samples nobody streams never reach the loop.
    let streaming = Atomic(0)

    /// Where the server is in its life.
    public var lifecycle: Lifecycle { outside.withLock { $0.lifecycle } }

    /// Runs `work` on the event loop unless the server has stopped.
    func onLoop(_ work: @escaping @Sendable () -> Void) {
        outside.withLock { state in
            guard state.lifecycle != .stopped else { return }
            eventLoop.execute(work)
        }
    }

    // The loop state's parts, by name (each access checked to be on the loop), for the server's jobs in
    // ShakeServer+*.swift: accepting, requests, access, status, events, delivery, warnings.
    var configuration: ServerConfiguration {
        get { loop.value.configuration }
        _modify { yield &loop.value.configuration }
    }
    var listener: (any Channel)? {
        get { loop.value.listener }
        _modify { yield &loop.value.listener }
    }
    var clients: [ObjectIdentifier: Client] {
        get { loop.value.clients }
        _modify { yield &loop.value.clients }
    }
    var seq: Int {
        get { loop.value.seq }
        _modify { yield &loop.value.seq }
    }
    var ring: ReplayRing<ByteBuffer> {
        get { loop.value.ring }
        _modify { yield &loop.value.ring }
    }
    var counters: ServerCounters {
        get { loop.value.counters }
        _modify { yield &loop.value.counters }
    }
    var socketFile: String? {
        get { loop.value.socketFile }
        _modify { yield &loop.value.socketFile }
    }
    var peakClients: Int {
        get { loop.value.peakClients }
        _modify { yield &loop.value.peakClients }
    }

    /// Most clients the process's descriptor limit leaves room for: the soft limit as the server starts, less
    /// ``reservedDescriptors``. When `max_clients` asks for more, clients past this are refused with
    /// `too_many_clients` (and the log says so) instead of waiting unanswered while `accept` fails with EMFILE.
    let descriptorCapacity: Int

    public convenience init(configuration: ServerConfiguration = ServerConfiguration(), hooks: Hooks, logger: Logger) {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.init(configuration: configuration, hooks: hooks, logger: logger, group: group, eventLoop: group.next())
    }

    /// A server whose state lives on `eventLoop`, which it neither owns nor shuts down: for tests that run its
    /// channel handlers on an `EmbeddedChannel` (such a server does not listen).
    convenience init(configuration: ServerConfiguration, hooks: Hooks, logger: Logger, eventLoop: any EventLoop) {
        self.init(configuration: configuration, hooks: hooks, logger: logger, group: nil, eventLoop: eventLoop)
    }

    private init(
        configuration: ServerConfiguration, hooks: Hooks, logger: Logger, group: MultiThreadedEventLoopGroup?,
        eventLoop: any EventLoop
    ) {
        self.hooks = hooks
        self.logger = logger
        descriptorCapacity = Self.descriptorCapacity()
        self.group = group
        self.eventLoop = eventLoop
        loop = .makeBoxSendingValue(
            LoopState(configuration: configuration, ring: ReplayRing(capacity: configuration.replayCapacity)),
            eventLoop: eventLoop)
    }

    /// Starts listening.
    /// - Throws: ``AlreadyStarted`` when called a second time; ``SocketFile/Unavailable`` when the path is taken by
    ///   a live daemon or is not a socket, or the error of binding (the server can then be started again).
    public func start(_ listener: Listener) async throws {
        try outside.withLock { (state: inout Outside) throws(AlreadyStarted) in
            guard state.lifecycle == .notStarted else { throw AlreadyStarted(lifecycle: state.lifecycle) }
            state.lifecycle = .starting
        }
        do {
            try await listen(listener)
            outside.withLock { if $0.lifecycle == .starting { $0.lifecycle = .running } }
        } catch {
            outside.withLock { if $0.lifecycle == .starting { $0.lifecycle = .notStarted } }
            throw error
        }
    }

    /// Stops: closes the listening socket, flushes what each client is owed, then closes every connection. Once:
    /// a second call, or one while a shutdown is under way, returns at once.
    public func shutdown() async {
        let previous = outside.withLock { state in
            defer { if state.lifecycle != .stopped { state.lifecycle = .shuttingDown } }
            return state.lifecycle
        }
        guard previous != .shuttingDown && previous != .stopped else { return }
        let closing: EventLoopFuture<Void> = eventLoop.flatSubmit {
            self.loop.value.warningsTask?.cancel()
            self.logSuppressedWarnings(all: true)
            let listenerClosed = self.listener?.close() ?? self.eventLoop.makeSucceededVoidFuture()
            let clientsClosed = self.clients.values.map { $0.flushAndClose() }
            return EventLoopFuture.andAllComplete([listenerClosed] + clientsClosed, on: self.eventLoop)
        }
        try? await closing.get()
        if let path = try? await eventLoop.submit({ self.socketFile }).get() {
            unlink(path)
        }
        outside.withLock { $0.lifecycle = .stopped }
        try? await group?.shutdownGracefully()
    }

    /// Runs `task` on the server's event loop every `interval` until shutdown. A loop that hangs stops running
    /// it, which is what the systemd watchdog's keep-alive needs.
    @discardableResult
    public func repeatOnEventLoop(every interval: Duration, _ task: @escaping @Sendable () -> Void) -> RepeatedTask {
        eventLoop.scheduleRepeatedTask(initialDelay: .zero, delay: TimeAmount(interval)) { _ in task() }
    }

    /// The number of connected clients (for tests and status).
    public func clientCount() async -> Int {
        (try? await eventLoop.submit { self.clients.count }.get()) ?? 0
    }

    /// The seq of the latest event.
    public func latestSeq() async -> Int {
        (try? await eventLoop.submit { self.seq }.get()) ?? 0
    }
}
