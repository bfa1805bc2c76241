// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import DequeModule
import Synchronization

/// The marks the client's buffers keep between the socket and the consumer, elements.
enum Watermarks {
    /// Below it, a producer held up goes on.
    static let low = 16
    /// At it, the producer is held up.
    static let high = 64
}

/// A small buffer between one producer and one consumer that keeps backpressure without a rendezvous per element.
///
/// The producer's ``yield(_:)`` returns at once while fewer than `high` elements wait; at `high` it suspends
/// until the consumer has taken the buffer down to `low` (or gone away). A producer that cannot suspend (a
/// channel handler on its event loop) uses ``offer(_:whenRoom:)`` instead: it is told to stop at `high` and
/// called back at `low`. So a consumer that stops asking holds the producer up, and with it the reading of the
/// socket, while one that keeps up costs a lock per element and a resumption only when it was waiting for one.
/// Elements arrive in order; after ``finish(throwing:)`` the consumer gets what is left, then the end (or the
/// error).
final class WatermarkBuffer<Element: Sendable>: Sendable {
    let low: Int
    let high: Int

    private struct State: ~Copyable {
        var elements = Deque<Element>()
        /// Set once by `finish`: nil for a normal end, else the error to throw.
        var end: (any Error)??
        var consumerGone = false
        /// The consumer waiting for an element. An unsafe continuation, not a checked one (which allocates a canary
        /// for every wait, so for every element of a consumer that keeps up): whoever takes it from here, under the
        /// lock, is the one that resumes it, so it is resumed exactly once.
        var consumer: UnsafeContinuation<Element?, any Error>?
        /// The number of the consumer's wait, for its cancellation handler: the handler of another task's wait
        /// (one refused while this one waits) must not take this one's continuation.
        var consumerWait: UInt64 = 0
        /// The producer held up at the high mark, to call once there is room (or nobody to wait for).
        var room: (@Sendable () -> Void)?
    }

    private let state = Locked(State())
    /// The last wait's number.
    private let waits = Atomic<UInt64>(0)

    private enum YieldStep {
        case done
        case resume(UnsafeContinuation<Element?, any Error>)
        case wait
    }

    private enum TakeStep {
        case element(Element, room: (@Sendable () -> Void)?)
        case end((any Error)?)
        case cancelled
        case alreadyWaiting
        case wait
    }

    /// - Precondition: `0 <= low < high`.
    init(low: Int = Watermarks.low, high: Int = Watermarks.high) {
        precondition(low >= 0 && low < high, "the low watermark must be below the high one")
        self.low = low
        self.high = high
    }

    /// Hands `element` to the consumer; suspends while the buffer is full. Dropped when the consumer is gone.
    func yield(_ element: Element) async {
        let next = state.withLock { Self.place(element, in: &$0, high: high) }
        switch next {
        case .done: return
        case .resume(let consumer): consumer.resume(returning: element)
        case .wait: await waitForRoom()
        }
    }

    /// Under the lock, what ``yield(_:)`` and ``offer(_:whenRoom:)`` share: `element` dropped (`.done`) when the
    /// consumer is gone or the stream ended, handed to a waiting consumer (`.resume`), or queued — `.wait` once
    /// the queue reaches `high`.
    private static func place(_ element: Element, in state: inout State, high: Int) -> YieldStep {
        if state.consumerGone || state.end != nil { return .done }
        if let consumer = state.consumer {
            state.consumer = nil
            return .resume(consumer)
        }
        state.elements.append(element)
        return state.elements.count >= high ? .wait : .done
    }

