// SPDX-License-Identifier: Apache-2.0
import ShakeDaemon
import Testing

/// How long the bus and session services wait between tries after the system bus was lost.
struct BusRetryTests {
    @Test func theWaitDoublesFromHalfASecondUpToHalfAMinute() {
        let waits = (0..<10).map { BusRetry.delay(afterFailures: $0) }
        #expect(
            waits == [
                .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30),
                .seconds(30), .seconds(30), .seconds(30),
            ])
    }

    @Test(arguments: [Int.min, -1, 1_000, Int.max])
    func anyCountOfFailuresGivesAWaitInRange(failures: Int) {
        let wait = BusRetry.delay(afterFailures: failures)
        #expect(wait >= .milliseconds(500) && wait <= .seconds(30))
    }
}
