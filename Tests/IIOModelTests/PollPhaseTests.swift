// SPDX-License-Identifier: Apache-2.0
import IIOModel
import Testing

/// When the relay reads while only it reads the sensor: just before iio-sensor-proxy's polls, learnt from the
/// opens of its node that were timed.
struct PollPhaseTests {
    /// The time of a planned read.
    static func time(_ plan: PollPhase.Plan) -> Double? {
        if case .read(let at) = plan { return at }
        return nil
    }

    /// What a run of the capture against iio-sensor-proxy's polls gave.
    struct Run {
        /// For each poll, how old the reading it found was: from the read that made it (the reading is written
        /// `processing` after its read).
        var ages: [Double] = []
        /// For each poll, whether a read was made since the poll before it (else the poll found a reading older
        /// than the poll before it, and a turn read after that poll waits for the next).
        var readSincePrevious: [Bool] = []
        var reads = 0
        /// The waits that ended: one wake-up each.
        var wakeups = 0
        /// The polls, and when the reading each found was read.
        var polls: [Double] = []
        var readings: [Double] = []

        /// The polls that reached a sample later than the second poll after it: for each poll that found a
        /// newer reading than the poll before, a sample just after the read of the one before waited from then
        /// until this poll; past the two poll intervals before it and `slack` (the read's lead and its reading's
        /// write), a poll went by in between that a read made after the sample could have served.
        func thirdPolls(slack: Double) -> [Double] {
            polls.indices.dropFirst(2).filter { index in
                readings[index] > readings[index - 1]
                    && polls[index] - readings[index - 1] > polls[index] - polls[index - 2] + slack + 1e-9
            }.map { polls[$0] }
        }
    }

    /// Runs iio-sensor-proxy's polls at `opens` against the capture as the daemon's shell runs it: a planned read
    /// happens at its time (the opens since the plan counted just before it), its reading written `processing`
    /// later, and the opens meanwhile told with the next plan; a read at an open happens at the open (timed,
    /// with the polls counted since the last timed one); a wait that times an open reads nothing.
    static func simulate(
        _ phase: inout PollPhase, opens: [Double], from start: Double, processing: Double = 0.01
    ) -> Run {
        var run = Run()
        var now = start
        var drained = start
        var untold = 0
        var sinceTimed = 0
        var reads: [(read: Double, written: Double)] = [(start, start)]
        func drain(until time: Double) -> Int {
            let count = opens.filter { $0 > drained && $0 <= time }.count
            drained = max(drained, time)
            sinceTimed += count
            return count
        }
        while let last = opens.last, now < last {
            untold += drain(until: now)
            let plan = phase.plan(now: now, opens: untold)
            untold = 0
            run.wakeups += 1
            switch plan {
            case .read(let at):
                let time = max(at, now)
                phase.countedBeforeRead(opens: drain(until: time))
                reads.append((time, time + processing))
                now = time + processing
            case .readAtOpen(let until):
                var time = max(until, now)
                if let open = opens.first(where: { $0 > drained }), open <= until {
                    time = open
                    _ = drain(until: open)
                    phase.opened(at: open, polls: phase.lastOpen == nil ? nil : sinceTimed)
                    sinceTimed = 0
                }
                reads.append((time, time + processing))
                now = time + processing
            }
        }
        run.reads = reads.count - 1
        var previous = -Double.infinity
        for open in opens {
            let found = reads.last { $0.written < open } ?? reads[0]
            run.polls.append(open)
            run.readings.append(found.read)
            run.ages.append(open - found.read)
            // (a read at an open comes after it)
            run.readSincePrevious.append(found.read >= previous)
            previous = open
        }
        return run
    }

    /// The claim's open timed, the next one timed to learn the period, then every read 80 ms before a poll; one
    /// read in `probeEvery` is followed by a wait that times its poll and reads nothing: every poll after the
    /// first few finds a reading 80 ms old (a probe that read at the open left one poll in five a reading 0.7 s
    /// old), for a read a poll and a wake-up more every `probeEvery` polls.
    @Test func everyPollFindsAReadingMadeJustBeforeIt() {
        var phase = PollPhase()
        phase.opened(at: 10)
        let opens = (1...48).map { 10 + Double($0) * 0.7 }
        let run = Self.simulate(&phase, opens: opens, from: 10.3)
        #expect(run.reads <= opens.count + opens.count / phase.probeEvery + 2)
        #expect(run.wakeups <= opens.count + opens.count / phase.probeEvery + 2)
        #expect(run.ages.dropFirst(3).allSatisfy { abs($0 - 0.08) < 1e-6 })
        #expect(run.ages.allSatisfy { $0 <= 0.7 + 0.08 + 1e-6 })
        #expect(abs(phase.period - 0.7) < 1e-9)
    }

