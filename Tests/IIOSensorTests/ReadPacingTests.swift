// SPDX-License-Identifier: Apache-2.0
import IIOModel
import Testing

/// How long buffered capture sleeps between reads, and how many scans a read takes.
struct ReadPacingTests {
    let pacing = ReadPacing()

    /// The relay alone: one read per read of iio-sensor-proxy's (every 700 ms), so that what it reads is never
    /// more than one of its reads old (a read a second let a turn reach it up to 1.7 s late).
    @Test func aStillDeviceIsReadFiveTimesASecondAMotionInShortStepsTheRelayAsOftenAsIioSensorProxyReadsIt() {
        #expect(pacing.interval(.still, rate: 100) == 0.2)
        #expect(pacing.interval(.moving, rate: 100) == 0.03)
        #expect(pacing.interval(.relay, rate: 5) == 0.7)
        // The detector's state picks the step; the relay alone reads long whatever the detector says.
        #expect(ReadPacing.mode(relayOnly: false, motionUnderWay: false) == .still)
        #expect(ReadPacing.mode(relayOnly: false, motionUnderWay: true) == .moving)
        #expect(ReadPacing.mode(relayOnly: true, motionUnderWay: true) == .relay)
    }

    /// A read sooner than the next scan would find nothing and wait on the buffer, which wakes at every scan.
    @Test func noIntervalIsShorterThanOneScan() {
        #expect(pacing.interval(.moving, rate: 25) == 0.04)
        #expect(pacing.interval(.still, rate: 2) == 0.5)
        #expect(pacing.interval(.moving, rate: 0) == 0.03)
        #expect(pacing.interval(.moving, rate: .nan) == 0.03)
    }

    /// The watermark and a read's size: the long interval's worth, so that a short step takes what is there
    /// and a long one everything since the last read.
    @Test func aReadTakesTheLongIntervalsWorthOfScans() {
        #expect(pacing.scansPerRead(rate: 100, relayOnly: false) == 20)
        #expect(pacing.scansPerRead(rate: 5, relayOnly: true) == 4)
        #expect(pacing.scansPerRead(rate: 12.5, relayOnly: true) == 9)
        #expect(pacing.scansPerRead(rate: 1, relayOnly: false) == 1)
        #expect(pacing.scansPerRead(rate: 0, relayOnly: false) == 1)
        #expect(pacing.scansPerRead(rate: .infinity, relayOnly: false) == 1)
        #expect(pacing.scansPerRead(rate: 1e300, relayOnly: true) == 1_000_000)
    }
}
