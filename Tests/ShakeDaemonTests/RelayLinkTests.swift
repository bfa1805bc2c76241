// SPDX-License-Identifier: Apache-2.0
import IIOModel
import IIOSensor
import Logging
import ShakeDetection
import Testing
import UInput

@testable import ShakeDaemon

/// What the relay's link hands the relay service from the source's thread, and what it writes to the device.
struct RelayLinkTests {
    static func link() -> RelayLink {
        RelayLink(
            capture: CaptureSwitch(gate: CaptureGate(printEvents: true, hasSocket: false, alwaysOn: false)),
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    static let accelerometer = Accelerometer(
        id: "iio:device0", name: "accel_3d", location: nil, mountMatrix: .identity)

    /// The readings the device was given, in order.
    final class Recorder: RelayOutput, @unchecked Sendable {
        var reports: [[Int32]] = []
        func report(x: Int32, y: Int32, z: Int32) throws(UInputError) { reports.append([x, y, z]) }
    }

    /// Readings do not go to the relay service's task: each one handed over woke the event loop that runs it
    /// (a wake-up of the daemon a turn's read). The service is told only to make and remove the device.
    @Test func readingsAreNotHandedToTheService() async {
        let link = Self.link()
        link.consume(.capturing(Self.accelerometer, rate: 5))
        // A turn from upright to lying on its left side: every reading moves past the relay's tolerance.
        for step in 0..<4 {
            link.consume(.sample(Sample(time: Double(step) * 0.2, x: Double(step) * 3, y: 9.81, z: 0)))
        }
        link.flush()
        link.consume(.sample(Sample(time: 0.8, x: 9.81, y: 0, z: 0)))
        link.consume(.stopped)
        link.consume(.waiting(reason: "gone"))
        link.finish()
        var steps: [RelayLink.Step] = []
        for await step in link.steps { steps.append(step) }
        #expect(
            steps == [.action(.create(AccelerometerRelay.device(for: Self.accelerometer))), .action(.destroy)])
    }

    /// A read of the sensor while the device turns holds several readings a fifth of a second apart; iio-sensor-
    /// proxy reads the device once a poll, so only the newest is written, at the flush after the read; a reading
    /// decided before the service made the device is written to it as soon as it is made.
    @Test func theNewestReadingOfAReadIsWrittenAndADeviceMadeLaterGetsIt() {
        let link = Self.link()
        link.consume(.capturing(Self.accelerometer, rate: 5))
        link.consume(.sample(Sample(time: 0, x: 0, y: 9.81, z: 0)))
        link.flush()
        let device = Recorder()
        link.attach(device)
        #expect(device.reports == [[0, 256, 0]])
        for step in 1..<4 {
            link.consume(.sample(Sample(time: Double(step) * 0.2, x: Double(step) * 3, y: 9.81, z: 0)))
        }
        #expect(device.reports == [[0, 256, 0]])
        link.flush()
        #expect(device.reports == [[0, 256, 0], [235, 256, 0]])
        // The device is about to be removed: nothing more is written to it.
        link.attach(nil)
        link.consume(.sample(Sample(time: 0.8, x: 9.81, y: 0, z: 0)))
        link.flush()
        #expect(device.reports == [[0, 256, 0], [235, 256, 0]])
    }
}
