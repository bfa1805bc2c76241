// SPDX-License-Identifier: Apache-2.0
/// When the relay reads the sensor while only it reads it: just before iio-sensor-proxy's next poll, decided
/// without a clock or a file (the caller passes the time, the opens of the relay's node it timed, and the opens it
/// counted without their time).
///
/// iio-sensor-proxy opens the relay's evdev node, reads it and closes it every 700 ms (a GLib timeout) while a
/// client claims the accelerometer. A read every 0.7 s at an unrelated phase hands it a value up to 0.7 s old;
/// a read ``lead`` before each of its opens hands it one ``lead`` old, for the same one read a poll. The phase
/// comes from opens whose time is known: the open that woke the capture from its wait while the sensor was
/// off (the claim), and, every ``probeEvery`` reads, a wait after a read for the open it was made for, and a
/// read at that open (a wake-up more; the next read is still planned just before the next poll, so no poll is
/// served an older reading, as one in five was when that read replaced the next poll's). The period is
/// learnt from the timed opens, as the mean interval between them, lengthened slowly and shortened at once:
/// GLib sets each timeout from its late dispatch, so the opens drift later by every delay (700 ms polls came
/// 0.5 to 1.27 s apart under emulation on a loaded host), and one late dispatch in a probe's window, taken
/// whole, would space the reads further apart than the polls that follow, each read later than the one before
/// until a poll had no read before it; reads a little early only cost the reading's age. A poll interval other
/// than 700 ms is followed (from two gaps in a row that agree).
///
/// Whether each read came before its poll is checked without a wake-up: the caller counts the opens before
/// each read (``countedBeforeRead(opens:)``) and after its reading was written (``plan(now:)``'s `opens`). An
/// open while it was read and written means the poll came within that delay after the read's time: the phase is
/// placed there, and the next read planned from it. An open more than expected before the read means the poll
/// came earlier, at a time not known: the phase is lost, and the next read waits for the open and happens at it
/// (``Plan/readAtOpen(until:)``, timing it), and the read after is planned for the poll after that open: a reading read past a turn's
/// deciding sample reaches iio-sensor-proxy at its next poll when the read came before it, at the poll after when
/// it came after it; later only when the capture itself stalls past a poll (a read delayed by more than a poll's
/// interval). The lead follows the reads' own delay (``delay``), so that a read that wakes late on a loaded
/// machine still comes before its poll. Without a phase (none timed yet, or the opens stopped coming) a read waits
/// for the open, at most one ``period``. Reads: one a poll, and one more every ``probeEvery`` polls.
public struct PollPhase: Sendable, Equatable {
    /// The next read.
    public enum Plan: Sendable, Equatable {
        /// Read at this time (monotonic seconds): ``lead`` before the open expected.
        case read(at: Double)
        /// Read as soon as the node is seen opened, at `until` at the latest, and time that open
        /// (``opened(at:polls:)``).
        case readAtOpen(until: Double)
    }

    /// Seconds before an expected open that the read happens: the read's samples go through the detector and
    /// the newest reading is written to the uinput device (milliseconds on hardware, tens of them under
    /// emulation), and iio-sensor-proxy's opens come a few milliseconds early or late. At least ``leastLead``
    /// (80 ms covers both, and costs 80 ms of the reading's age), more while the reads' own delay is more
    /// (``delay``): under emulation on a loaded host a read woke and wrote its reading 40 to 150 ms after its
    /// time, and one written after its poll costs that poll.
    public private(set) var lead: Double
    /// The least ``lead``, as asked for.
    public let leastLead: Double
    /// How late the reads' readings were written after their planned time, at most, recently: the largest
    /// seen, less a tenth at each read after it.
    public private(set) var delay = 0.0
    /// The time the last planned read was planned for.
    private var plannedRead: Double?
    /// Whether ``lastOpen`` is such a poll's time, not one timed: the next timed open gives the phase, not the
    /// period.
    private var estimated = false
    /// Planned reads between two waits that time an open.
    public let probeEvery: Int
    /// The time between two of iio-sensor-proxy's opens, as learnt.
    public private(set) var period: Double
    /// The last open timed, nil while the phase is unknown.
    public private(set) var lastOpen: Double?
    /// Whether a poll came before the read made for it since the last timed open: the next read waits for the
    /// open.
    public private(set) var lost = false
    /// Reads planned since the last timed open.
    private var readsSinceOpen = 0
    /// Whether the period was measured (two timed opens), not assumed.
    private var periodMeasured = false
    /// The time of the last planned read (the open's for a read made at an open).
    private var lastRead = -Double.infinity
    /// The end of a wait for an open still outstanding.
    private var waitingUntil: Double?
    /// Whether the last read was made at an open (or at the end of a wait for one): it serves the open after it,
    /// which the next read is planned for too (fresher), where a read planned before an open serves that one.
    private var lastReadAtOpen = false
    /// The open the last planned read was made for, until its read was written.
    private var readFor: Double?
    /// Opens expected between the plan of the read (``readFor``) and the read itself.
    private var expectedBeforeRead = 0
    /// Waits for an open that ended without one, in a row.
    public private(set) var misses = 0

