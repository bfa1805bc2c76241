// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import IIOModel
import IIOSensor
import ShakeDaemon
import ShakeDetection
import Testing

/// The relay to iio-sensor-proxy fed by the capture loop on a simulated sensor: the rate it asks for, and the
/// values, scale, signs, matrix and location the uinput accelerometer would get.
struct RelayOnFakeBackendTests {
    /// The sensor at rest for `seconds` at 100 Hz, reading +1 g on its own y (raw 981 at 0.01 m/s² per count)
    /// and -0.5 g on its x.
    func atRest(seconds: Double) -> [Sample] {
        (0..<Int(seconds * 100)).map { Sample(time: Double($0) / 100, x: -4.905, y: 9.81, z: 0) }
    }

    @Test func theRelayGetsTheSensorsAxesAtOneGIs256WithItsMatrixAndLocation() {
        let world = FakeWorld()
        var device = FakeWorld.Device.accelerometer(number: 0, name: "accel_3d", label: "accel-display")
        device.info.attributes.insert("in_accel_mount_matrix")
        device.values["in_accel_mount_matrix"] = "0, 1, 0; -1, 0, 0; 0, 0, 1"
        let trace = atRest(seconds: 2)
        device.reads = FakeScans.reads(trace)
        world.add(device)
        world.add(.trigger(number: 0, name: "accel_3d-dev0"))
        let source = SensorSourceTests().source(world)
        var relay = AccelerometerRelay()
        var actions: [AccelerometerRelay.Action] = []
        var samples = 0
        let wakeup = Wakeup()
        source.run(wakeup: wakeup, lowestRate: AccelerometerRelay.minimumRate) { report in
            switch report {
            case .capturing(let accelerometer, _):
                if let action = relay.sensorChanged(accelerometer) { actions.append(action) }
            case .sample(let sample):
                samples += 1
                if let action = relay.sample(sample) { actions.append(action) }
                if samples >= trace.count { wakeup.signal() }
            default:
                break
            }
        }

        // The lowest rate the sensor lists at or above 5 Hz.
        #expect(world.state.withLock { $0.written }.contains("iio:device0/sampling_frequency=12.5"))
        guard case .create(let made) = actions.first else {
            Issue.record("the relay made no device: \(actions)")
            return
        }
        #expect(made.name == "accel_3d (shaked relay)")
        #expect(made.properties == ["ACCEL_MOUNT_MATRIX": "0,1,0;-1,0,0;0,0,1", "ACCEL_LOCATION": "display"])
        let updates = actions.dropFirst()
        // Two seconds of a sensor at rest: one reading, not one per 0.2 s.
        #expect(updates.count == 1)
        // What iio-sensor-proxy would read from the IIO device: raw × scale on the sensor's axes, 1 g = 256.
        #expect(updates.allSatisfy { $0 == .update(x: -128, y: 256, z: 0) })
    }
}
