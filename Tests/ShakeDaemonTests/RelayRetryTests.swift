// SPDX-License-Identifier: Apache-2.0
import IIOModel
import ShakeDaemon
import Testing

/// When the relay tries again to make its uinput accelerometer after it could not (no /dev/uinput yet, or no right
/// to it yet), without a device.
struct RelayRetryTests {
    static let device = AccelerometerRelay.device(for: Accelerometer(id: "iio:device0", name: "accel_3d"))
    static let other = AccelerometerRelay.device(for: Accelerometer(id: "iio:device1", name: "other"))

    @Test func aDeviceThatCannotBeMadeIsTriedAgainLessAndLessOftenUntilItIs() {
        var retry = RelayRetry()
        retry.create(Self.device)
        var waits: [Duration] = []
        var firsts: [Bool] = []
        for _ in 0..<7 {
            guard case .retry(let wait, let generation, let first) = retry.tried(succeeded: false) else {
                Issue.record("no retry")
                return
            }
            waits.append(wait)
            firsts.append(first)
            #expect(retry.due(generation: generation) == Self.device)
        }
        #expect(
            waits == [
                .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(10), .seconds(10),
            ])
        // Only the first failure takes the relay off as a reader of the sensor.
        #expect(firsts == [true, false, false, false, false, false, false])
        #expect(retry.tried(succeeded: true) == .recovered(failures: 7))
        // Made: a try still scheduled is stale.
        #expect(retry.due(generation: retry.generation) == nil)
    }

    @Test func aTryScheduledForADeviceNoLongerWantedIsDropped() {
        var retry = RelayRetry()
        retry.create(Self.device)
        #expect(retry.tried(succeeded: true) == .made)
        retry.create(Self.device)
        guard case .retry(_, let generation, _) = retry.tried(succeeded: false) else {
            Issue.record("no retry")
            return
        }
        // The sensor went: nothing to make.
        retry.destroy()
        #expect(retry.due(generation: generation) == nil)
        #expect(retry.wanted == nil)
        // Another sensor: its own device, with its own tries; the old try stays stale.
        retry.create(Self.other)
        guard case .retry(let wait, let next, let first) = retry.tried(succeeded: false) else {
            Issue.record("no retry")
            return
        }
        #expect(wait == .milliseconds(500) && first)
        #expect(retry.due(generation: generation) == nil)
        #expect(retry.due(generation: next) == Self.other)
    }
}
