// SPDX-License-Identifier: Apache-2.0
/// The lines waiting for standard output's writer (`--print-events`): at most ``limit``, the oldest dropped past
/// it, so that a reader of that pipe who stops reading costs the daemon a bounded queue and never holds up the
/// thread that publishes. Counts what it dropped, and says when to log it: once as the reader stalls, once in a
/// summary when it reads again (or at the end). No I/O: `StandardOutputWriter` performs it.
struct OutputQueue: Sendable {
    /// What ``offer(_:)`` did.
    enum Offer: Sendable, Equatable {
        /// Queued; `wake`: the queue was empty, so the writer may be waiting for it.
        case queued(wake: Bool)
        /// Queued, and the oldest line dropped for it; `firstOfStall`: the first drop since the reader last kept
        /// up (log it).
        case droppedOldest(firstOfStall: Bool)
        /// Not queued: the writer has stopped (standard output failed, or the daemon is stopping).
        case closed
    }

    /// The most lines held.
    let limit: Int
    private var lines: [[UInt8]] = []
    /// Where the oldest line held is in `lines` (lines before it were dropped or taken).
    private var head = 0
    /// Lines dropped since the last summary.
    private(set) var droppedSinceSummary = 0
    /// Lines dropped in all.
    private(set) var dropped = 0
    private(set) var isClosed = false

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// The lines held.
    var count: Int { lines.count - head }

    /// Adds a line, dropping the oldest when ``limit`` lines are held already.
    mutating func offer(_ line: [UInt8]) -> Offer {
        guard !isClosed else { return .closed }
        let wasEmpty = count == 0
        var outcome = Offer.queued(wake: wasEmpty)
        if count >= limit {
            head += 1
            dropped += 1
            droppedSinceSummary += 1
            outcome = .droppedOldest(firstOfStall: droppedSinceSummary == 1)
        }
        lines.append(line)
        if head > limit {
            lines.removeFirst(head)
            head = 0
        }
        return outcome
    }

    /// Takes every line held, oldest first, for the writer.
    mutating func take() -> [[UInt8]] {
        defer {
            lines.removeAll(keepingCapacity: true)
            head = 0
        }
        return Array(lines[head...])
    }

    /// The writer wrote everything it took and found the queue empty: the lines dropped since the last summary,
    /// to log as the reader reads again (nil when none were).
    mutating func caughtUp() -> Int? {
        guard count == 0, droppedSinceSummary > 0 else { return nil }
        defer { droppedSinceSummary = 0 }
        return droppedSinceSummary
    }

    /// The writer stops: nothing more is queued. - Returns: the lines dropped since the last summary and the lines
    /// still held (never to be written), for the last summary; nil when there are neither.
    mutating func close(unwritten: Int = 0) -> Int? {
        isClosed = true
        let lost = droppedSinceSummary + count + unwritten
        droppedSinceSummary = 0
        dropped += count + unwritten
        lines.removeAll()
        head = 0
        return lost > 0 ? lost : nil
    }
}
