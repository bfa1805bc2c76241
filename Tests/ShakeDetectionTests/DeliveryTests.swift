import ShakeDetection
import ShakeTestSupport
import Testing

/// Samples as a sensor without timestamps delivers them under load: each stamped when it arrives.
struct DeliveryTests {
    /// Rows that share a timestamp (a driver that stamps a whole buffer at once): a shake delivered four rows to
    /// a timestamp is still found.
    @Test func rowsSharingATimestampAreSpreadOut() {
        let shake = synthesize { $0.seed = 3 }
        let buffered = shake.enumerated().map { index, sample in
            Sample(time: shake[index - index % 4].time, acceleration: sample.acceleration)
        }
        #expect(outline(detect(buffered)) == ["began", "ended"])
    }

    /// Events carry the samples' own times, jitter and all.
    @Test func aSteadyStreamKeepsItsTimestamps() {
        let shake = synthesize {
            $0.seed = 5
            $0.jitter = 0.3
        }
        let times = Set(shake.map(\.time))
        for event in detect(shake) {
            #expect(times.contains(event.time), "\(event) is not at a sample's time")
        }
    }
}
