// SPDX-License-Identifier: Apache-2.0
import IIOModel
import IIOSensor
import Logging
import ShakeDetection
import Testing

@testable import ShakeDaemon

/// What the relay's link hands the relay service from the source's thread.
struct RelayLinkTests {
    /// A read of the sensor while the device turns holds several readings a fifth of a second apart; iio-sensor-
    /// proxy reads the device once a poll, so only the newest matters. Handed over one by one, as they were, each
    /// could wake the relay service's task: up to four wake-ups a read instead of one.
    @Test func aReadsReadingsReachTheServiceAsItsNewestOnly() async {
        let link = RelayLink(
            capture: CaptureSwitch(gate: CaptureGate(printEvents: true, hasSocket: false, alwaysOn: false)),
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        let accelerometer = Accelerometer(id: "iio:device0", name: "accel_3d", location: nil, mountMatrix: .identity)
        link.consume(.capturing(accelerometer, rate: 5))
        // A turn from upright to lying on its left side: every reading moves past the relay's tolerance.
        for step in 0..<4 {
            link.consume(.sample(Sample(time: Double(step) * 0.2, x: Double(step) * 3, y: 9.81, z: 0)))
        }
        link.flush()
        link.consume(.sample(Sample(time: 0.8, x: 9.81, y: 0, z: 0)))
        link.consume(.stopped)
        link.finish()
        var steps: [RelayLink.Step] = []
        for await step in link.steps { steps.append(step) }
        #expect(
            steps == [
                .action(.create(AccelerometerRelay.device(for: accelerometer))),
                .action(.update(x: 235, y: 256, z: 0)), .action(.update(x: 256, y: 0, z: 0)),
            ])
    }
}
