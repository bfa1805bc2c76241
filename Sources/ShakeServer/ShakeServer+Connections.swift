// SPDX-License-Identifier: Apache-2.0
import NIOCore
import NIOPosix
import ShakeProtocol

#if canImport(Glibc)
    import Glibc
#endif

// Accepting: the listening socket and its options, who gets a slot (and the descriptors left for one), and what
// a client that leaves gives back.
extension ShakeServer {
    /// Descriptors kept for the daemon's own use: the listener, the sensor, the event loop, the journal, the bus.
    static let reservedDescriptors = 64

    static func descriptorCapacity() -> Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max
        else { return Int.max }
        return max(1, Int(clamping: limit.rlim_cur) - reservedDescriptors)
    }

    func listen(_ listener: Listener) async throws {
        let budget = try await eventLoop.submit { self.configuration.clientBuffer }.get()
        guard let group else { throw ChannelError.operationUnsupported }
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
        }.get()
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
        // Not a listener for capture yet: a client that asks for events, samples or a key chord becomes one at
        // once, one that says nothing when its grace is over.
        eventLoop.assumeIsolated().scheduleTask(in: Self.listenerGrace) { [self, weak client] in
            guard let client, clients[ObjectIdentifier(client)] === client else { return }
            keepsCapture(client)
        }
    }

    /// `client` keeps the sensor capturing from now on (``Client/keepsCapture``).
    func keepsCapture(_ client: Client) {
        guard !client.keepsCapture else { return }
        client.keepsCapture = true
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
        if client.keepsCapture { listenersChanged() }
        if clients.isEmpty, peakClients >= 64 {
            // Many clients came and went: hand the memory their buffers took back to the system.
            peakClients = 0
            Self.releaseFreeMemory()
        }
    }

    /// glibc's `malloc_trim(0)`, looked up at run time (Swift's Glibc module leaves out malloc.h).
    static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()

    static func releaseFreeMemory() {
        _ = mallocTrim?(0)
    }

    func listenersChanged() {
        streaming.store(loop.value.sampleStreams, ordering: .relaxed)
        // Every client is a subscriber (subscribe only narrows the phases); those that keep capture on are
        // reported, each with its user.
        hooks.listenersChanged(
            clients.values.filter(\.keepsCapture).map { $0.peer?.uid }, loop.value.sampleStreams)
    }
}
