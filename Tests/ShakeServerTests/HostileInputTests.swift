// SPDX-License-Identifier: Apache-2.0
import NIOCore
import ShakeProtocol
import Testing

@testable import ShakeServer

/// The pure parts that keep hostile clients bounded: request lines taken one at a time, warnings counted per
/// interval, connection slots per user.
struct RequestLinesTests {
    func taken(_ lines: inout RequestLines, maxLength: Int = 16) -> [String] {
        var result: [String] = []
        while let frame = lines.next(maxLength: maxLength) {
            switch frame {
            case .line(let line): result.append(String(buffer: line))
            case .tooLong: result.append("<too long>")
            }
        }
        return result
    }

    @Test func linesComeOneAtATimeAndAnUnfinishedOneWaits() {
        var lines = RequestLines()
        lines.append(ByteBuffer(string: "a\r\n\nbc\nde"))
        #expect(lines.hasLine)
        #expect(taken(&lines) == ["a", "", "bc"])
        #expect(!lines.hasLine)
        #expect(lines.waitingBytes == 2)
        lines.append(ByteBuffer(string: "f\n"))
        #expect(taken(&lines) == ["def"])
        #expect(lines.waitingBytes == 0)
    }

    @Test func aLineTooLongIsReportedOnceAndItsBytesDropped() {
        var lines = RequestLines()
        lines.append(ByteBuffer(string: String(repeating: "x", count: 40)))
        #expect(taken(&lines) == ["<too long>"])
        #expect(lines.waitingBytes == 0, "the bytes of a line too long are not kept")
        lines.append(ByteBuffer(string: String(repeating: "x", count: 40) + "\nok\n"))
        #expect(taken(&lines) == ["ok"])
        lines.append(ByteBuffer(string: String(repeating: "y", count: 20) + "\nok\n"))
        #expect(taken(&lines) == ["<too long>", "ok"])
    }

    /// The limit is the one given when the line is taken: a reload applies to bytes already received.
    @Test func theLimitInForceWhenTheLineIsTakenApplies() {
        var lines = RequestLines()
        lines.append(ByteBuffer(string: "0123456789\n0123456789\n"))
        #expect(lines.next(maxLength: 16).map { if case .line = $0 { true } else { false } } == true)
        #expect(lines.next(maxLength: 8).map { if case .tooLong = $0 { true } else { false } } == true)
    }
}

struct LogLimiterTests {
    @Test func theFirstOfAKindIsLoggedTheRestCountedUntilTheIntervalEnds() {
        var limiter = LogLimiter<String>(interval: .seconds(10))
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        let first = limiter.shouldLog("refused", now: start)
        let other = limiter.shouldLog("other", now: start)
        #expect(first && other)
        var logged = 0
        for second in 1...9 where limiter.shouldLog("refused", now: start + .seconds(Int64(second))) {
            logged += 1
        }
        #expect(logged == 0)
        let early = limiter.due(now: start + .seconds(9))
        #expect(early.isEmpty)
        let due = limiter.due(now: start + .seconds(10))
        #expect(due.map(\.kind) == ["refused"] && due.map(\.suppressed) == [9], "'other' had nothing counted")
        // A new interval: the next one is logged at once.
        let next = limiter.shouldLog("refused", now: start + .seconds(11))
        #expect(next)
    }

    /// The report of the counts is due only while something is counted: a limiter that asked for a report every
    /// interval whatever happened would wake an idle daemon for nothing.
    @Test func aReportIsDueOnlyWhileSomethingIsCounted() {
        var limiter = LogLimiter<String>(interval: .seconds(10))
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        #expect(limiter.nextReport == nil, "nothing logged yet")
        _ = limiter.shouldLog("refused", now: start)
        _ = limiter.shouldLog("other", now: start + .seconds(2))
        #expect(limiter.nextReport == nil, "the first of each kind was logged at once: nothing to count out")
        _ = limiter.shouldLog("other", now: start + .seconds(3))
        #expect(limiter.nextReport == start + .seconds(12), "'other' counted one, in its interval from 2 s")
        _ = limiter.shouldLog("refused", now: start + .seconds(4))
        #expect(limiter.nextReport == start + .seconds(10), "'refused' counted one too, and its interval ends first")
        _ = limiter.due(now: start + .seconds(10))
        #expect(limiter.nextReport == start + .seconds(12))
        _ = limiter.due(now: start + .seconds(12))
        #expect(limiter.nextReport == nil, "everything counted was given out")
    }

