// SPDX-License-Identifier: Apache-2.0
public import Logging
import ShakeClient
public import ShakeConfig
import ShakeProtocol
import SystemdSupport

#if canImport(Glibc)
    import Glibc
#endif

/// What a forwarder needs besides its configuration file: resolved by the command (the device, the password).
public struct ForwarderSettings: Sendable {
    public var configuration: MQTTConfiguration
    /// The device's topic level.
    public var device: String
    /// The device's name in Home Assistant.
    public var deviceName: String
    /// Read from the password file or the credential; never logged.
    public var password: String?
    /// The detector's sensitivity, for the state topic.
    public var sensitivity: String?
    /// Where the status is written (`$RUNTIME_DIRECTORY/status`), if anywhere.
    public var statusPath: String?
    /// Where the last delivered event is kept (`$STATE_DIRECTORY/cursor`), if anywhere.
    public var cursorPath: String?
    public var version: String

    public init(
        configuration: MQTTConfiguration, device: String, deviceName: String, password: String?,
        sensitivity: String?, statusPath: String?, cursorPath: String?, version: String
    ) {
        self.configuration = configuration
        self.device = device
        self.deviceName = deviceName
        self.password = password
        self.sensitivity = sensitivity
        self.statusPath = statusPath
        self.cursorPath = cursorPath
        self.version = version
    }

    public var topics: ForwarderTopics {
        ForwarderTopics(prefix: configuration.topics.prefix, device: device)
    }

    public var discovery: HomeAssistantDiscovery {
        HomeAssistantDiscovery(
            discoveryPrefix: configuration.homeAssistant.prefix, topics: topics,
            phases: configuration.topics.phases, deviceName: deviceName, softwareVersion: version)
    }

    public var clientID: String { configuration.broker.clientID ?? "shaked-\(device)" }

    var sessionOptions: MosquittoSession.Options {
        let broker = configuration.broker
        let endpoint: MosquittoSession.BrokerEndpoint
        var tls: MosquittoSession.TLSFiles?
        switch broker.address {
        case .tcp(let host, let port, let usesTLS):
            endpoint = .init(host: host, port: Int32(port))
            if usesTLS {
                tls = .init(
                    caFile: broker.caFile, caPath: broker.caFile == nil ? "/etc/ssl/certs" : nil,
                    certFile: broker.certFile, keyFile: broker.keyFile)
            }
        case .unix(let path):
            endpoint = .init(host: path, port: 0)
        }
        return .init(
            address: endpoint, clientID: clientID, keepAlive: broker.keepAlive, username: broker.username,
            password: password, tls: tls, will: topics.availabilityMessage(online: false))
    }
}

/// The forwarder: a subscriber of the daemon (``ShakeClient``) that publishes every event to the broker through
/// a ``MosquittoSession``, its decisions made by ``ForwarderCore``. The daemon's updates and the broker's events
/// meet in one stream, handled one at a time.
public struct Forwarder: Sendable {
    public let settings: ForwarderSettings
    public let logger: Logger

    public init(settings: ForwarderSettings, logger: Logger) {
        self.settings = settings
        self.logger = logger
    }

    enum Input: Sendable {
        case daemon(ShakeClient.Update)
        case daemonFailed(String)
        case broker(MosquittoSession.Event)
        case stop
    }

    public enum Failure: Error, CustomStringConvertible {
        case setup(String)
        case daemonRefused(String)
        public var description: String {
            switch self {
            case .setup(let message): message
            case .daemonRefused(let message): message
            }
        }
    }