    private func waitForRoom() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    if state.consumerGone || state.end != nil || state.elements.count <= low || Task.isCancelled {
                        return true
                    }
                    state.room = { continuation.resume() }
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.room.take() }?()
        }
    }

    /// Hands `element` to the consumer without suspending, for a producer that cannot wait.
    /// - Returns: whether the producer may go on; false at the high mark, after which `whenRoom` is called once,
    ///   from the consumer's side, when the consumer has taken the buffer down to `low`, gone away, or the stream
    ///   ended. Dropped, returning true, when the consumer is gone or the stream has ended.
    func offer(_ element: Element, whenRoom: @escaping @Sendable () -> Void) -> Bool {
        let next = state.withLock { state in
            let step = Self.place(element, in: &state, high: high)
            if case .wait = step { state.room = whenRoom }
            return step
        }
        switch next {
        case .done: return true
        case .resume(let consumer):
            consumer.resume(returning: element)
            return true
        case .wait: return false
        }
    }

    /// Hands `elements` to the consumer in order, under one lock and with one resumption of a waiting consumer at
    /// most, for a producer that cannot wait and has several at once (the lines of one read). As ``offer(_:whenRoom:)``
    /// for each, except that all of them go in, past the high mark if need be.
    /// - Returns: whether the producer may go on; false when the buffer is at or past the high mark after them, and
    ///   then `whenRoom` is called once as for ``offer(_:whenRoom:)``.
    func offer(contentsOf elements: [Element], whenRoom: @escaping @Sendable () -> Void) -> Bool {
        guard let first = elements.first else { return true }
        let (consumer, goOn) = state.withLock { state in
            if state.consumerGone || state.end != nil {
                return (UnsafeContinuation<Element?, any Error>?.none, true)
            }
            let consumer = state.consumer.take()
            state.elements.append(contentsOf: consumer == nil ? elements[...] : elements.dropFirst())
            guard state.elements.count >= high else { return (consumer, true) }
            state.room = whenRoom
            return (consumer, false)
        }
        consumer?.resume(returning: first)
        return goOn
    }

    /// Ends the stream: the consumer gets the elements left, then nil, or `error` when there is one. A producer
    /// waiting for room is let go, and what it yields from now on is dropped; so another task may end the
    /// stream (a connection being closed) while its producer is held up by a consumer that does not read.
    func finish(throwing error: (any Error)? = nil) {
        let (consumer, room) = state.withLock { state in
            guard state.end == nil else {
                return (UnsafeContinuation<Element?, any Error>?.none, (@Sendable () -> Void)?.none)
            }
            state.end = .some(error)
            return (state.elements.isEmpty ? state.consumer.take() : nil, state.room.take())
        }
        room?()
        if let error { consumer?.resume(throwing: error) } else { consumer?.resume(returning: nil) }
    }

    /// The consumer stopped: the producer is let go and what it yields from now on is dropped.
    func consumerFinished() {
        let room = state.withLock { state in
            state.consumerGone = true
            state.elements.removeAll()
            return state.room.take()
        }
        room?()
    }

    /// The next element, nil at the end; throws the producer's error after the last element. Returns nil when
    /// the consumer's task is cancelled. One consumer at a time: a task that asks while another waits for an
    /// element gets ``ConcurrentReadError`` at once, and the one waiting goes on waiting.
    func next() async throws -> Element? {
        let next: TakeStep = state.withLock { state in
            if let element = state.elements.popFirst() {
                return .element(element, room: state.elements.count <= low ? state.room.take() : nil)
            }
            if let end = state.end {
                // The error is thrown once; after it, the stream just ends.
                state.end = .some(nil)
                return .end(end)
            }
            return .wait
        }
        switch next {
        case .element(let element, let room):
            room?()
            return element
        case .end(let error):
            if let error { throw error }
            return nil
        case .cancelled, .alreadyWaiting, .wait:
            return try await waitForElement()
        }
    }

    /// Whether a consumer is waiting for an element (for tests).
    var consumerWaits: Bool {
        state.withLock { $0.consumer != nil }
    }

    private func waitForElement() async throws -> Element? {
        let wait = waits.add(1, ordering: .relaxed).newValue
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Element?, any Error>) in
                let now: TakeStep = state.withLock { state in
                    if let element = state.elements.popFirst() {
                        return .element(element, room: state.elements.count <= low ? state.room.take() : nil)
                    }
                    if let end = state.end {
                        state.end = .some(nil)
                        return .end(end)
                    }
                    if Task.isCancelled { return .cancelled }
                    // Another task's continuation in its place would never be resumed: that task would hang.
                    if state.consumer != nil { return .alreadyWaiting }
                    state.consumer = continuation
                    state.consumerWait = wait
                    return .wait
                }
                switch now {
                case .element(let element, let room):
                    room?()
                    continuation.resume(returning: element)
                case .end(let error?): continuation.resume(throwing: error)
                case .end(nil), .cancelled: continuation.resume(returning: nil)
                case .alreadyWaiting: continuation.resume(throwing: ConcurrentReadError())
                case .wait: break
                }
            }
        } onCancel: {
            state.withLock { $0.consumerWait == wait ? $0.consumer.take() : nil }?.resume(returning: nil)
        }
    }
}