    /// iio-sensor-proxy's polls on a loaded host, as the VM saw them (0.50 to 1.27 s apart: GLib sets each
    /// timeout from its late dispatch, so a late poll moves the ones after it, and an early one follows a
    /// late dispatch): every poll must find a reading made after the poll before it, else a turn read just
    /// after a poll waits two more. Taking a window's mean interval whole as the period after one late poll
    /// spaced the reads further apart than the polls that followed, each later than the one before, until a
    /// poll had no read since the last (the turn that took three polls, 2.09 s after its end).
    @Test func everyIntervalBetweenPollsHoldsAReadUnderLoad() {
        let intervals = [
            0.72, 0.75, 0.71, 1.27, 0.70, 0.73, 0.71, 0.74, 0.50, 0.92, 0.71, 0.72, 0.70, 1.05, 0.71, 0.70, 0.74,
            0.72, 0.71, 0.88, 0.70, 0.71, 0.73, 0.70, 0.60, 0.83, 0.71, 0.70, 0.72, 1.14, 0.70, 0.71, 0.70, 0.72,
        ]
        var opens = [20.0]
        for interval in intervals + intervals { opens.append(opens[opens.count - 1] + interval) }
        var phase = PollPhase()
        phase.opened(at: 20)
        let run = Self.simulate(&phase, opens: Array(opens.dropFirst()), from: 20.3, processing: 0.03)
        let late = run.thirdPolls(slack: 0.7 / 4 + 0.03).filter { $0 > opens[3] }
        #expect(late.isEmpty, "polls that reached a sample past the second after it: \(late)")
        #expect(run.wakeups <= opens.count * 3 / 2)
        // Half the polls still find a reading under 0.25 s old (a read at an unrelated phase: a third of them).
        let fresh = run.ages.dropFirst(3).filter { $0 < 0.25 }.count
        #expect(fresh * 2 >= run.ages.count - 3)
    }

    /// Reads whose readings are written 130 ms after their time (the VM on a loaded host: a read woke late, and
    /// its samples took their time through the detector), more than the 80 ms lead: each was written after its
    /// poll, which found the reading of the poll before. The lead follows the delay seen, and the polls find
    /// readings made just before them again.
    @Test func theLeadCoversTheReadsOwnDelay() {
        var phase = PollPhase()
        phase.opened(at: 0)
        let opens = (1...40).map { Double($0) * 0.7 }
        let run = Self.simulate(&phase, opens: opens, from: 0.3, processing: 0.13)
        #expect(phase.lead >= 0.13 && phase.lead <= 0.7 / 4)
        let fresh = run.ages.dropFirst(5).filter { $0 <= phase.lead + 1e-6 }.count
        #expect(fresh * 10 >= (run.ages.count - 5) * 8, "fresh: \(fresh) of \(run.ages.count - 5)")
        #expect(run.thirdPolls(slack: 0.7 / 4 + 0.13).isEmpty)
        #expect(run.wakeups <= opens.count + opens.count / phase.probeEvery + 4)
    }

    /// A read whose reading is written after its poll (the poll early, the read or its processing late): seen
    /// from the opens counted, without a wake-up. An open while the read was read and written places the poll
    /// between the two, and the next read is planned from it for the next poll (not at the next open, which
    /// would serve only the poll after it); an open before the read, beyond those expected, is a poll at a time
    /// not known: the next read waits for the open and happens at it (timing it).
    @Test func aPollBeforeItsReadingIsSeenAndTheNextReadComesBeforeTheNext() {
        var phase = PollPhase()
        phase.opened(at: 0)
        _ = phase.plan(now: 0.01)
        phase.opened(at: 0.7, polls: 1)
        guard case .read(let at) = phase.plan(now: 0.71) else {
            Issue.record("a planned read expected")
            return
        }
        #expect(abs(at - (1.4 - 0.08)) < 1e-9)
        // No open before the read, as expected. The poll of 1.4 came 0.04 s early, while the reading was being
        // written (0.05 s after the read's time).
        phase.countedBeforeRead(opens: 0)
        guard case .read(let next) = phase.plan(now: 1.37, opens: 1) else {
            Issue.record("a planned read expected")
            return
        }
        #expect(!phase.lost)
        #expect(abs(next - (1.32 + 0.7 - phase.lead)) < 1e-9)
        // An open counted before that read, where none was expected: its poll came first, when is not known.
        phase.countedBeforeRead(opens: 1)
        #expect(phase.lost)
        #expect(phase.plan(now: 1.99) == .readAtOpen(until: 1.99 + 0.7 * 1.5))
        phase.opened(at: 2.66, polls: 2)
        #expect(!phase.lost)
        // The next read is planned for the next poll (a read at an open serves it, but older).
        guard case .read(let after) = phase.plan(now: 2.67) else {
            Issue.record("a planned read expected")
            return
        }
        #expect(abs(after - (2.66 + phase.period - phase.lead)) < 1e-9)
    }

