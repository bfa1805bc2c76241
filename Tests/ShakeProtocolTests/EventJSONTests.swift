// SPDX-License-Identifier: Apache-2.0
import ShakeDetection
import ShakeProtocol
import Testing

/// The event objects, as `detect` prints them and the socket will carry them.
struct EventJSONTests {
    @Test func began() {
        #expect(ShakeEvent.began(time: 2.31).json == #"{"event":"shake","phase":"began","time":2.31}"#)
    }

    @Test func ended() {
        let summary = ShakeSummary(time: 3.02, began: 2.31, peak: 24.5, axis: .x, reversals: 7)
        #expect(
            ShakeEvent.ended(summary).json
                == #"{"event":"shake","phase":"ended","time":3.02,"began":2.31,"duration":0.71,"peak":24.5,"axis":"x","reversals":7}"#
        )
    }

    @Test func cancelled() {
        let event = ShakeEvent.cancelled(time: 7.4, began: 2.31, reason: .tooLong)
        #expect(event.json == #"{"event":"shake","phase":"cancelled","time":7.4,"began":2.31,"reason":"too_long"}"#)
    }

    @Test func numbersAreRoundedAndNonFiniteBecomesNull() {
        #expect(JSONObjectWriter.format(2.3100000000000005, decimals: 3) == "2.31")
        #expect(JSONObjectWriter.format(7, decimals: 3) == "7")
        #expect(JSONObjectWriter.format(-0.0004, decimals: 3) == "0")
        #expect(JSONObjectWriter.format(.nan, decimals: 3) == "null")
        #expect(JSONObjectWriter.format(-.infinity, decimals: 3) == "null")
    }

    @Test func stringsAreEscaped() {
        var writer = JSONObjectWriter()
        writer.add("source", "a \"b\"\\c\n\u{1}")
        #expect(writer.result == #"{"source":"a \"b\"\\c\n\u0001"}"#)
    }
}
