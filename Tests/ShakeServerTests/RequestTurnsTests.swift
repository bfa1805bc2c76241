// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ShakeServer

/// Request lines in turns: a bounded number a turn for everyone, newcomers ahead, everyone in order, without a
/// socket or a clock.
struct RequestTurnsTests {
    /// Runs one turn, handing out the waiters' numbers; each waiter takes `lines` lines when its turn comes.
    /// - Returns: who ran, and whether the end of the turn scheduled another.
    static func turn(_ turns: inout RequestTurns<Int>, lines: Int = 1) -> (ran: [Int], again: Bool) {
        turns.beginTurn()
        var ran: [Int] = []
        while let work = turns.next() {
            ran.append(work)
            for _ in 0..<lines { _ = turns.takeLine() }
        }
        return (ran, turns.endTurn())
    }

    @Test func linesAreTakenUntilTheTurnIsUsedUpAndTheFirstSchedulesTheNextTurn() {
        var turns = RequestTurns<Int>(linesPerTurn: 3)
        var taken: [(allowed: Bool, schedule: Bool)] = []
        for _ in 1...4 { taken.append(turns.takeLine()) }
        #expect(taken.map(\.allowed) == [true, true, true, false])
        #expect(taken.map(\.schedule) == [true, false, false, false])
        // The next turn: the count starts again.
        let again = Self.turn(&turns).again
        #expect(!again)
        let next = turns.takeLine()
        #expect(next.allowed && next.schedule)
    }

    @Test func newcomersGoFirstThenTheOthersEachInOrder() {
        var turns = RequestTurns<Int>(linesPerTurn: 64)
        var scheduled: [Bool] = []
        for (client, newcomer) in [(1, false), (2, false), (3, true), (4, true)] {
            scheduled.append(turns.wait(client, newcomer: newcomer))
        }
        // The first wait schedules the turn; the others find it scheduled.
        #expect(scheduled == [true, false, false, false])
        #expect(turns.othersWait)
        let (ran, again) = Self.turn(&turns)
        #expect(ran == [3, 4, 1, 2])
        #expect(!again && !turns.othersWait)
    }

    @Test func aFullTurnLeavesTheRestForTheNextWhichIsScheduled() {
        var turns = RequestTurns<Int>(linesPerTurn: 4)
        for client in 1...5 { _ = turns.wait(client, newcomer: false) }
        // Each takes two lines: two clients fill the turn.
        let first = Self.turn(&turns, lines: 2)
        #expect(first.ran == [1, 2])
        // The next turn is scheduled (by the first line taken in this one).
        #expect(turns.isScheduled && turns.othersWait)
        let second = Self.turn(&turns, lines: 2)
        #expect(second.ran == [3, 4])
        let third = Self.turn(&turns, lines: 2)
        #expect(third.ran == [5] && !third.again)
    }

    @Test func whoWaitsAgainWithinATurnWaitsForTheNext() {
        var turns = RequestTurns<Int>(linesPerTurn: 64)
        _ = turns.wait(1, newcomer: false)
        turns.beginTurn()
        let work = turns.next()
        #expect(work == 1)
        // Client 1 handled its share and waits again: not within this turn, but in the next, which its wait
        // scheduled (the end of the turn then schedules none).
        let scheduled = turns.wait(1, newcomer: false)
        #expect(scheduled)
        let more = turns.next()
        #expect(more == nil)
        let again = turns.endTurn()
        #expect(!again && turns.isScheduled)
        let next = Self.turn(&turns)
        #expect(next.ran == [1])
    }
}