    /// A gap between two timed opens far from ``period``, waiting for a second like it.
    private var candidate: Double?
    /// Waits for an open in a row that end without one before the phase counts as unknown.
    public static let missLimit = 2
    /// The shortest and longest period believed.
    public static let periods = 0.1...5.0
    /// How much of a longer mean interval measured the period takes at once (a shorter one it takes whole).
    public static let lengthening = 0.25
    /// Seconds of the lead beyond the reads' own delay.
    public static let margin = 0.03

    /// - Parameters:
    ///   - period: iio-sensor-proxy's poll interval until one is measured (700 ms).
    public init(period: Double = 0.7, lead: Double = 0.08, probeEvery: Int = 6) {
        self.period = Self.periods.contains(period) ? period : 0.7
        self.lead = min(max(0, lead.isFinite ? lead : 0), self.period / 4)
        leastLead = self.lead
        self.probeEvery = max(1, probeEvery)
    }

    /// The node was seen opened at `time` (monotonic seconds), as it happened: it teaches the phase, and with
    /// the open timed before it the period (a period far from the one believed only from two opens in a row).
    /// A read waiting for an open made the read at `time`.
    /// - Parameter polls: the opens seen since the last timed one, this one included, when they were counted:
    ///   the polls between the two (else guessed from ``period``, which a drift of a poll or more would fool).
    public mutating func opened(at time: Double, polls counted: Int? = nil) {
        guard time.isFinite else { return }
        if waitingUntil != nil {
            waitingUntil = nil
            lastRead = time
        }
        readFor = nil
        if estimated {
            // The last open was placed, not timed: no interval to learn from.
            estimated = false
        } else if let last = lastOpen, time > last {
            let gap = time - last
            if let counted, counted == 1, !periodMeasured, abs(gap - period) > period / 4, Self.periods.contains(gap) {
                // One interval far from the period believed, none measured yet: the open timed first may have been
                // no poll (iio-sensor-proxy reads a device it finds, then polls only from the claim, maybe seconds
                // later). Taken once a second interval agrees; a believable one comes with the next open.
                propose(gap)
            } else if let counted, counted >= 1, counted <= 64, Self.periods.contains(gap / Double(counted)) {
                // The mean interval over the polls counted, late dispatches included (the opens drift by them):
                // a shorter one taken whole, a longer one in part (one late dispatch is no new period); the first
                // measured whole.
                learn(gap / Double(counted))
            } else if counted != nil {
                // Not a believable poll interval: nothing learnt.
            } else if counted == nil, abs(gap / max(1, (gap / period).rounded()) - period) <= period / 4,
                (gap / period).rounded() <= 64, periodMeasured || (gap / period).rounded() <= 1
            {
                learn(gap / max(1, (gap / period).rounded()))
            } else if Self.periods.contains(gap), gap < period * 2 {
                // Another poll interval than believed, or a first open that was no poll (iio-sensor-proxy reads a
                // device it finds): taken once two gaps in a row agree.
                propose(gap)
            }
        }
        lastOpen = max(lastOpen ?? time, time)
        readsSinceOpen = 0
        misses = 0
        lost = false
    }

    /// Opens counted without their time just before a planned read: the opens since it was planned; more than the
    /// polls expected before it means its poll came first. (The opens while it was read and written come with the
    /// next ``plan(now:opens:)``.)
    public mutating func countedBeforeRead(opens: Int) {
        guard opens > 0, readFor != nil else { return }
        if opens > expectedBeforeRead { lost = true }
        expectedBeforeRead = max(0, expectedBeforeRead - opens)
    }

    /// A mean interval measured: the period, shortened at once, lengthened by a part (the first taken whole).
    private mutating func learn(_ measured: Double) {
        if !periodMeasured || measured <= period {
            period = measured
        } else {
            period += (measured - period) * Self.lengthening
        }
        periodMeasured = true
        candidate = nil
    }

