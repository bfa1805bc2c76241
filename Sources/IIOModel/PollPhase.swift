// SPDX-License-Identifier: Apache-2.0
/// When the relay reads the sensor while only it reads it: just before iio-sensor-proxy's next poll, decided
/// without a clock or a file (the caller passes the time and the opens of the relay's node it timed).
///
/// iio-sensor-proxy opens the relay's evdev node, reads it and closes it every 700 ms (a GLib timeout) while a
/// client claims the accelerometer. A read every 0.7 s at an unrelated phase hands it a value up to 0.7 s old;
/// a read ``lead`` before each of its opens hands it one ``lead`` old, for the same one read a poll. The phase
/// comes from opens whose time is known: the open that woke the capture from its wait while the sensor was
/// off (the claim), and, every ``probeEvery`` reads, a read that waits for the open and happens as it is seen
/// (a wait that the read would have cost anyway: the open is seen without a wake-up of its own). That read
/// comes just after a poll, so it serves the next one, ``period`` old, and the poll after that is read for
/// as usual: one poll in ``probeEvery`` takes an older value, and reads stay one a poll. The period is learnt
/// from the timed opens, as the mean interval between them: GLib sets each timeout from its late dispatch,
/// so the opens drift later by every delay (700 ms polls came up to 0.93 s apart under emulation), and a
/// period of 700 ms would let the reads slide a whole poll early within seconds; the timed opens every
/// ``probeEvery`` reads bound that drift. A poll interval other than 700 ms is followed (from two gaps in a
/// row that agree), a late or missed open costs one poll's freshness, and without a phase (none timed yet, or the opens stopped coming) a read waits for the
/// open, at most one ``period``: as often as before, never more.
public struct PollPhase: Sendable, Equatable {
    /// The next read.
    public enum Plan: Sendable, Equatable {
        /// Read at this time (monotonic seconds): ``lead`` before the open expected.
        case read(at: Double)
        /// Read as soon as the node is seen opened, at `until` at the latest, and time that open
        /// (``opened(at:)``).
        case readAtOpen(until: Double)
    }

    /// Seconds before an expected open that the read happens: the read's samples go through the detector to
    /// the relay service's task, which writes them to the uinput device (milliseconds on hardware, tens of them
    /// under emulation), and iio-sensor-proxy's opens come a few milliseconds early or late. 80 ms covers both
    /// and costs 80 ms of the reading's age.
    public let lead: Double
    /// Planned reads between two reads that wait for the open (and time it).
    public let probeEvery: Int
    /// The time between two of iio-sensor-proxy's opens, as learnt.
    public private(set) var period: Double
    /// The last open timed, nil while the phase is unknown.
    public private(set) var lastOpen: Double?
    /// Reads planned since the last timed open.
    private var readsSinceOpen = 0
    /// Whether the period was measured (two timed opens), not assumed.
    private var periodMeasured = false
    /// The time of the last planned read (the open's for a read made at an open).
    private var lastRead = -Double.infinity
    /// The end of the wait of a `readAtOpen` still outstanding.
    private var waitingUntil: Double?
    /// Waits for an open that ended without one, in a row.
    public private(set) var misses = 0

    /// A gap between two timed opens far from ``period``, waiting for a second like it.
    private var candidate: Double?
    /// Waits for an open in a row that end without one before the phase counts as unknown.
    public static let missLimit = 2
    /// The shortest and longest period believed.
    public static let periods = 0.1...5.0

    /// - Parameters:
    ///   - period: iio-sensor-proxy's poll interval until one is measured (700 ms).
    public init(period: Double = 0.7, lead: Double = 0.08, probeEvery: Int = 4) {
        self.period = Self.periods.contains(period) ? period : 0.7
        self.lead = min(max(0, lead.isFinite ? lead : 0), self.period / 4)
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
        if let last = lastOpen, time > last {
            let gap = time - last
            if let counted, counted == 1, !periodMeasured, abs(gap - period) > period / 4, Self.periods.contains(gap) {
                // One interval far from the period believed, none measured yet: the open timed first may have been
                // no poll (iio-sensor-proxy reads a device it finds, then polls only from the claim, maybe seconds
                // later). Taken once a second interval agrees; a believable one comes with the next open.
                propose(gap)
            } else if let counted, counted >= 1, counted <= 64, Self.periods.contains(gap / Double(counted)) {
                // The mean interval over the polls counted, late dispatches included (the opens drift by them);
                // one interval, jittery, halfway once a period is known.
                let measured = gap / Double(counted)
                period += (measured - period) * (counted >= 2 || !periodMeasured ? 1 : 0.5)
                periodMeasured = true
                candidate = nil
            } else if counted != nil {
                // Not a believable poll interval: nothing learnt.
            } else if counted == nil, abs(gap / max(1, (gap / period).rounded()) - period) <= period / 4,
                (gap / period).rounded() <= 64, periodMeasured || (gap / period).rounded() <= 1
            {
                // Over several polls the mean interval: taken; one interval, jittery: halfway.
                let polls = max(1, (gap / period).rounded())
                period += (gap / polls - period) * (polls >= 2 ? 1 : 0.5)
                periodMeasured = true
                candidate = nil
            } else if Self.periods.contains(gap), gap < period * 2 {
                // Another poll interval than believed, or a first open that was no poll (iio-sensor-proxy reads a
                // device it finds): taken once two gaps in a row agree.
                propose(gap)
            }
        }
        lastOpen = max(lastOpen ?? time, time)
        readsSinceOpen = 0
        misses = 0
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
    public mutating func plan(now: Double) -> Plan {
        if waitingUntil != nil {
            // The last wait for an open ended without one: read at its end.
            waitingUntil = nil
            misses += 1
            if misses >= Self.missLimit { lastOpen = nil }
        }
        readsSinceOpen += 1
        guard let last = lastOpen, now.isFinite, now >= last else {
            return wait(until: now + period)
        }
        // The first expected open whose read comes about a period after the last read (the open just after
        // a read made at an open is served by that read).
        let earliest = max(now, lastRead + period - lead / 2)
        let polls = ((earliest + lead - last) / period).rounded(.down) + 1
        let open = last + polls * period
        if !periodMeasured {
            // Time the open after the one timed: read when it comes, at twice the period believed at the latest.
            return wait(until: max(now + period / 2, last + 2 * period))
        }
        if readsSinceOpen > probeEvery {
            // Time the next open: read when it comes, half a period after it is expected at the latest.
            let next = last + (((now - last) / period).rounded(.down) + 1) * period
            return wait(until: next + period / 2)
        }
        lastRead = open - lead
        return .read(at: open - lead)
    }

    /// The claim ended (nothing reads the relay): the phase is unknown until an open is timed again; the period
    /// learnt stays.
    public mutating func forget() {
        lastOpen = nil
        waitingUntil = nil
        misses = 0
        readsSinceOpen = 0
        lastRead = -Double.infinity
    }

    private mutating func wait(until time: Double) -> Plan {
        waitingUntil = time
        lastRead = time
        return .readAtOpen(until: time)
    }
}