    /// Runs until `stop` finishes (a signal), then says `offline` and disconnects cleanly.
    public func run(socket: String?, stop: @escaping @Sendable () async -> Void) async throws(Failure) {
        let notifier = ServiceNotifier()
        let (inputs, feed) = AsyncStream.makeStream(of: Input.self)
        let session: MosquittoSession
        do {
            session = try MosquittoSession(options: settings.sessionOptions) { feed.yield(.broker($0)) }
        } catch {
            throw .setup(error.description)
        }
        let configuration = settings.configuration
        var core = ForwarderCore(
            topics: settings.topics, qos: configuration.topics.qos, capacity: configuration.queue.size,
            discovery: configuration.homeAssistant.discovery ? settings.discovery : nil,
            sensitivity: settings.sensitivity)
        let cursor = settings.cursorPath.flatMap { SmallFile.read($0) }.flatMap { DeliveryCursor(fileText: $0) }
        logger.info(
            "forwarding shakes to the broker",
            metadata: [
                "broker": "\(configuration.broker.address)", "topic": "\(settings.topics.event)",
                "client_id": "\(settings.clientID)", "libmosquitto": "\(MosquittoLibrary.version)",
                "resume_after": "\(cursor.map { "\($0.run):\($0.seq)" } ?? "now")",
            ])
        guard session.start() else { throw .setup("cannot start the MQTT thread") }
        let client = ShakeClient(socketPath: socket)
        let phases = configuration.topics.phases
        // Cancelled and awaited at the end: the subscription's connection is closed by then, so that nothing of
        // it is left when the process exits right after.
        let daemon = Task {
            do {
                try await client.withUpdates(phases: phases, since: cursor?.seq, run: cursor?.run) { updates in
                    for try await update in updates { feed.yield(.daemon(update)) }
                }
            } catch {
                feed.yield(.daemonFailed("\(error)"))
            }
        }
        let stopper = Task {
            await stop()
            feed.yield(.stop)
        }
        var lastError: String?
        var reportedRefusal: BrokerRefusal?
        var reportedLoss = false
        // A broker that accepts and drops the connection soon after, again and again: said once.
        var flapping = false
        var shortConnections = 0
        var failure: Failure?
        notifier.ready(status: "starting")
        loop: for await input in inputs {
            var actions: [ForwarderCore.Action] = []
            switch input {
            case .daemon(.shake(let notification)):
                actions = core.handle(.event(notification))
            case .daemon(.connected(let hello, let complete)):
                // A daemon whose connections fail after hello is not announced again each time.
                if !core.daemonConnected || core.state.run != hello.run {
                    logger.info("connected to the daemon", metadata: ["run": "\(hello.run)", "seq": "\(hello.seq)"])
                }
                actions = core.handle(.daemonConnected(hello, replayComplete: complete))
            case .daemon(.disconnected):
                logger.warning("the daemon closed the connection; reconnecting")
                actions = core.handle(.daemonLost)
            case .daemon(.waiting(let reason)):
                logger.warning("waiting for the daemon", metadata: ["reason": "\(reason)"])
            case .daemon(.dropped(let count)):
                actions = core.handle(.daemonDropped(count))
            case .daemon(.key):
                // The forwarder asks the daemon to press no key: no key reports come.
                continue
            case .daemonFailed(let reason):
                logger.error("the daemon refused this subscriber", metadata: ["reason": "\(reason)"])
                failure = .daemonRefused(reason)
                break loop
            case .broker(.connected):
                if !flapping {
                    logger.info("connected to the broker", metadata: ["broker": "\(configuration.broker.address)"])
                    reportedLoss = false
                }
                lastError = nil
                reportedRefusal = nil
                actions = core.handle(.brokerConnected)
            case .broker(.lost(let reason, let refusal, let connectedFor, let retryIn)):
                if let connectedFor {
                    shortConnections = connectedFor >= MosquittoSession.stableAfter ? 0 : shortConnections + 1
                    if shortConnections == 0 {
                        flapping = false
                    } else if shortConnections >= 2 && !flapping {
                        flapping = true
                        reportedLoss = true
                        logger.warning(
                            "the broker closes the connection soon after accepting it; retrying ever more slowly",
                            metadata: ["broker": "\(configuration.broker.address)", "reason": "\(reason)"])
                    }
                }
                lastError = refusal.map { "\($0)" } ?? reason
                let retry = "\(Int(retryIn.rounded(.up))) s"
                if let refusal {
                    // Once per kind of refusal: the same refusal every minute says nothing new.
                    if refusal != reportedRefusal {
                        logger.error(
                            "the broker refused the connection",
                            metadata: [
                                "broker": "\(configuration.broker.address)", "reason": "\(refusal)",
                                "advice": "\(refusal.advice)", "retry_in": "\(retry)",
                            ])
                        reportedRefusal = refusal
                    }
                } else if !reportedLoss {
                    logger.warning(
                        core.brokerConnected ? "lost the broker; reconnecting" : "cannot reach the broker; retrying",
                        metadata: [
                            "broker": "\(configuration.broker.address)", "reason": "\(reason)", "retry_in": "\(retry)",
                        ])
                    reportedLoss = true
                }
                actions = core.handle(.brokerLost)
            case .broker(.acknowledged(let mid)):
                actions = core.handle(.acknowledged(mid: mid))
            case .stop:
                break loop
            }
            perform(actions, core: &core, session: session)
            let status = ForwarderStatus(
                broker: "\(configuration.broker.address)", brokerConnected: core.brokerConnected,
                daemonConnected: core.daemonConnected, queued: core.queue.count, published: core.counters.published,
                dropped: core.counters.dropped, lastError: lastError)
            if let path = settings.statusPath { SmallFile.replace(path, with: status.fileText) }
            notifier.status(status.summary)
        }
        daemon.cancel()
        stopper.cancel()
        await daemon.value
        notifier.stopping(status: "saying offline")
        if session.isConnected {
            _ = session.publishAndWait([settings.topics.availabilityMessage(online: false)], timeout: 2)
        }
        session.stop()
        if core.queue.count > 0 {
            logger.warning("events not delivered at exit", metadata: ["count": "\(core.queue.count)"])
        }
        if let failure { throw failure }
    }

