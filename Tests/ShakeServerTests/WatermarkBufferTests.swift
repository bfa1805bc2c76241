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
}