    /// A reading at an unrelated phase is up to a whole period old at the poll; with the phase unknown (no open
    /// timed), a read waits for the open: never more reads than polls.
    @Test func withoutATimedOpenAReadWaitsForTheOpenAtMostAPeriod() {
        var phase = PollPhase()
        #expect(phase.plan(now: 5) == .readAtOpen(until: 5.7))
        phase.opened(at: 5.2)
        #expect(phase.lastOpen == 5.2)
    }

    /// Opens a few milliseconds early or late move the period learnt a little, and the reads stay before the
    /// polls.
    @Test func jitterMovesThePeriodLittle() {
        var phase = PollPhase()
        let jitter = [0.0, 0.004, -0.003, 0.006, -0.005, 0.002, 0.0, -0.004]
        for (index, offset) in jitter.enumerated() { phase.opened(at: 100 + Double(index) * 0.7 + offset) }
        #expect(abs(phase.period - 0.7) < 0.01)
        guard case .read(let at) = phase.plan(now: 100 + 7 * 0.7 + 0.01) else {
            Issue.record("a planned read expected")
            return
        }
        #expect(abs(at - (100 + 8 * 0.7 - 0.08)) < 0.01)
    }

    /// iio-sensor-proxy at another poll interval (here 1 s, then 1.2 s): two gaps in a row that agree teach it
    /// (a single one may be from an open that was no poll).
    @Test func aPollPeriodOtherThan700msIsLearnt() {
        var phase = PollPhase()
        phase.opened(at: 20)
        #expect(phase.plan(now: 20.3) == .readAtOpen(until: 21.4))
        phase.opened(at: 21)
        #expect(phase.plan(now: 21.01) == .readAtOpen(until: 22.4))
        phase.opened(at: 22)
        #expect(phase.period == 1)
        // The next reads 80 ms before 23 and 24.
        #expect(Self.time(phase.plan(now: 22.01)).map { abs($0 - 22.92) < 1e-9 } == true)
        #expect(Self.time(phase.plan(now: 22.93)).map { abs($0 - 23.92) < 1e-9 } == true)
        var slow = PollPhase()
        for open in [0, 1.2, 2.4] {
            slow.opened(at: open)
            _ = slow.plan(now: open + 0.01)
        }
        #expect(abs(slow.period - 1.2) < 1e-9)
    }

    /// Polls that come late (GLib sets each timeout from its dispatch): the period learnt follows their mean
    /// (lengthened a part at a time), so the reads do not slide early against opens that drift later.
    @Test func latePollsTeachTheirMeanInterval() {
        var phase = PollPhase()
        var open = 0.0
        let intervals = [0.72, 0.81, 0.7, 0.93, 0.75, 0.78, 0.74, 0.8, 0.72, 0.76, 0.79, 0.7, 0.82, 0.74, 0.77, 0.75]
        var opens: [Double] = [0]
        for interval in intervals + intervals + intervals {
            open += interval
            opens.append(open)
        }
        phase.opened(at: 0)
        let run = Self.simulate(&phase, opens: Array(opens.dropFirst()), from: 0.3)
        #expect(run.reads <= opens.count + opens.count / phase.probeEvery + 3)
        #expect(abs(phase.period - 0.76) < 0.04)
        // After the first polls, at least half find a reading under a third of a period old (a read at an
        // unrelated phase: a third of them), and each a reading made since the poll before it.
        let late = run.ages.dropFirst(6)
        #expect(late.filter { $0 < 0.25 }.count * 2 >= late.count)
        #expect(run.thirdPolls(slack: 0.7 / 4 + 0.01).filter { $0 > opens[3] }.isEmpty)
    }

