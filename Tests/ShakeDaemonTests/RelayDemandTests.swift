// SPDX-License-Identifier: Apache-2.0
import ShakeDaemon
import Testing

/// Whether anything reads the relay's input device, from the opens and closes of its node.
struct RelayDemandTests {
    /// iio-sensor-proxy while a client claims the accelerometer: open, read, close every 700 ms, seen once a
    /// second by the capture.
    @Test func readsEvery700MillisecondsKeepItReadAndTheirEndMakesItUnreadAfterTheTimeout() {
        var demand = RelayDemand(createdAt: 10)
        #expect(demand.isRead)
        var changes: [RelayDemand.Change] = []
        for second in 11...20 {
            if let change = demand.observed(
                opens: second % 2 == 0 ? 2 : 1, closes: second % 2 == 0 ? 2 : 1, at: Double(second))
            {
                changes.append(change)
            }
        }
        #expect(changes.isEmpty)
        // Released at 20: nothing more.
        #expect(demand.observed(opens: 0, closes: 0, at: 21) == nil)
        #expect(demand.observed(opens: 0, closes: 0, at: 22) == nil)
        #expect(demand.observed(opens: 0, closes: 0, at: 23) == .unread)
        #expect(!demand.isRead)
        #expect(demand.observed(opens: 0, closes: 0, at: 100) == nil)
        // Claimed again: the first open makes it read.
        #expect(demand.observed(opens: 1, closes: 1, at: 101) == .read)
    }

    /// A device nobody ever opens (iio-sensor-proxy not running, or no client since it found the device) is
    /// unread once the timeout has passed since it was made.
    @Test func aDeviceNeverOpenedIsUnreadAfterTheTimeout() {
        var demand = RelayDemand(createdAt: 0)
        #expect(demand.observed(opens: 0, closes: 0, at: 2.9) == nil)
        #expect(demand.observed(opens: 0, closes: 0, at: RelayDemand.timeout) == .unread)
    }

    /// A reader that keeps the node open (reading its events) keeps it read for as long as it holds it; a close
    /// of an open made before the watch began is not counted below zero.
    @Test func aReaderHoldingTheNodeOpenKeepsItRead() {
        var demand = RelayDemand(createdAt: 0)
        #expect(demand.observed(opens: 0, closes: 1, at: 1) == nil)
        #expect(demand.holders == 0)
        #expect(demand.observed(opens: 1, closes: 0, at: 2) == nil)
        #expect(demand.observed(opens: 0, closes: 0, at: 60) == nil)
        #expect(demand.isRead)
        #expect(demand.observed(opens: 0, closes: 1, at: 61) == .unread)
        #expect(demand.observed(opens: -5, closes: -5, at: 62) == nil)
    }
}
