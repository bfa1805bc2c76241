// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ShakeServer

/// The per-client queue's rules, with numbers for messages and no socket.
struct OutboundQueueTests {
    typealias Queue = OutboundQueue<Int>
    let limits = Queue.Limits(queueLimit: 3, dropLimit: 5, answerLimit: 4)

    /// Everything the queue hands out while the socket takes it all.
    func drain(_ queue: inout Queue) -> [String] {
        var written: [String] = []
        while let output = queue.next() {
            switch output {
            case .message(let value): written.append("\(value)")
            case .dropped(let count): written.append("dropped \(count)")
            }
        }
        return written
    }

    @Test func aWritableSocketWithNothingWaitingGetsTheMessageAtOnce() {
        var queue = Queue()
        guard case .write(let value) = queue.enqueue(1, kind: .droppable, writable: true, limits: limits) else {
            Issue.record("not written at once")
            return
        }
        #expect(value == 1)
        #expect(queue.count == 0)
    }

    @Test func messagesWaitInOrderWhileTheSocketIsFull() {
        var queue = Queue()
        for value in 1...3 { _ = queue.enqueue(value, kind: .droppable, writable: false, limits: limits) }
        // Once something waits, even a writable socket gets the message behind it, to keep the order.
        guard case .queued = queue.enqueue(4, kind: .answer, writable: true, limits: limits) else {
            Issue.record("jumped the queue")
            return
        }
        #expect(drain(&queue) == ["1", "2", "3", "4"])
    }

    @Test func theOldestEventIsDroppedAndTheClientToldBeforeTheRest() {
        var queue = Queue()
        var drops = 0
        for value in 1...5 {
            if case .queued(droppedOldest: true) = queue.enqueue(
                value, kind: .droppable, writable: false, limits: limits)
            {
                drops += 1
            }
        }
        #expect(drops == 2)
        #expect(queue.droppableCount == 3)
        #expect(drain(&queue) == ["dropped 2", "3", "4", "5"])
    }

    @Test func answersAreNeverDroppedAndEventsAroundThemAre() {
        var queue = Queue()
        _ = queue.enqueue(1, kind: .droppable, writable: false, limits: limits)
        _ = queue.enqueue(100, kind: .answer, writable: false, limits: limits)
        for value in 2...4 { _ = queue.enqueue(value, kind: .droppable, writable: false, limits: limits) }
        #expect(drain(&queue) == ["dropped 1", "100", "2", "3", "4"])
    }

    @Test func pastTheDropLimitTheClientIsCutOffAndTheQueueTakesNothingMore() {
        var queue = Queue()
        var outcome: Queue.EnqueueAction?
        for value in 1...20 {
            outcome = queue.enqueue(value, kind: .droppable, writable: false, limits: limits)
            if case .cutOff = outcome { break }
        }
        guard case .cutOff(let reason) = outcome else {
            Issue.record("never cut off")
            return
        }
        #expect(reason == .tooManyDropped(6))
        #expect(queue.count == 0)
        #expect(queue.isClosing)
        guard case .discard = queue.enqueue(99, kind: .answer, writable: true, limits: limits) else {
            Issue.record("a cut-off client still takes messages")
            return
        }
    }

    @Test func catchingUpStartsTheDropCountAfresh() {
        var queue = Queue()
        // Five drops: one short of the limit.
        for value in 1...8 { _ = queue.enqueue(value, kind: .droppable, writable: false, limits: limits) }
        #expect(queue.droppedSinceCaughtUp == 5)
        _ = drain(&queue)
        #expect(queue.droppedSinceCaughtUp == 0)
        for value in 1...8 {
            guard case .queued = queue.enqueue(value, kind: .droppable, writable: false, limits: limits) else {
                Issue.record("cut off after catching up")
                return
            }
        }
    }

    @Test func aClientThatAsksWithoutReadingIsPausedThenCutOffAtTheAnswerLimit() {
        var queue = Queue()
        #expect(!queue.isReadingPaused)
        for value in 1...4 {
            guard case .queued = queue.enqueue(value, kind: .answer, writable: false, limits: limits) else {
                Issue.record("answer \(value) not kept")
                return
            }
            #expect(queue.isReadingPaused)
        }
        guard case .cutOff(let reason) = queue.enqueue(5, kind: .answer, writable: false, limits: limits) else {
            Issue.record("not cut off past the answer limit")
            return
        }
        #expect(reason == .tooManyAnswers(5))
    }

