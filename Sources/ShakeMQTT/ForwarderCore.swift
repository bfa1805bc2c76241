// SPDX-License-Identifier: Apache-2.0
public import DequeModule
public import ShakeProtocol

/// The forwarder's decisions, pure: what to publish when, what to hold while the broker is away, what to drop when
/// the queue is full, what has been delivered. The shell (``Forwarder``) feeds it what happened — the daemon's
/// events, the broker's connects, losses and acknowledgements — and performs the actions it returns.
///
/// Events wait in one bounded queue, in order. While the broker is connected, up to ``window`` of them are handed
/// to the MQTT library at a time (which keeps and resends them itself across a reconnect until the broker
/// acknowledges them); an event leaves the queue when the broker has acknowledged it and every event before it.
/// At the limit, the oldest event not yet handed over is dropped for the new one: a waiting automation wants the
/// latest shakes most. The drops are counted and reported twice per outage: when they begin and when the broker
/// is back.
public struct ForwarderCore: Sendable {
    /// Events handed to the MQTT library and not yet acknowledged, at most.
    public static let window = 32

    public struct Entry: Sendable, Hashable {
        public var id: Int
        public var message: OutgoingMessage
        public var run: String
        public var seq: Int
        public var delivery = Delivery.waiting
    }

    /// Where an entry is on its way to the broker.
    public enum Delivery: Sendable, Hashable {
        /// Not handed to the MQTT library yet (or handed back after a failure).
        case waiting
        /// A ``Action/send(_:)`` is out for it; the shell reports its message id or the failure next.
        case handing
        /// The MQTT library has it as message `mid` and resends it until the broker acknowledges it.
        case inFlight(mid: Int32)
        case acknowledged
    }

    public enum Input: Sendable, Hashable {
        /// The daemon said hello (again); `replayComplete` is false when its ring no longer held all we missed.
        case daemonConnected(ServerMessage.Hello, replayComplete: Bool)
        case daemonLost
        /// The daemon dropped events for us (we read too slowly).
        case daemonDropped(Int)
        case event(ServerMessage.Notification)
        /// The broker accepted the connection (CONNACK 0).
        case brokerConnected
        /// The connection was lost or refused; the shell reconnects.
        case brokerLost
        /// The entry `id` was handed over as message `mid`.
        case handed(id: Int, mid: Int32)
        /// Handing the entry over failed (the connection went away meanwhile): it waits again.
        case handingFailed(id: Int)
        /// The broker acknowledged message `mid`.
        case acknowledged(mid: Int32)
    }

    public enum Action: Sendable, Hashable {
        /// Hand the entry to the MQTT library, then report ``Input/handed(id:mid:)``.
        case send(Entry)
        /// Publish a retained or status message, not tracked.
        case publish(OutgoingMessage)
        /// Every event up to this one has been delivered: remember it for a restart.
        case delivered(run: String, seq: Int)
        case notice(Notice)
    }

    /// What is worth a log line.
    public enum Notice: Sendable, Hashable {
        /// The queue reached its size while the broker was away: the oldest events are dropped from now on.
        case queueFull(size: Int)
        /// The broker is back; `dropped` events were lost while it was away.
        case droppedWhileAway(dropped: Int)
        /// The daemon's ring no longer held every event missed while we were away from it.
        case replayIncomplete
        /// The daemon dropped events meant for us.
        case daemonDropped(count: Int)
    }

    /// The numbers `shaked-mqtt --status` shows.
    public struct Counters: Sendable, Hashable {
        public var published = 0
        public var dropped = 0
    }

    public let topics: ForwarderTopics
    public let qos: Int
    public let capacity: Int
    public let discovery: HomeAssistantDiscovery?
    /// The sensitivity shown on the state topic.
    public var sensitivity: String?

    public private(set) var queue = Deque<Entry>()
    public private(set) var brokerConnected = false
    public private(set) var daemonConnected = false
    public private(set) var counters = Counters()
    private var hello: ServerMessage.Hello?
    private var nextID = 1
    private var inFlight = 0
    private var droppedThisOutage = 0

