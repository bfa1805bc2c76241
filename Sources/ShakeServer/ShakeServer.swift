// SPDX-License-Identifier: Apache-2.0
import DequeModule
public import FoundationEssentials
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
    let group: MultiThreadedEventLoopGroup
    let eventLoop: any EventLoop
    /// When the server was made, on a monotonic clock (running through suspend): `status`'s uptime, which a step
    /// of the wall clock does not change.
    private let started = ContinuousClock.now
    /// Identifies this run: clients that see it change know seq numbers started again.
    public let run: String = {
        let hex = String(UInt64.random(in: 1...UInt64.max), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }()

    /// State confined to `eventLoop`.
    private struct LoopState {
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
        var warningsTask: RepeatedTask?
    }

    private let loop: NIOLoopBoundBox<LoopState>

    /// What any thread may touch, under a lock: the lifecycle. Work is handed to the loop under this lock and
    /// only before ``Lifecycle/stopped``, so nothing reaches a loop that has shut down, and work handed over by
    /// one publisher after another reaches the loop in that order.
    private struct Outside {
        var lifecycle = Lifecycle.notStarted
    }

    private let outside = Mutex(Outside())
    /// The number of sample streams, as the loop last counted them: read by ``publish(sample:)`` on the
    /// publisher's thread, so that samples nobody streams never reach the loop.
    private let streaming = Atomic(0)

    /// Where the server is in its life.
    public var lifecycle: Lifecycle { outside.withLock { $0.lifecycle } }

    /// Runs `work` on the event loop unless the server has stopped.
    private func onLoop(_ work: @escaping @Sendable () -> Void) {
        outside.withLock { state in
            guard state.lifecycle != .stopped else { return }
            eventLoop.execute(work)
        }
    }

    // The loop state's parts, by name (each access checked to be on the loop).
    private var configuration: ServerConfiguration {
        get { loop.value.configuration }
        _modify { yield &loop.value.configuration }
    }
    private var listener: (any Channel)? {
        get { loop.value.listener }
        _modify { yield &loop.value.listener }
    }
    private var clients: [ObjectIdentifier: Client] {
        get { loop.value.clients }
        _modify { yield &loop.value.clients }
    }
    private var seq: Int {
        get { loop.value.seq }
        _modify { yield &loop.value.seq }
    }
    private var ring: ReplayRing<ByteBuffer> {
        get { loop.value.ring }
        _modify { yield &loop.value.ring }
    }
    private var counters: ServerCounters {
        get { loop.value.counters }
        _modify { yield &loop.value.counters }
    }
    private var socketFile: String? {
        get { loop.value.socketFile }
        _modify { yield &loop.value.socketFile }
    }
    private var peakClients: Int {
        get { loop.value.peakClients }
        _modify { yield &loop.value.peakClients }
    }

    /// Request lines all clients together may have handled in one turn of the loop, and one client before the
    /// others get theirs: requests are served in turns, so many clients sending at once delay each other (and
    /// the watchdog's keep-alive, and a fresh client) by a turn, not by all they sent.
    static let linesPerTurn = 64
    static let linesPerClientTurn = 4
    /// A client with fewer lines handled than this goes ahead of the others in a turn: a fresh client's `status`
    /// is not held up by clients that have asked thousands of times.
    static let newcomerLines = 16
    /// The pause between two turns of requests, in which the loop does its other work.
    static let turnPause = TimeAmount.milliseconds(1)
    /// How often a refusal or limit of one kind is logged at most (the others counted).
    static let warningInterval = TimeAmount.seconds(10)

    /// Most clients the process's descriptor limit leaves room for: the soft limit as the server starts, less
    /// ``reservedDescriptors``. When `max_clients` asks for more, clients past this are refused with
    /// `too_many_clients` (and the log says so) instead of waiting unanswered while `accept` fails with EMFILE.
    let descriptorCapacity: Int
    /// Descriptors kept for the daemon's own use: the listener, the sensor, the event loop, the journal, the bus.
    static let reservedDescriptors = 64

    static func descriptorCapacity() -> Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max
        else { return Int.max }
        return max(1, Int(clamping: limit.rlim_cur) - reservedDescriptors)
    }

    struct ServerCounters {
        var connections = 0
        var refused = 0
        var refusedRequests = 0
        var badLines = 0
        var dropped = 0
        var disconnectedSlow = 0
    }

    public init(configuration: ServerConfiguration = ServerConfiguration(), hooks: Hooks, logger: Logger) {
        self.hooks = hooks
        self.logger = logger
        descriptorCapacity = Self.descriptorCapacity()
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        eventLoop = group.next()
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

    private func listen(_ listener: Listener) async throws {
        let budget = try await eventLoop.submit { self.configuration.clientBuffer }.get()
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 512)
            // Accepting is cheap, and a fresh client should not wait for many turns of others' requests.
            .serverChannelOption(.maxMessagesPerRead, value: 64)
            // What one client may cost: the channel holds at most half its budget before the queue takes over,
            // the kernel a quarter (it doubles what it is given, and counts each line's overhead: a dozen or two
            // short lines), and one read brings at most 16 KiB. A client that asks without reading gets what its
            // socket holds, then stalls: the smaller, the less answering it costs the daemon.
            .childChannelOption(.writeBufferWaterMark, value: .init(low: budget / 8, high: budget / 2))
            .childChannelOption(.socketOption(.so_sndbuf), value: SocketOptionValue(budget / 8))
            .childChannelOption(
                .recvAllocator,
                value: AdaptiveRecvByteBufferAllocator(
                    minimum: 64, initial: 2048, maximum: 16 * 1024)
            )
            .childChannelOption(.maxMessagesPerRead, value: 1)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ClientHandler(server: self))
                }
            }
        let channel: any Channel
        switch listener {
        case .path(let path, let mode, let group):
            let descriptor = try SocketFile.listen(at: path, mode: mode, group: group)
            do {
                channel = try await bootstrap.withBoundSocket(descriptor).get()
            } catch {
                unlink(path)
                throw error
            }
            try await eventLoop.submit { self.socketFile = path }.get()
            logger.info("listening", metadata: ["socket": "\(path)"])
        case .descriptor(let descriptor):
            channel = try await bootstrap.withBoundSocket(descriptor).get()
            logger.info("listening on the socket passed by systemd", metadata: ["fd": "\(descriptor)"])
        }
        try await eventLoop.submit {
            self.listener = channel
            self.loop.value.warningsTask = self.eventLoop.scheduleRepeatedTask(
                initialDelay: Self.warningInterval, delay: Self.warningInterval
            ) { _ in self.logSuppressedWarnings() }
        }.get()
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
        try? await group.shutdownGracefully()
    }

    /// Sends a detector event to every subscriber with its number, `seq`, and keeps it for replay. The numbers
    /// are given by the caller (the daemon's event path), one after the other: `hello`, `status` and `replay`
    /// speak of the last one published.
    public func publish(_ event: ShakeEvent, seq: Int, simulated: Bool = false, at date: Date = Date()) {
        onLoop { self.broadcast(event, seq: seq, simulated: simulated, date: date) }
    }

    /// Applies a new configuration without dropping anyone: limits apply from now on (the replay ring keeps its
    /// newest events), and clients that the new access rules no longer allow lose what they are no longer
    /// allowed: a sample stream stops, a subscriber is told and disconnected.
    public func update(_ new: ServerConfiguration) async {
        try? await eventLoop.submit { self.apply(new) }.get()
    }

    /// Sends a raw sample to the clients that asked for samples (without them, it costs the caller an atomic
    /// load: the loop is not woken).
    public func publish(sample: Sample) {
        guard streaming.load(ordering: .relaxed) > 0 else { return }
        onLoop {
            guard self.loop.value.sampleStreams > 0 else { return }
            let buffer = self.buffer(ServerMessage.sample(sample).line)
            let limits = self.clientLimits
            let clientBuffer = self.configuration.clientBuffer
            for client in self.clients.values where client.wantsSamples {
                self.send(client, buffer, limits: limits, clientBuffer: clientBuffer)
            }
        }
    }

    /// Sends `message` to the connection numbered `connection`, if it is still open: what the daemon did with its
    /// key chord. An answer to the client's own request, never dropped.
    public func send(_ message: ServerMessage, toConnection connection: UInt64) {
        onLoop {
            guard let client = self.clients.values.first(where: { $0.number == connection }) else { return }
            self.reply(client, self.buffer(message.line))
        }
    }

    /// Runs `task` on the server's event loop every `interval` until shutdown. A loop that hangs stops running
    /// it, which is what the systemd watchdog's keep-alive needs.
    @discardableResult
    public func repeatOnEventLoop(every interval: Duration, _ task: @escaping @Sendable () -> Void) -> RepeatedTask {
        eventLoop.scheduleRepeatedTask(initialDelay: .zero, delay: TimeAmount(interval)) { _ in task() }
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The number of connected clients (for tests and status).
    public func clientCount() async -> Int {
        (try? await eventLoop.submit { self.clients.count }.get()) ?? 0
    }

    /// The seq of the latest event.
    public func latestSeq() async -> Int {
        (try? await eventLoop.submit { self.seq }.get()) ?? 0
    }

    // MARK: - On the event loop

    func buffer(_ line: String) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: line.utf8.count + 1)
        buffer.writeString(line)
        buffer.writeInteger(UInt8(ascii: "\n"))
        return buffer
    }

    private func broadcast(_ event: ShakeEvent, seq number: Int, simulated: Bool, date: Date) {
        seq = number
        let notification = ServerMessage.Notification(
            event: event, seq: seq, timestamp: Timestamp.rfc3339(date), simulated: simulated)
        let line = buffer(ServerMessage.shake(notification).line)
        ring.append(seq: seq, phase: event.phase, line: line)
        // One line for everyone: serialized once, its bytes shared by every client's socket.
        let limits = clientLimits
        let clientBuffer = configuration.clientBuffer
        let phase = event.phase
        for client in clients.values where client.wants(phase) {
            send(client, line, limits: limits, clientBuffer: clientBuffer)
        }
    }

    private func apply(_ new: ServerConfiguration) {
        let old = configuration
        configuration = new
        ring.resize(to: new.replayCapacity)
        guard new.access != old.access else { return }
        for client in clients.values {
            guard let peer = client.peer else { continue }
            switch new.access.revocation(for: peer, wantsSamples: client.wantsSamples) {
            case .disconnect:
                logger.notice("disconnected a client no longer allowed to subscribe", metadata: peer.metadata)
                reply(
                    client,
                    buffer(ServerMessage.error(code: "forbidden", message: "no longer allowed to subscribe").line))
                _ = client.flushAndClose()
            case .stopSamples:
                logger.notice("stopped a sample stream no longer allowed", metadata: peer.metadata)
                client.wantsSamples = false
                loop.value.sampleStreams -= 1
                reply(
                    client,
                    buffer(ServerMessage.error(code: "forbidden", message: "no longer allowed to stream samples").line))
            case nil:
                break
            }
            if client.hasKey, !new.access.key.allows(peer) {
                logger.notice("stopped pressing a client's key chord no longer allowed", metadata: peer.metadata)
                client.hasKey = false
                hooks.keyEnded(client.number)
                reply(
                    client,
                    buffer(
                        ServerMessage.error(code: "forbidden", message: "no longer allowed to have keys pressed").line))
            }
        }
        listenersChanged()
    }

    func accept(_ client: Client) {
        counters.connections += 1
        client.number = UInt64(counters.connections)
        client.owedChanged = { [self] change in owedChanged(by: change) }
        let user = client.peer?.uid ?? UInt32.max
        var slots = configuration.slots
        slots.maxClients = min(slots.maxClients, descriptorCapacity)
        if let refusal = slots.refusal(
            connected: clients.count, sameUser: loop.value.clientsPerUser[user, default: 0],
            root: client.peer?.uid == 0, admin: client.peer.map(configuration.access.isAdmin) ?? false)
        {
            counters.refused += 1
            let message: String
            var metadata = client.logMetadata
            switch refusal {
            case .full(let limit):
                message = "the daemon serves at most \(limit) clients"
                metadata["limit"] = "\(limit)"
                warn(.tooManyClients, metadata: metadata)
            case .perUser(let limit):
                message = "the daemon serves at most \(limit) clients of one user"
                metadata["limit"] = "\(limit)"
                warn(.tooManyForUser, metadata: metadata)
            }
            reply(client, buffer(ServerMessage.error(code: "too_many_clients", message: message).line))
            _ = client.flushAndClose()
            return
        }
        if let peer = client.peer, !configuration.access.subscribe.allows(peer) {
            counters.refused += 1
            warn(.notAllowedToSubscribe, metadata: peer.metadata)
            reply(client, buffer(ServerMessage.error(code: "forbidden", message: "not allowed to subscribe").line))
            _ = client.flushAndClose()
            return
        }
        loop.value.clientsPerUser[user, default: 0] += 1
        clients[ObjectIdentifier(client)] = client
        peakClients = max(peakClients, clients.count)
        let status = hooks.status()
        reply(
            client,
            buffer(ServerMessage.hello(.init(sensor: status.sensor, shaking: status.shaking, seq: seq, run: run)).line))
        listenersChanged()
    }

    func remove(_ client: Client) {
        guard clients.removeValue(forKey: ObjectIdentifier(client)) != nil else { return }
        if client.hasKey {
            client.hasKey = false
            hooks.keyEnded(client.number)
        }
        let user = client.peer?.uid ?? UInt32.max
        let held = loop.value.clientsPerUser[user, default: 1] - 1
        loop.value.clientsPerUser[user] = held > 0 ? held : nil
        if client.wantsSamples { loop.value.sampleStreams -= 1 }
        listenersChanged()
        if clients.isEmpty, peakClients >= 64 {
            // Many clients came and went: hand the memory their buffers took back to the system.
            peakClients = 0
            Self.releaseFreeMemory()
        }
    }

    /// glibc's `malloc_trim(0)`, looked up at run time (Swift's Glibc module leaves out malloc.h).
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()

    private static func releaseFreeMemory() {
        _ = mallocTrim?(0)
    }

    private func listenersChanged() {
        streaming.store(loop.value.sampleStreams, ordering: .relaxed)
        // Every client is a subscriber (subscribe only narrows the phases): each is reported with its user.
        hooks.listenersChanged(clients.values.map { $0.peer?.uid }, loop.value.sampleStreams)
    }

    func receive(_ frame: LineFrameDecoder.Frame, from client: Client) {
        let request: Request
        do {
            switch frame {
            case .tooLong:
                throw RequestError.tooLong(limit: configuration.maxLineLength)
            case .line(let line):
                // Not free: an empty line is a bad line, or a flood of them would cost the daemon and nobody else.
                if line.readableBytes == 0 { throw RequestError.emptyLine }
                request = try Request.parse(line.readableBytesView)
            }
        } catch let error as RequestError {
            reject(client, error)
            return
        } catch {
            return
        }
        if let rule = rule(for: request), !(client.peer.map(rule.allows) ?? false) {
            // Without the peer's credentials nothing privileged is allowed.
            counters.refusedRequests += 1
            var metadata = client.logMetadata
            metadata["request"] = "\(request.name)"
            warn(.refusedRequest, metadata: metadata)
            // Refused requests count as bad lines: a client that keeps asking is disconnected like one that
            // keeps sending garbage.
            let needs = request.isPrivileged ? "root or an admin group" : "an account access.\(request.name) allows"
            reject(client, RequestError(code: "forbidden", message: "\(request.name) needs \(needs)"))
            return
        }
        switch request {
        case .status:
            let status = hooks.status()
            var counters = status.counters
            counters["clients_refused"] = self.counters.refused
            counters["requests_refused"] = self.counters.refusedRequests
            counters["clients_cut_off"] = self.counters.disconnectedSlow
            counters["connections"] = self.counters.connections
            counters["bad_lines"] = self.counters.badLines
            counters["events_dropped"] = self.counters.dropped
            let message = ServerMessage.Status(
                // The others: the connection asking is not counted among those it asks about.
                sensor: status.sensor, subscribers: clients.count - 1,
                shaking: status.shaking,
                seq: seq, uptime: Self.seconds(started.duration(to: .now)), counters: counters)
            reply(client, buffer(ServerMessage.status(message).line))
        case .subscribe(let phases):
            client.phases = phases.isEmpty ? Set(ShakeEvent.Phase.allCases) : phases
            client.isSubscriber = true
            reply(client, buffer(ServerMessage.ok(request: "subscribe").line))
            listenersChanged()
        case .replay(let since):
            let replay = ring.replay(since: since, latest: seq, phases: client.phases)
            for line in replay.lines { reply(client, line) }
            reply(
                client,
                buffer(ServerMessage.replayed(since: since, count: replay.lines.count, complete: replay.complete).line))
        case .samples:
            if !client.wantsSamples { loop.value.sampleStreams += 1 }
            client.wantsSamples = true
            reply(client, buffer(ServerMessage.ok(request: "samples").line))
            listenersChanged()
        case .simulate:
            logger.info("simulating a shake", metadata: client.peer?.metadata ?? [:])
            hooks.simulate(client.peer?.uid)
            reply(client, buffer(ServerMessage.ok(request: "simulate").line))
        case .key(let chord, let phases):
            // The rule above refused a peer the kernel did not name.
            guard let user = client.peer?.uid else { return }
            if let error = hooks.key(client.number, user, chord, phases) {
                reject(client, error)
                return
            }
            client.hasKey = true
            reply(client, buffer(ServerMessage.ok(request: "key").line))
        }
    }

    /// The access rule a request needs beyond subscribing, if any.
    private func rule(for request: Request) -> PeerRule? {
        switch request {
        case .samples: configuration.access.samples
        case .simulate: configuration.access.simulate
        case .key: configuration.access.key
        case .status, .subscribe, .replay: nil
        }
    }

    private func reject(_ client: Client, _ error: RequestError) {
        if error.code != "forbidden" { counters.badLines += 1 }
        client.badLines += 1
        reply(client, buffer(ServerMessage.error(code: error.code, message: error.message).line))
        if client.badLines >= configuration.maxBadLines {
            warn(.badLines, metadata: client.logMetadata)
            reply(
                client,
                buffer(
                    ServerMessage.error(
                        code: "too_many_errors", message: "disconnected after \(configuration.maxBadLines) bad lines"
                    ).line))
            _ = client.flushAndClose()
        }
    }

    /// What a client's queue may hold (the configuration's limits; a full replay always fits among the answers).
    private var clientLimits: OutboundQueue<ByteBuffer>.Limits {
        OutboundQueue.Limits(
            queueLimit: configuration.queueLimit, dropLimit: configuration.dropLimit,
            answerLimit: max(4 * configuration.queueLimit, configuration.replayCapacity + 16))
    }

    /// Sends an event or a sample to one client, or drops it when the client (or all of them) hold too much.
    /// - Parameter clientBuffer: the configuration's ``ServerConfiguration/clientBuffer``, read once per fan-out.
    private func send(
        _ client: Client, _ buffer: ByteBuffer, limits: OutboundQueue<ByteBuffer>.Limits, clientBuffer: Int
    ) {
        let owed = client.owed
        if owed > 0 && (owed + buffer.readableBytes > clientBuffer || loop.value.overBudget) {
            account(client.dropInstead(limits: limits), for: client)
        } else {
            account(client.send(buffer, limits: limits), for: client)
        }
    }

    private func reply(_ client: Client, _ buffer: ByteBuffer) {
        account(client.reply(buffer, limits: clientLimits), for: client)
    }

    /// Counts and logs what a client's queue decided.
    private func account(_ delivery: Client.Delivery, for client: Client) {
        switch delivery {
        case .delivered:
            break
        case .droppedOldest:
            counters.dropped += 1
        case .cutOff(let reason):
            counters.disconnectedSlow += 1
            var metadata = client.logMetadata
            switch reason {
            case .tooManyDropped(let count):
                counters.dropped += 1
                metadata["dropped"] = "\(count)"
            case .tooManyAnswers(let count):
                metadata["answers_waiting"] = "\(count)"
            }
            warn(.notReading, metadata: metadata)
        }
    }

    // MARK: - Budgets, turns and warnings

    /// The refusals and limits that a client can cause as often as it likes: logged at most once an interval
    /// each (``LogLimiter``).
    enum Warning: String, Hashable {
        case tooManyClients = "too_many_clients"
        case tooManyForUser = "too_many_clients_of_one_user"
        case notAllowedToSubscribe = "not_allowed_to_subscribe"
        case refusedRequest = "refused_request"
        case badLines = "too_many_bad_lines"
        case notReading = "not_reading"
        case overBudget = "total_buffer"
    }

    /// The longest request line now: a reload changes it for connections already open too.
    var maxLineLength: Int { configuration.maxLineLength }

    /// Whether `client`'s requests may be read and handled now: the kernel has taken everything sent to it. A
    /// client that asks without reading thus gets no more answers than its socket buffer holds before it stalls
    /// itself, whatever it sent: answering is what costs the daemon.
    func mayRead(_ client: Client) -> Bool {
        client.owed == 0
    }

    private func owedChanged(by change: Int) {
        loop.value.owedTotal += change
        let total = loop.value.owedTotal
        if !loop.value.overBudget && total > configuration.totalBuffer {
            loop.value.overBudget = true
            warn(.overBudget, metadata: ["bytes": "\(total)"])
        } else if loop.value.overBudget && total <= configuration.totalBuffer / 4 * 3 {
            loop.value.overBudget = false
            // Clients held back while over budget go on (each handles its lines in a turn).
            for client in clients.values { client.readingResumed?() }
        }
    }

    /// Takes one line out of this turn's allowance. - Returns: false when the turn is used up: wait for the next.
    func takeLine() -> Bool {
        let (allowed, schedule) = loop.value.turns.takeLine()
        if schedule { scheduleTurn() }
        return allowed
    }

    /// Whether clients wait for a turn.
    var othersWaitForTurn: Bool { loop.value.turns.othersWait }

    /// Runs `work` in the next turn, after those already waiting (a newcomer: after the newcomers waiting, ahead
    /// of the others).
    func waitForTurn(newcomer: Bool, _ work: @escaping () -> Void) {
        if loop.value.turns.wait(work, newcomer: newcomer) { scheduleTurn() }
    }

    /// A new turn a pause from now (not at once: NIO runs tasks that schedule tasks without returning to the
    /// sockets, so that would starve them), performing what ``RequestTurns`` hands out.
    private func scheduleTurn() {
        eventLoop.assumeIsolated().scheduleTask(in: Self.turnPause) { [self] in
            loop.value.turns.beginTurn()
            while let work = loop.value.turns.next() { work() }
            if loop.value.turns.endTurn() { scheduleTurn() }
        }
    }

    /// Logs a refusal or a limit reached, unless one of its kind was logged within the interval (then it is
    /// counted, and the count logged at the interval's end).
    private func warn(_ warning: Warning, metadata: Logger.Metadata) {
        guard loop.value.warnings.shouldLog(warning, now: .now()) else { return }
        switch warning {
        case .tooManyClients: logger.warning("refused a client: too many clients", metadata: metadata)
        case .tooManyForUser: logger.warning("refused a client: too many clients of one user", metadata: metadata)
        case .notAllowedToSubscribe: logger.warning("refused a client: not allowed to subscribe", metadata: metadata)
        case .refusedRequest: logger.warning("refused a request", metadata: metadata)
        case .badLines: logger.warning("disconnected a client that kept sending bad lines", metadata: metadata)
        case .notReading: logger.warning("disconnected a client that does not read", metadata: metadata)
        case .overBudget: logger.warning("over the buffer budget for all clients", metadata: metadata)
        }
    }

    private func logSuppressedWarnings(all: Bool = false) {
        let now: NIODeadline = .now() + (all ? Self.warningInterval : .zero)
        for (kind, count) in loop.value.warnings.due(now: now) {
            logger.warning(
                "more of the same warning, not logged one by one",
                metadata: [
                    "warning": "\(kind.rawValue)", "count": "\(count)",
                    "interval_s": "\(Self.warningInterval.nanoseconds / 1_000_000_000)",
                ])
        }
    }
}