    /// An open that does not come by the end of the wait: the read happens then, the phase is kept (the next
    /// read planned on it); a second in a row and the phase counts as unknown (reads wait for the opens again).
    @Test func aMissedOpenKeepsThePhaseTwoInARowForgetIt() {
        var phase = PollPhase()
        phase.opened(at: 0)
        _ = phase.plan(now: 0.1)
        phase.opened(at: 0.7)
        #expect(Self.time(phase.plan(now: 0.71)).map { abs($0 - 1.32) < 1e-9 } == true)
        // Reads until the wait that times an open.
        var now = 1.33
        var plan = phase.plan(now: now)
        while case .read(let at) = plan {
            now = at + 0.01
            plan = phase.plan(now: now)
        }
        guard case .readAtOpen(let until) = plan else { return }
        // No open by then: the read at the wait's end; the phase is kept, the next read planned on it.
        let next = phase.plan(now: until + 0.01)
        #expect(phase.misses == 1)
        #expect(phase.lastOpen == 0.7)
        guard case .read(let at) = next else {
            Issue.record("a planned read expected after one missed open, got \(next)")
            return
        }
        let phaseOfOpen = (at + 0.08 - 0.7).truncatingRemainder(dividingBy: 0.7)
        #expect(abs(phaseOfOpen) < 1e-6 || abs(phaseOfOpen - 0.7) < 1e-6)
        #expect(at > until)
        // The open after it timed again, and missed again: the phase is unknown, a read waits for the open at
        // most a period.
        guard case .readAtOpen(let end) = phase.plan(now: at + 0.01) else {
            Issue.record("a wait for the open expected")
            return
        }
        #expect(phase.plan(now: end + 0.01) == .readAtOpen(until: end + 0.01 + 0.7))
        #expect(phase.lastOpen == nil)
        #expect(phase.misses == 2)
    }

    /// The claim ended (nothing read the relay for 3 s): the phase is forgotten, the period kept; the next
    /// claim's open gives the phase again, the reads planned at once.
    @Test func theClaimEndingForgetsThePhaseNotThePeriod() {
        var phase = PollPhase()
        phase.opened(at: 0)
        _ = phase.plan(now: 0.1)
        phase.opened(at: 1, polls: 1)
        // (one interval far from the 700 ms believed is taken once a second agrees)
        _ = phase.plan(now: 1.1)
        phase.opened(at: 2, polls: 1)
        #expect(phase.period == 1)
        phase.forget()
        #expect(phase.lastOpen == nil)
        #expect(phase.plan(now: 50) == .readAtOpen(until: 51))
        phase.forget()
        phase.opened(at: 60.05)
        #expect(Self.time(phase.plan(now: 60.3)).map { abs($0 - 60.97) < 1e-9 } == true)
    }

    /// iio-sensor-proxy reads a device it finds once, then polls it only from a client's claim: with the relay
    /// read all along (the sensor never off), the first open timed was that read, and the claim's first poll came
    /// 1.57 s later, one open counted. Taken for the period, it spaced the reads 1.57 s apart until a timed open
    /// four reads later corrected it: the first turn after the claim reached monitor-sensor 1.80 s after its end
    /// in the VM. A single interval far from the period believed is not taken; the next poll's is.
    @Test func aFirstOpenThatWasNoPollDoesNotTeachThePeriod() {
        var phase = PollPhase()
        _ = phase.plan(now: 48.0)
        phase.opened(at: 48.405)
        _ = phase.plan(now: 48.41)
        _ = phase.plan(now: 49.81)
        phase.opened(at: 49.977, polls: 1)
        #expect(abs(phase.period - 0.7) < 1e-9)
        #expect(phase.plan(now: 49.98) == .readAtOpen(until: 49.977 + 1.4))
        phase.opened(at: 50.669, polls: 1)
        #expect(abs(phase.period - 0.692) < 1e-6)
        guard case .read(let at) = phase.plan(now: 50.68) else {
            Issue.record("a planned read expected")
            return
        }
        #expect(abs(at - (50.669 + 0.692 - 0.08)) < 1e-6)
    }

    /// Nonsense in: no trap, a period and lead in bounds.
    @Test func badValuesAreBounded() {
        var phase = PollPhase(period: .nan, lead: .infinity, probeEvery: -3)
        #expect(phase.period == 0.7)
        #expect(phase.lead <= 0.7 / 4)
        phase.opened(at: .nan)
        phase.opened(at: 1)
        phase.opened(at: 1e300)
        _ = phase.plan(now: .infinity)
        _ = phase.plan(now: -.infinity)
        _ = phase.plan(now: .nan)
    }
}
