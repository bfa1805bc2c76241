// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ShakeDaemon

/// Standard output's queue: bounded, the oldest dropped, a stall said once and summed up once.
struct OutputQueueTests {
    static func line(_ number: Int) -> [UInt8] { Array("\(number)\n".utf8) }

    @Test func theFirstLineIntoAnEmptyQueueWakesTheWriterAndTheOthersDoNot() {
        var queue = OutputQueue(limit: 3)
        #expect(queue.offer(Self.line(1)) == .queued(wake: true))
        #expect(queue.offer(Self.line(2)) == .queued(wake: false))
        #expect(queue.take() == [Self.line(1), Self.line(2)])
        #expect(queue.offer(Self.line(3)) == .queued(wake: true))
    }

    @Test func pastTheLimitTheOldestGoesAndTheStallIsSaidOnce() {
        var queue = OutputQueue(limit: 3)
        for number in 1...3 { _ = queue.offer(Self.line(number)) }
        #expect(queue.offer(Self.line(4)) == .droppedOldest(firstOfStall: true))
        #expect(queue.offer(Self.line(5)) == .droppedOldest(firstOfStall: false))
        #expect(queue.count == 3)
        #expect(queue.take() == [Self.line(3), Self.line(4), Self.line(5)])
        // Written, and nothing more waits: the reader keeps up again, and the drops are summed up once.
        #expect(queue.caughtUp() == 2)
        #expect(queue.caughtUp() == nil)
        // A later stall is said again.
        for number in 6...8 { _ = queue.offer(Self.line(number)) }
        #expect(queue.offer(Self.line(9)) == .droppedOldest(firstOfStall: true))
        #expect(queue.dropped == 3)
    }

    @Test func aLongStallHoldsNoMoreThanTheLimit() {
        var queue = OutputQueue(limit: 4)
        for number in 1...10_000 { _ = queue.offer(Self.line(number)) }
        #expect(queue.count == 4)
        #expect(queue.dropped == 9_996)
        #expect(queue.take() == (9_997...10_000).map(Self.line))
    }

    @Test func nothingIsSummedUpWhileLinesStillWait() {
        var queue = OutputQueue(limit: 1)
        _ = queue.offer(Self.line(1))
        _ = queue.offer(Self.line(2))
        #expect(queue.caughtUp() == nil)
    }

    @Test func closingCountsWhatWasNeverWrittenAndRefusesMore() {
        var queue = OutputQueue(limit: 2)
        for number in 1...3 { _ = queue.offer(Self.line(number)) }
        // One dropped, two held, and five the writer took but could not write.
        #expect(queue.close(unwritten: 5) == 8)
        #expect(queue.offer(Self.line(4)) == .closed)
        #expect(queue.count == 0)
        var quiet = OutputQueue(limit: 2)
        #expect(quiet.close() == nil)
    }
}