    private func perform(_ actions: [ForwarderCore.Action], core: inout ForwarderCore, session: MosquittoSession) {
        var pending = actions[...]
        while let action = pending.popFirst() {
            switch action {
            case .send(let entry):
                switch session.publish(entry.message) {
                case .success(let mid): pending += core.handle(.handed(id: entry.id, mid: mid))
                case .failure: pending += core.handle(.handingFailed(id: entry.id))
                }
            case .publish(let message):
                _ = session.publish(message)
            case .delivered(let run, let seq):
                if let path = settings.cursorPath {
                    SmallFile.replace(path, with: DeliveryCursor(run: run, seq: seq).fileText)
                }
            case .notice(let notice):
                log(notice)
            }
        }
    }

    private func log(_ notice: ForwarderCore.Notice) {
        switch notice {
        case .queueFull(let size):
            logger.warning(
                "the queue is full while the broker is away; dropping the oldest events",
                metadata: ["size": "\(size)", "advice": "raise queue.size to hold more"])
        case .droppedWhileAway(let dropped):
            logger.warning("events dropped while the broker was away", metadata: ["count": "\(dropped)"])
        case .replayIncomplete:
            logger.warning("the daemon no longer held every event missed while away from it; some are lost")
        case .daemonDropped(let count):
            logger.warning("the daemon dropped events for this subscriber", metadata: ["count": "\(count)"])
        }
    }

    /// Takes the device away from the broker: empties its retained availability and state and Home Assistant's
    /// discovery topics, so that it leaves Home Assistant. - Returns: whether the broker acknowledged it all.
    public func retire(timeout: Double) throws(Failure) -> Bool {
        var options = settings.sessionOptions
        options.will = nil
        let session: MosquittoSession
        do {
            session = try MosquittoSession(options: options) { _ in }
        } catch {
            throw .setup(error.description)
        }
        guard session.start() else { throw .setup("cannot start the MQTT thread") }
        defer { session.stop() }
        guard session.waitConnected(timeout: timeout) else { return false }
        return session.publishAndWait(settings.discovery.retiring + settings.topics.clearing, timeout: timeout)
    }
}

/// Small files written whole (status, cursor) and read bounded.
enum SmallFile {
    /// Writes `text` to a temporary file beside `path` and renames it over `path`, so a reader never sees half.
    static func replace(_ path: String, with text: String) {
        let temporary = path + ".new"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        if written == bytes.count { rename(temporary, path) } else { unlink(temporary) }
    }

    /// At most 4 KB of a file, or nil.
    static func read(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        guard count >= 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }
}
