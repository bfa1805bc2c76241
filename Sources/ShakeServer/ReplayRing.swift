// SPDX-License-Identifier: Apache-2.0
import DequeModule
import ShakeDetection

/// The newest events, kept for `replay`, and what a replay since a seq returns. No I/O.
struct ReplayRing<Line> {
    struct Entry {
        var seq: Int
        var phase: ShakeEvent.Phase
        var line: Line
    }

    /// The answer to `replay since`: the lines to send, oldest first, and whether they are all the client missed.
    struct Replay {
        var lines: [Line]
        var complete: Bool
    }

    private(set) var capacity: Int
    private var entries: Deque<Entry> = []

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    var count: Int { entries.count }

    /// The kept events, oldest first.
    var oldestFirst: [Entry] { Array(entries) }

    /// Keeps an event, forgetting the oldest when full.
    mutating func append(seq: Int, phase: ShakeEvent.Phase, line: Line) {
        guard capacity > 0 else { return }
        if entries.count == capacity { entries.removeFirst() }
        entries.append(Entry(seq: seq, phase: phase, line: line))
    }

    /// A new capacity: the newest events that fit stay.
    mutating func resize(to newCapacity: Int) {
        capacity = max(0, newCapacity)
        if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
    }

    /// The kept events after `since` in `phases`; complete when nothing after `since` was forgotten (`latest`:
    /// the seq of the newest event published).
    func replay(since: Int, latest: Int, phases: Set<ShakeEvent.Phase>) -> Replay {
        let lines = entries.filter { $0.seq > since && phases.contains($0.phase) }.map(\.line)
        let oldest = entries.first?.seq ?? (latest + 1)
        return Replay(lines: lines, complete: since >= latest || since + 1 >= oldest)
    }
}