    @Test func fiftyThousandWarningsAreTwoLinesAnInterval() {
        var limiter = LogLimiter<String>(interval: .seconds(10))
        let start = NIODeadline.uptimeNanoseconds(0)
        var lines = 0
        for index in 0..<50_000 {
            let now = start + .milliseconds(Int64(index / 10))  // 50,000 in 5 s
            if limiter.shouldLog("refused a request", now: now) { lines += 1 }
            lines += limiter.due(now: now).count
        }
        lines += limiter.due(now: start + .seconds(20)).count
        #expect(lines == 2)
    }
}

struct ClientSlotsTests {
    let slots = ClientSlots(maxClients: 100, maxPerUser: 10, reserved: 5)

    @Test func oneUserCannotTakeEverySlot() {
        #expect(slots.refusal(connected: 9, sameUser: 9, root: false, admin: false) == nil)
        #expect(slots.refusal(connected: 10, sameUser: 10, root: false, admin: false) == .perUser(limit: 10))
        // Admins are limited per user too; root is not.
        #expect(slots.refusal(connected: 10, sameUser: 10, root: false, admin: true) == .perUser(limit: 10))
        #expect(slots.refusal(connected: 50, sameUser: 50, root: true, admin: true) == nil)
    }

    @Test func theLastSlotsAreKeptForRootAndAdmins() {
        #expect(slots.refusal(connected: 94, sameUser: 0, root: false, admin: false) == nil)
        #expect(slots.refusal(connected: 95, sameUser: 0, root: false, admin: false) == .full(limit: 95))
        #expect(slots.refusal(connected: 95, sameUser: 0, root: false, admin: true) == nil)
        #expect(slots.refusal(connected: 99, sameUser: 0, root: true, admin: true) == nil)
        #expect(slots.refusal(connected: 100, sameUser: 0, root: true, admin: true) == .full(limit: 100))
    }

    @Test func moreReservedThanSlotsLeavesNoneToOthers() {
        let tight = ClientSlots(maxClients: 4, maxPerUser: 4, reserved: 8)
        #expect(tight.refusal(connected: 0, sameUser: 0, root: false, admin: false) == .full(limit: 0))
        #expect(tight.refusal(connected: 0, sameUser: 0, root: false, admin: true) == nil)
    }
}

struct OutboundQueueWeightTests {
    @Test func theWeightFollowsWhatWaitsAndDropsInsteadCountTowardsTheLimit() {
        var queue = OutboundQueue<String>(weight: \.count)
        let limits = OutboundQueue<String>.Limits(queueLimit: 2, dropLimit: 3, answerLimit: 4)
        _ = queue.enqueue("aaaa", kind: .droppable, writable: false, limits: limits)
        _ = queue.enqueue("bb", kind: .answer, writable: false, limits: limits)
        #expect(queue.weightWaiting == 6)
        _ = queue.enqueue("c", kind: .droppable, writable: false, limits: limits)
        _ = queue.enqueue("d", kind: .droppable, writable: false, limits: limits)  // "aaaa" makes room
        #expect(queue.weightWaiting == 4)
        let second = queue.drop(limits: limits)
        let third = queue.drop(limits: limits)
        #expect(second == nil && third == nil)
        #expect(queue.droppedUnreported == 3)
        guard case .cutOff(.tooManyDropped(4)) = queue.drop(limits: limits) else {
            Issue.record("the fourth drop without catching up passes the drop limit")
            return
        }
        #expect(queue.weightWaiting == 0 && queue.isClosing)
    }

    @Test func whatIsWrittenLeavesTheWeight() {
        var queue = OutboundQueue<String>(weight: \.count)
        let limits = OutboundQueue<String>.Limits(queueLimit: 8, dropLimit: 8, answerLimit: 8)
        _ = queue.enqueue("abc", kind: .answer, writable: false, limits: limits)
        _ = queue.enqueue("de", kind: .droppable, writable: false, limits: limits)
        _ = queue.next()
        #expect(queue.weightWaiting == 2)
        _ = queue.next()
        #expect(queue.weightWaiting == 0)
    }
}