    @Test func readingResumesOnceTheAnswersAreWritten() {
        var queue = Queue()
        _ = queue.enqueue(1, kind: .answer, writable: false, limits: limits)
        _ = queue.enqueue(2, kind: .droppable, writable: false, limits: limits)
        #expect(queue.isReadingPaused)
        _ = queue.next()
        // Only events wait now: they do not hold the client's requests back.
        #expect(!queue.isReadingPaused)
        #expect(queue.count == 1)
    }

    @Test func closingHandsOverWhatWaitsWithoutTheDroppedNotice() {
        var queue = Queue()
        for value in 1...4 { _ = queue.enqueue(value, kind: .droppable, writable: false, limits: limits) }
        _ = queue.enqueue(10, kind: .answer, writable: false, limits: limits)
        #expect(queue.close() == [2, 3, 4, 10])
        #expect(queue.next() == nil)
        guard case .discard = queue.enqueue(11, kind: .answer, writable: true, limits: limits) else {
            Issue.record("a closing client still takes messages")
            return
        }
    }

    @Test func aQueueLimitOfZeroKeepsNoEventsButCountsThem() {
        var queue = Queue()
        let none = Queue.Limits(queueLimit: 0, dropLimit: 100, answerLimit: 4)
        for value in 1...3 { _ = queue.enqueue(value, kind: .droppable, writable: false, limits: none) }
        #expect(queue.count == 0)
        #expect(drain(&queue) == ["dropped 3"])
    }
}

/// The replay ring's order, capacity changes and completeness, with strings for lines.
struct ReplayRingTests {
    func ring(capacity: Int, seqs: ClosedRange<Int>) -> ReplayRing<String> {
        var ring = ReplayRing<String>(capacity: capacity)
        for seq in seqs { ring.append(seq: seq, phase: seq.isMultiple(of: 2) ? .ended : .began, line: "\(seq)") }
        return ring
    }

    @Test func keepsTheNewestEventsOldestFirst() {
        let kept = ring(capacity: 3, seqs: 1...7)
        #expect(kept.oldestFirst.map(\.seq) == [5, 6, 7])
    }

    @Test func aReplayWithinTheRingIsComplete() {
        let replay = ring(capacity: 3, seqs: 1...7).replay(since: 4, latest: 7, phases: [.began, .ended])
        #expect(replay.lines == ["5", "6", "7"])
        #expect(replay.complete)
    }

    @Test func aReplayFromBeforeTheRingIsIncomplete() {
        let replay = ring(capacity: 3, seqs: 1...7).replay(since: 2, latest: 7, phases: [.began, .ended])
        #expect(replay.lines == ["5", "6", "7"])
        #expect(!replay.complete)
    }

    @Test func aReplayKeepsToTheClientsPhases() {
        let replay = ring(capacity: 10, seqs: 1...6).replay(since: 0, latest: 6, phases: [.ended])
        #expect(replay.lines == ["2", "4", "6"])
        #expect(replay.complete)
    }

    @Test func aReplayOfNothingMissedIsCompleteAndEmpty() {
        let replay = ring(capacity: 3, seqs: 1...7).replay(since: 7, latest: 7, phases: [.began])
        #expect(replay.lines.isEmpty)
        #expect(replay.complete)
        let empty = ReplayRing<String>(capacity: 3).replay(since: 0, latest: 0, phases: [.began])
        #expect(empty.complete)
    }

    @Test func shrinkingKeepsTheNewestAndGrowingKeepsAll() {
        var kept = ring(capacity: 5, seqs: 1...5)
        kept.resize(to: 2)
        #expect(kept.oldestFirst.map(\.seq) == [4, 5])
        kept.resize(to: 4)
        kept.append(seq: 6, phase: .began, line: "6")
        kept.append(seq: 7, phase: .began, line: "7")
        kept.append(seq: 8, phase: .began, line: "8")
        #expect(kept.oldestFirst.map(\.seq) == [5, 6, 7, 8])
    }

    @Test func aCapacityOfZeroKeepsNothing() {
        var kept = ring(capacity: 0, seqs: 1...3)
        #expect(kept.count == 0)
        kept.resize(to: -1)
        kept.append(seq: 4, phase: .began, line: "4")
        #expect(kept.replay(since: 0, latest: 4, phases: [.began]).complete == false)
    }
}
