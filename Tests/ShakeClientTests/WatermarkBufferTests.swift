// SPDX-License-Identifier: Apache-2.0
import Synchronization
import Testing

@testable import ShakeClient

/// The buffer between ShakeClient's socket reader and its consumer: bounded, in order, ends and errors passed on.
struct WatermarkBufferTests {
    struct Failure: Error, Equatable {}

    /// Lets other tasks run until `condition` holds (at most `turns` times); no clock involved.
    func settle(turns: Int = 2000, until condition: () -> Bool) async {
        for _ in 0..<turns where !condition() { await Task.yield() }
    }

    @Test func theProducerWaitsAtTheHighMarkAndGoesOnBelowTheLowOne() async throws {
        let buffer = WatermarkBuffer<Int>(low: 4, high: 8)
        let produced = Atomic<Int>(0)
        let producer = Task {
            for value in 0..<100 {
                await buffer.yield(value)
                produced.add(1, ordering: .relaxed)
            }
            buffer.finish()
        }
        await settle { produced.load(ordering: .relaxed) >= 7 }
        // The eighth yield fills the buffer and waits: the producer stops there, however long it is given.
        await settle(turns: 500) { false }
        #expect(produced.load(ordering: .relaxed) == 7)
        // Taking three (eight left is five, above the low mark) does not let it go; the fourth does.
        for expected in 0..<3 { #expect(try await buffer.next() == expected) }
        await settle(turns: 500) { false }
        #expect(produced.load(ordering: .relaxed) == 7)
        #expect(try await buffer.next() == 3)
        await settle { produced.load(ordering: .relaxed) > 7 }
        #expect(produced.load(ordering: .relaxed) > 7)
        var rest: [Int] = []
        while let value = try await buffer.next() { rest.append(value) }
        #expect(rest == Array(4..<100))
        await producer.value
    }

    @Test func theConsumerGetsWhatIsLeftThenTheError() async throws {
        let buffer = WatermarkBuffer<Int>(low: 1, high: 4)
        await buffer.yield(1)
        await buffer.yield(2)
        buffer.finish(throwing: Failure())
        #expect(try await buffer.next() == 1)
        #expect(try await buffer.next() == 2)
        await #expect(throws: Failure.self) { try await buffer.next() }
        #expect(try await buffer.next() == nil)
    }

    @Test func aWaitingConsumerIsHandedTheNextElement() async throws {
        let buffer = WatermarkBuffer<String>(low: 1, high: 4)
        let consumer = Task { try await buffer.next() }
        await settle(turns: 100) { false }
        await buffer.yield("first")
        #expect(try await consumer.value == "first")
    }

    @Test func aConsumerThatGoesAwayLetsABlockedProducerGo() async {
        let buffer = WatermarkBuffer<Int>(low: 1, high: 2)
        let producer = Task {
            for value in 0..<1000 { await buffer.yield(value) }
        }
        await settle(turns: 200) { false }
        buffer.consumerFinished()
        await producer.value  // returns: the producer is not left waiting, and what it yields is dropped
    }

    @Test func cancellingAWaitingConsumerEndsItsStream() async throws {
        let buffer = WatermarkBuffer<Int>(low: 1, high: 4)
        let consumer = Task { try await buffer.next() }
        await settle(turns: 100) { false }
        consumer.cancel()
        #expect(try await consumer.value == nil)
    }

    @Test func finishingFromOutsideLetsAWaitingProducerGoAndKeepsWhatWasBuffered() async throws {
        let buffer = WatermarkBuffer<Int>(low: 1, high: 3)
        let producer = Task {
            for value in 0..<1000 { await buffer.yield(value) }
        }
        await settle(turns: 200) { false }
        buffer.finish()
        await producer.value  // returns: the producer is not left waiting, and what it yields is dropped
        var taken: [Int] = []
        while let value = try await buffer.next() { taken.append(value) }
        #expect(taken == [0, 1, 2])
    }

    /// A producer that cannot wait (the connection's channel handler) is told to stop at the high mark and called
    /// back, once, when the consumer has taken the buffer down to the low one.
    @Test func anOfferAtTheHighMarkSaysStopAndCallsBackAtTheLowOne() async throws {
        let buffer = WatermarkBuffer<Int>(low: 2, high: 5)
        let calls = Atomic<Int>(0)
        let whenRoom: @Sendable () -> Void = { calls.add(1, ordering: .relaxed) }
        for value in 0..<4 { #expect(buffer.offer(value, whenRoom: whenRoom)) }
        #expect(!buffer.offer(4, whenRoom: whenRoom))
        // Past the mark (the rest of a read under way) elements still go in, in order.
        #expect(!buffer.offer(5, whenRoom: whenRoom))
        for expected in 0..<3 { #expect(try await buffer.next() == expected) }
        #expect(calls.load(ordering: .relaxed) == 0)  // three left: above the low mark
        #expect(try await buffer.next() == 3)
        #expect(calls.load(ordering: .relaxed) == 1)
        #expect(try await buffer.next() == 4)
        #expect(calls.load(ordering: .relaxed) == 1)
        #expect(buffer.offer(6, whenRoom: whenRoom))
        buffer.finish()
        #expect(try await buffer.next() == 5)
        #expect(try await buffer.next() == 6)
        #expect(try await buffer.next() == nil)
    }

    /// A producer held up at the mark is called back when the consumer goes away or the stream ends, and what it
    /// offers after that is dropped without holding it up again.
    @Test(arguments: [false, true])
    func anOfferHeldUpIsLetGoWhenTheConsumerGoesOrTheStreamEnds(byFinishing: Bool) async throws {
        let buffer = WatermarkBuffer<Int>(low: 0, high: 2)
        let calls = Atomic<Int>(0)
        let whenRoom: @Sendable () -> Void = { calls.add(1, ordering: .relaxed) }
        #expect(buffer.offer(0, whenRoom: whenRoom))
        #expect(!buffer.offer(1, whenRoom: whenRoom))
        if byFinishing { buffer.finish() } else { buffer.consumerFinished() }
        #expect(calls.load(ordering: .relaxed) == 1)
        #expect(buffer.offer(2, whenRoom: whenRoom))
        #expect(calls.load(ordering: .relaxed) == 1)
        if byFinishing {
            // The consumer, still there, gets what was in before the end, and not what came after it.
            var taken: [Int] = []
            while let value = try await buffer.next() { taken.append(value) }
            #expect(taken == [0, 1])
        }
    }

    /// One consumer at a time: a second one asking while the first waits is refused at once, and the first is still
    /// handed the next element (it used to be left waiting for ever, its continuation replaced by the second's).
    @Test func aSecondConsumerAskingWhileOneWaitsIsRefused() async throws {
        let buffer = WatermarkBuffer<Int>(low: 1, high: 4)
        let first = Task { try await buffer.next() }
        await settle { buffer.consumerWaits }
        #expect(buffer.consumerWaits)
        let answered = Atomic<Bool>(false)
        let second = Task {
            defer { answered.store(true, ordering: .relaxed) }
            return try await buffer.next()
        }
        await settle { answered.load(ordering: .relaxed) }
        let refusedAtOnce = answered.load(ordering: .relaxed)
        #expect(buffer.offer(5) {})
        await #expect(throws: ConcurrentReadError.self) { try await second.value }
        // Without the refusal the element went to the second, and the first would wait for ever.
        guard refusedAtOnce else { return }
        #expect(try await first.value == 5)
    }

    /// A task already cancelled that asks gets nil, and leaves the consumer waiting alone (its cancellation
    /// handler, run at once, used to take the waiting consumer's place and end its wait with nil).
    @Test func aCancelledTaskAskingWhileAConsumerWaitsLeavesItWaiting() async throws {
        let buffer = WatermarkBuffer<Int>(low: 1, high: 4)
        let first = Task { try await buffer.next() }
        await settle { buffer.consumerWaits }
        let cancelled = Task {
            while !Task.isCancelled { await Task.yield() }
            return try await buffer.next()
        }
        cancelled.cancel()
        #expect(try await cancelled.value == nil)
        #expect(buffer.offer(5) {})
        #expect(try await first.value == 5)
    }

    /// A consumer already waiting is handed an offered element at once.
    @Test func anOfferGoesStraightToAWaitingConsumer() async throws {
        let buffer = WatermarkBuffer<Int>(low: 1, high: 4)
        let consumer = Task { try await buffer.next() }
        await settle(turns: 100) { false }
        #expect(buffer.offer(7) {})
        #expect(try await consumer.value == 7)
    }

    /// Several elements offered at once go in together, in order, the first straight to a waiting consumer; past
    /// the high mark they all still go in, and the producer is told to stop and called back at the low one.
    @Test func anOfferOfSeveralGoesInWholeAndInOrder() async throws {
        let buffer = WatermarkBuffer<Int>(low: 1, high: 3)
        let calls = Atomic<Int>(0)
        let whenRoom: @Sendable () -> Void = { calls.add(1, ordering: .relaxed) }
        let consumer = Task { try await buffer.next() }
        await settle(turns: 100) { false }
        #expect(buffer.offer(contentsOf: [0, 1, 2], whenRoom: whenRoom))
        #expect(try await consumer.value == 0)
        #expect(buffer.offer(contentsOf: [], whenRoom: whenRoom))
        #expect(!buffer.offer(contentsOf: [3, 4], whenRoom: whenRoom))
        #expect(try await buffer.next() == 1)
        #expect(try await buffer.next() == 2)
        #expect(calls.load(ordering: .relaxed) == 0)
        #expect(try await buffer.next() == 3)
        #expect(calls.load(ordering: .relaxed) == 1)
        buffer.finish()
        #expect(buffer.offer(contentsOf: [5], whenRoom: whenRoom))
        #expect(try await buffer.next() == 4)
        #expect(try await buffer.next() == nil)
    }
}
