// SPDX-License-Identifier: Apache-2.0
import DequeModule

/// What waits for one client's socket, and the rules for a client that does not keep up. No I/O: the client
/// performs what it returns.
///
/// - Events and samples (droppable) wait up to ``Limits/queueLimit``; past it the oldest waiting one is dropped,
///   and the client is told how many it lost before the next message it gets.
/// - Answers to the client's own requests are never dropped; a client with more than ``Limits/answerLimit``
///   answers waiting is cut off.
/// - A client that lost more than ``Limits/dropLimit`` messages since it last caught up is cut off.
/// - While answers wait, the client's further requests are not read (``isReadingPaused``): a client that asks
///   without reading stalls itself, not the daemon.
struct OutboundQueue<Message> {
    struct Limits: Sendable, Equatable {
        var queueLimit: Int
        var dropLimit: Int
        var answerLimit: Int
    }

    enum Kind: Sendable, Equatable {
        /// An event or a sample: dropped, oldest first, when the client does not keep up.
        case droppable
        /// The answer to a request: never dropped.
        case answer
    }

    /// Why a client is cut off.
    enum CutOff: Sendable, Equatable {
        /// This many messages were dropped since the client last caught up.
        case tooManyDropped(Int)
        /// This many answers were waiting.
        case tooManyAnswers(Int)
    }

    /// What to do with a message handed to ``enqueue(_:kind:writable:limits:)``.
    enum EnqueueAction {
        /// Nothing waits and the socket takes more: write it now.
        case write(Message)
        /// It waits for the socket; with `droppedOldest`, the oldest waiting event or sample made room for it.
        case queued(droppedOldest: Bool)
        /// The client is too far behind: tell it why (if the socket takes it) and close. The queue is empty and
        /// takes nothing more.
        case cutOff(CutOff)
        /// The client is closing: nothing more is sent.
        case discard
    }

    /// What to write next.
    enum Output {
        case message(Message)
        /// The client lost this many messages since the last message it got.
        case dropped(count: Int)
    }

    private var waiting: Deque<(message: Message, kind: Kind)> = []
    private(set) var droppableCount = 0
    private(set) var answerCount = 0
    /// Dropped, not yet reported to the client.
    private(set) var droppedUnreported = 0
    /// Dropped since the client last caught up: the drop limit counts these.
    private(set) var droppedSinceCaughtUp = 0
    private(set) var isClosing = false
    /// The weight of what waits (bytes, for the server's buffers), by ``weight``.
    private(set) var weightWaiting = 0
    private let weight: (Message) -> Int

    /// - Parameter weight: what a message weighs in ``weightWaiting`` (its bytes, say).
    init(weight: @escaping (Message) -> Int = { _ in 1 }) {
        self.weight = weight
    }

    /// Messages waiting (the dropped notice aside).
    var count: Int { waiting.count }

    /// True while answers wait: the client's further requests are left unread until they are written.
    var isReadingPaused: Bool { answerCount > 0 }

    mutating func enqueue(_ message: Message, kind: Kind, writable: Bool, limits: Limits) -> EnqueueAction {
        guard !isClosing else { return .discard }
        if waiting.isEmpty && droppedUnreported == 0 && writable { return .write(message) }
        var droppedOldest = false
        switch kind {
        case .droppable:
            if droppableCount >= limits.queueLimit {
                if let index = waiting.firstIndex(where: { $0.kind == .droppable }) {
                    weightWaiting -= weight(waiting.remove(at: index).message)
                    droppableCount -= 1
                }
                if let cutOff = countDropped(limits: limits) { return cutOff }
                droppedOldest = true
            }
            // A queue limit of zero keeps nothing: the message itself is the one dropped.
            guard limits.queueLimit > 0 else { return .queued(droppedOldest: droppedOldest) }
            droppableCount += 1
        case .answer:
            if answerCount >= limits.answerLimit {
                let answers = answerCount + 1
                cutOff()
                return .cutOff(.tooManyAnswers(answers))
            }
            answerCount += 1
        }
        waiting.append((message, kind))
        weightWaiting += weight(message)
        return .queued(droppedOldest: droppedOldest)
    }

    /// Drops an event or sample without queueing it (the server is over its budget for this client, or for all
    /// of them): counted, and reported to the client like one dropped for room.
    /// - Returns: nil, or ``EnqueueAction/cutOff(_:)`` past the drop limit.
    mutating func drop(limits: Limits) -> EnqueueAction? {
        guard !isClosing else { return nil }
        return countDropped(limits: limits)
    }

    private mutating func countDropped(limits: Limits) -> EnqueueAction? {
        droppedUnreported += 1
        droppedSinceCaughtUp += 1
        guard droppedSinceCaughtUp > limits.dropLimit else { return nil }
        let dropped = droppedSinceCaughtUp
        cutOff()
        return .cutOff(.tooManyDropped(dropped))
    }

    /// The next thing to write while the socket takes more; nil when nothing waits, and from then on the drop
    /// limit counts afresh.
    mutating func next() -> Output? {
        if droppedUnreported > 0 {
            defer { droppedUnreported = 0 }
            return .dropped(count: droppedUnreported)
        }
        guard let (message, kind) = waiting.popFirst() else {
            droppedSinceCaughtUp = 0
            return nil
        }
        switch kind {
        case .droppable: droppableCount -= 1
        case .answer: answerCount -= 1
        }
        weightWaiting -= weight(message)
        if waiting.isEmpty { droppedSinceCaughtUp = 0 }
        return .message(message)
    }

    /// Closing: everything still waiting, oldest first, to write before the connection closes; nothing more is
    /// taken.
    mutating func close() -> [Message] {
        isClosing = true
        defer { removeAll() }
        return waiting.map(\.message)
    }

    /// Closing without writing what waits.
    mutating func cutOff() {
        isClosing = true
        removeAll()
    }

    private mutating func removeAll() {
        waiting.removeAll()
        droppableCount = 0
        answerCount = 0
        droppedUnreported = 0
        weightWaiting = 0
    }
}