    public init(
        topics: ForwarderTopics, qos: Int, capacity: Int, discovery: HomeAssistantDiscovery?,
        sensitivity: String? = nil
    ) {
        self.topics = topics
        self.qos = qos
        self.capacity = max(1, capacity)
        self.discovery = discovery
        self.sensitivity = sensitivity
    }

    public var state: ForwarderTopics.State {
        ForwarderTopics.State(
            daemon: daemonConnected, sensor: hello?.sensor, sensitivity: sensitivity, run: hello?.run)
    }

    /// The retained messages sent on every connect: online, the state, the discovery configuration.
    public var announcements: [OutgoingMessage] {
        [topics.availabilityMessage(online: true), topics.stateMessage(state)] + (discovery?.messages ?? [])
    }

    public mutating func handle(_ input: Input) -> [Action] {
        switch input {
        case .daemonConnected(let hello, let complete):
            self.hello = hello
            daemonConnected = true
            var actions: [Action] = complete ? [] : [.notice(.replayIncomplete)]
            if brokerConnected { actions.append(.publish(topics.stateMessage(state))) }
            return actions
        case .daemonLost:
            daemonConnected = false
            return brokerConnected ? [.publish(topics.stateMessage(state))] : []
        case .daemonDropped(let count):
            return [.notice(.daemonDropped(count: count))]
        case .event(let notification):
            return enqueue(notification)
        case .brokerConnected:
            brokerConnected = true
            var actions = announcements.map(Action.publish)
            if droppedThisOutage > 0 {
                actions.append(.notice(.droppedWhileAway(dropped: droppedThisOutage)))
                droppedThisOutage = 0
            }
            return actions + sendWaiting()
        case .brokerLost:
            brokerConnected = false
            return []
        case .handed(let id, let mid):
            guard let index = queue.firstIndex(where: { $0.id == id }), queue[index].delivery == .handing else {
                return []
            }
            queue[index].delivery = .inFlight(mid: mid)
            return []
        case .handingFailed(let id):
            guard let index = queue.firstIndex(where: { $0.id == id }), queue[index].delivery == .handing else {
                return []
            }
            // Not handed over after all: it waits for the next connection, in its place.
            queue[index].delivery = .waiting
            inFlight -= 1
            return []
        case .acknowledged(let mid):
            guard let index = queue.firstIndex(where: { $0.delivery == .inFlight(mid: mid) }) else { return [] }
            queue[index].delivery = .acknowledged
            inFlight -= 1
            counters.published += 1
            var last: Entry?
            while let first = queue.first, first.delivery == .acknowledged { last = queue.removeFirst() }
            return (last.map { [.delivered(run: $0.run, seq: $0.seq)] } ?? []) + sendWaiting()
        }
    }

    private mutating func enqueue(_ notification: ServerMessage.Notification) -> [Action] {
        var actions: [Action] = []
        if queue.count >= capacity {
            // The oldest entry not yet handed over makes room; when every entry is in flight, the new one is dropped.
            guard let index = queue.firstIndex(where: { $0.delivery == .waiting }) else {
                return recordDrop()
            }
            queue.remove(at: index)
            actions += recordDrop()
        }
        let entry = Entry(
            id: nextID, message: topics.eventMessage(notification, run: hello?.run ?? "", qos: qos),
            run: hello?.run ?? "", seq: notification.seq)
        nextID += 1
        queue.append(entry)
        return actions + sendWaiting()
    }

    private mutating func recordDrop() -> [Action] {
        counters.dropped += 1
        droppedThisOutage += 1
        return droppedThisOutage == 1 ? [.notice(.queueFull(size: capacity))] : []
    }

    /// Hands waiting entries over, in order, while connected and within the window.
    private mutating func sendWaiting() -> [Action] {
        guard brokerConnected else { return [] }
        var actions: [Action] = []
        for index in queue.indices where inFlight < Self.window && queue[index].delivery == .waiting {
            queue[index].delivery = .handing
            inFlight += 1
            actions.append(.send(queue[index]))
        }
        return actions
    }
}
