// SPDX-License-Identifier: Apache-2.0
import DequeModule

/// Which client's request lines are handled when: all clients together handle at most ``linesPerTurn`` lines in
/// a turn of the loop; a client past its share, or arriving when the turn is used up, waits for the next turn,
/// clients that have asked little so far (newcomers) ahead of the others, each in order. No I/O and no clock: the
/// server runs a turn a pause after it is told to schedule one (``ShakeServer/turnPause``), and performs each
/// waiter's work as ``next()`` hands it out.
struct RequestTurns<Work> {
    let linesPerTurn: Int
    /// Lines handled in the turn under way.
    private(set) var linesThisTurn = 0
    private var newcomers = Deque<Work>()
    private var others = Deque<Work>()
    /// Whether a turn is scheduled and has not begun.
    private(set) var isScheduled = false
    /// Of those waiting as the turn began, the ones not yet handed out: who comes back within the turn waits for
    /// the next.
    private var newcomersDue = 0
    private var othersDue = 0

    init(linesPerTurn: Int) {
        self.linesPerTurn = linesPerTurn
    }

    /// Whether clients wait for a turn.
    var othersWait: Bool { !newcomers.isEmpty || !others.isEmpty }

    /// A line is to be handled. - Returns: whether it may be now (false: the turn is used up, wait), and whether
    /// to schedule a turn (the count starts again after a pause).
    mutating func takeLine() -> (allowed: Bool, schedule: Bool) {
        guard linesThisTurn < linesPerTurn else { return (false, false) }
        linesThisTurn += 1
        return (true, schedule())
    }

    /// `work` waits for a turn, after those already waiting (a newcomer: after the newcomers waiting, ahead of the
    /// others). - Returns: whether to schedule a turn.
    mutating func wait(_ work: Work, newcomer: Bool) -> Bool {
        if newcomer {
            newcomers.append(work)
        } else {
            others.append(work)
        }
        return schedule()
    }

    /// The scheduled turn begins: the count starts again, and those waiting now are due in it.
    mutating func beginTurn() {
        isScheduled = false
        linesThisTurn = 0
        newcomersDue = newcomers.count
        othersDue = others.count
    }

    /// The next waiter's work in this turn, while the turn has room: newcomers first, then the others, each in
    /// the order they came. Nil when the turn is over.
    mutating func next() -> Work? {
        guard linesThisTurn < linesPerTurn else { return nil }
        if newcomersDue > 0, let work = newcomers.popFirst() {
            newcomersDue -= 1
            return work
        }
        if othersDue > 0, let work = others.popFirst() {
            othersDue -= 1
            return work
        }
        return nil
    }

    /// The turn is over. - Returns: whether to schedule the next (clients still wait).
    mutating func endTurn() -> Bool {
        newcomersDue = 0
        othersDue = 0
        return othersWait ? schedule() : false
    }

    private mutating func schedule() -> Bool {
        guard !isScheduled else { return false }
        isScheduled = true
        return true
    }
}