    /// An interval that is not the period believed: the period once the interval before agrees with it (within a
    /// tenth), else held as the candidate, the period no longer counted as measured.
    private mutating func propose(_ gap: Double) {
        if let candidate, abs(gap - candidate) <= candidate / 10 {
            period = (gap + candidate) / 2
            periodMeasured = true
            self.candidate = nil
        } else {
            candidate = gap
            periodMeasured = false
        }
    }

    /// The next read, planned at `now` (monotonic seconds), after the last one.
    /// - Parameter opens: the opens counted since the last plan (or the count before the read): after a read
    ///   planned before its poll, any is its poll come before the reading was written.
    public mutating func plan(now: Double, opens: Int = 0) -> Plan {
        let planned = plannedRead
        if let planned, now.isFinite, now >= planned, now - planned < 5 {
            // The last planned read's reading was written by now (the caller plans after writing it): the lead
            // covers that delay and a margin, a quarter of the period at most.
            delay = max(now - planned, delay * 0.9)
        }
        plannedRead = nil
        lead = min(max(leastLead, delay + Self.margin), period / 4)
        // An open while the last planned read was read and written: its poll came within that delay.
        let pollDuringRead = opens > 0 && readFor != nil
        if pollDuringRead { readFor = nil }
        if pollDuringRead, !lost, let planned, lastOpen != nil, now.isFinite, now >= planned, now - planned < period {
            // The poll came after the read's time and before its reading was written: its time is known to within
            // that delay. The phase is placed at the read's time (the poll's earliest), and the next read planned
            // from it, for the poll after (early by the delay at most), rather than at the next open (which would
            // serve only the poll after that).
            lastOpen = planned
            estimated = true
            lastRead = planned
            lastReadAtOpen = true
        } else if pollDuringRead {
            lost = true
        }
        let probe = readFor != nil && readsSinceOpen >= probeEvery && !lost
        let target = readFor
        readFor = nil
        expectedBeforeRead = 0
        if waitingUntil != nil {
            // The last wait for an open ended without one: read at its end.
            waitingUntil = nil
            misses += 1
            if misses >= Self.missLimit { lastOpen = nil }
        }
        guard let last = lastOpen, now.isFinite, now >= last else {
            readsSinceOpen += 1
            return wait(until: now + period)
        }
        readsSinceOpen += 1
        if let target, probe {
            // Time the open the read just made was for, and read again at it (a wake-up more, for the phase; the
            // next read is still planned just before the open after it). Or, if that open came before the read
            // unseen (among the opens expected before it), the next one: any open timed gives the phase.
            return wait(until: max(now, target) + period * 0.9)
        }
        if lost {
            // A poll came before its read: read at the next open, and time it.
            return wait(until: now + period * 1.5)
        }
        if !periodMeasured {
            // Time the open after the one timed: read when it comes, at twice the period believed at the latest.
            return wait(until: max(now + period / 2, last + 2 * period))
        }
        // The expected open after the one the last read served (a read made at an open is planned for again,
        // fresher), and not one whose read time is past.
        let served = lastRead.isFinite ? ((lastRead - last) / period).rounded(.down) + 1 : -Double.infinity
        let next = lastReadAtOpen ? served : served + 1
        let polls = min(max(next, ((now + lead - last) / period).rounded(.down) + 1), 1e6)
        let open = last + polls * period
        lastRead = open - lead
        lastReadAtOpen = false
        readFor = open
        plannedRead = open - lead
        // The opens expected before the read: the last read's, not seen yet, and those between it (or now) and
        // this read's.
        let first =
            target.map { ((($0 - last) / period).rounded()) + 1 } ?? ((now - last) / period).rounded(.down) + 1
        expectedBeforeRead = (target == nil ? 0 : 1) + Int(max(0, min(64, polls - first)))
        return .read(at: open - lead)
    }

    /// The claim ended (nothing reads the relay): the phase is unknown until an open is timed again; the period
    /// learnt stays.
    public mutating func forget() {
        lastOpen = nil
        waitingUntil = nil
        plannedRead = nil
        estimated = false
        readFor = nil
        expectedBeforeRead = 0
        lost = false
        misses = 0
        readsSinceOpen = 0
        lastRead = -Double.infinity
    }

    private mutating func wait(until time: Double) -> Plan {
        waitingUntil = time
        lastRead = time
        lastReadAtOpen = true
        return .readAtOpen(until: time)
    }
}
