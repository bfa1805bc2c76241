// SPDX-License-Identifier: Apache-2.0
import IIOModel
import Testing

/// A failure that comes back at every try (a still HID sensor read through iiod: each read times out at 2 s and
/// the capture connects again) is said once when it begins, reminded at most once an interval with a count, and
/// said once when data comes back.
struct RepeatedFailureTests {
    static let timedOut = "reading the buffer of iio:device0: Connection timed out (errno 110)"

    @Test func aFailureThatComesBackIsSaidOnceThenRemindedOnceAnIntervalThenEnded() {
        var failures = RepeatedFailure(interval: 600)
        // Every 3 s for 30 minutes: a read that times out at 2 s, 1 s before the next try.
        var notices: [(Double, RepeatedFailure.Notice)] = []
        for attempt in 0..<600 {
            let now = 100 + Double(attempt) * 3
            notices.append((now, failures.failed(Self.timedOut, now: now)))
        }
        #expect(notices[0].1 == .began)
        let logged = notices.filter { $0.1 != .again }
        #expect(
            logged.map(\.1) == [
                .began, .reminder(failures: 201, seconds: 600), .reminder(failures: 401, seconds: 1200),
            ])
        #expect(failures.isRepeating)
        #expect(failures.recovered(now: 1900) == RepeatedFailure.Ended(failures: 600, seconds: 1800))
        // Over: the next failure is news again.
        #expect(!failures.isRepeating)
        #expect(failures.failed(Self.timedOut, now: 1910) == .began)
    }

    @Test func aSingleFailureIsRepeatingNothingAndItsEndNeedsNoLine() {
        var failures = RepeatedFailure(interval: 600)
        #expect(failures.recovered(now: 1) == nil)
        #expect(failures.failed(Self.timedOut, now: 5) == .began)
        #expect(!failures.isRepeating)
        #expect(failures.recovered(now: 6) == nil)
    }

    @Test func aFailureOfAnotherKindIsNewsAtOnce() {
        var failures = RepeatedFailure(interval: 600)
        #expect(failures.failed(Self.timedOut, now: 0) == .began)
        #expect(failures.failed(Self.timedOut, now: 3) == .again)
        #expect(failures.isRepeating)
        let closed = "reading the buffer of iio:device0: Broken pipe (errno 32)"
        #expect(failures.failed(closed, now: 6) == .began)
        #expect(!failures.isRepeating)
        #expect(failures.failed(closed, now: 9) == .again)
        #expect(failures.recovered(now: 10) == RepeatedFailure.Ended(failures: 2, seconds: 4))
    }
}
