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

    /// Runs iio-sensor-proxy's polls at `opens`, the capture reading as planned (a read that waits for an open
    /// happens at it, after the poll, and times it): the age of the reading each poll found, and the reads.
    static func run(_ phase: inout PollPhase, opens: [Double], from start: Double) -> (ages: [Double], reads: Int) {
        var now = start
        var lastRead = start
        var reads = 0
        var ages: [Double] = []
        var index = 0
        var sinceTimed = 0
        while index < opens.count {
            let plan = phase.plan(now: now)
            let upcoming = opens[index]
            var time: Double
            var atOpen = false
            switch plan {
            case .read(let at):
                time = at
            case .readAtOpen(let until):
                time = until
                if upcoming <= until {
                    time = upcoming
                    atOpen = true
                    phase.opened(at: upcoming, polls: sinceTimed + 1)
                    sinceTimed = -1
                }
            }
            while index < opens.count, opens[index] < time || (atOpen && opens[index] == time) {
                ages.append(opens[index] - lastRead)
                index += 1
                sinceTimed += 1
            }
            lastRead = time
            reads += 1
            now = time + 0.001
        }
        return (ages, reads)
    }

    /// The claim's open timed, the next one timed to learn the period, then every read 80 ms before a poll
    /// (but one in `probeEvery`, which waits for the open): as many reads as polls.
    @Test func theReadsComeJustBeforeThePollsLearntFromTheTimedOpens() {
        var phase = PollPhase()
        phase.opened(at: 10)
        let opens = (1...48).map { 10 + Double($0) * 0.7 }
        let (ages, reads) = Self.run(&phase, opens: opens, from: 10.3)
        #expect(reads <= opens.count + 1)
        // After the first polls, all but the polls served by a read at an open find a reading 80 ms old.
        let fresh = ages.dropFirst(3).filter { abs($0 - 0.08) < 1e-6 }.count
        #expect(fresh >= ages.count - 3 - 48 / 4 - 1)
        #expect(ages.allSatisfy { $0 <= 0.7 + 0.08 + 1e-6 })
        #expect(abs(phase.period - 0.7) < 1e-9)
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
        #expect(abs(phase.period - 0.7) < 0.005)
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
        // The poll at 23 is served by the read at the open of 22; the next read is 80 ms before 24.
        #expect(Self.time(phase.plan(now: 22.01)).map { abs($0 - 23.92) < 1e-9 } == true)
        #expect(Self.time(phase.plan(now: 23.93)).map { abs($0 - 24.92) < 1e-9 } == true)
        var slow = PollPhase()
        for open in [0, 1.2, 2.4] {
            slow.opened(at: open)
            _ = slow.plan(now: open + 0.01)
        }
        #expect(abs(slow.period - 1.2) < 1e-9)
    }

    /// Polls that come late (GLib sets each timeout from its dispatch): the period learnt is their mean, so
    /// the reads do not slide early against opens that drift later.
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
        let (ages, reads) = Self.run(&phase, opens: Array(opens.dropFirst()), from: 0.3)
        #expect(reads <= opens.count)
        #expect(abs(phase.period - 0.76) < 0.04)
        // After the first polls, at least half find a reading under a third of a period old (a read at an
        // unrelated phase: a third of them).
        let late = ages.dropFirst(6)
        #expect(late.filter { $0 < 0.25 }.count * 2 >= late.count)
    }

    /// An open that does not come by the end of the wait: the read happens then, the phase is kept; a second
    /// in a row and the phase counts as unknown (reads wait for the opens again).
    @Test func aMissedOpenKeepsThePhaseTwoInARowForgetIt() {
        var phase = PollPhase()
        phase.opened(at: 0)
        _ = phase.plan(now: 0.1)
        phase.opened(at: 0.7)
        #expect(Self.time(phase.plan(now: 0.71)).map { abs($0 - 2.02) < 1e-9 } == true)
        // Reads until the next wait for an open.
        var now = 2.03
        var plan = phase.plan(now: now)
        while case .read(let at) = plan {
            now = at + 0.01
            plan = phase.plan(now: now)
        }
        guard case .readAtOpen(let until) = plan else { return }
        // No open by then: the read at the wait's end; the phase is kept, and the next read waits for the open
        // expected from it.
        let next = phase.plan(now: until + 0.01)
        #expect(phase.misses == 1)
        #expect(phase.lastOpen == 0.7)
        guard case .readAtOpen(let end) = next else {
            Issue.record("a wait for the open expected after one missed open, got \(next)")
            return
        }
        let expected = end - 0.35
        let phaseOfOpen = (expected - 0.7).truncatingRemainder(dividingBy: 0.7)
        #expect(abs(phaseOfOpen) < 1e-6 || abs(phaseOfOpen - 0.7) < 1e-6)
        #expect(expected > until)
        // Missing again: the phase is unknown, a read waits for the open at most a period.
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
        #expect(abs(at - (50.669 + 2 * 0.692 - 0.08)) < 1e-6)
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
