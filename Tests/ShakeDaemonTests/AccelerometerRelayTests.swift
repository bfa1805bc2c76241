// SPDX-License-Identifier: Apache-2.0
import IIOModel
import ShakeDaemon
import ShakeDetection
import Testing

/// What the relay to iio-sensor-proxy makes and sends, without a device.
struct AccelerometerRelayTests {
    let rotated = try! MountMatrix(parsing: "0, 1, 0; -1, 0, 0; 0, 0, 1")

    func accelerometer(matrix: MountMatrix = .identity, location: Accelerometer.Location? = .display) -> Accelerometer {
        Accelerometer(id: "iio:device3", name: "accel_3d", location: location, mountMatrix: matrix)
    }

    @Test func theDeviceIsNamedAfterTheSensorAndCarriesItsMatrixAndLocation() {
        var relay = AccelerometerRelay()
        let action = relay.sensorChanged(accelerometer(matrix: rotated, location: .base))
        guard case .create(let device) = action else {
            Issue.record("expected create, got \(String(describing: action))")
            return
        }
        #expect(device.name == "accel_3d (shaked relay)")
        #expect(device.source == "iio:device3")
        #expect(device.properties == ["ACCEL_MOUNT_MATRIX": "0,1,0;-1,0,0;0,0,1", "ACCEL_LOCATION": "base"])
        #expect(
            AccelerometerRelay.propertiesFile(device) == "ACCEL_LOCATION=base\nACCEL_MOUNT_MATRIX=0,1,0;-1,0,0;0,0,1\n")
    }

    /// A driver's name reaches the kernel's input device name, udev and whoever lists input devices: control
    /// characters are not passed on, and the name fits in what uinput keeps (79 bytes) with its suffix.
    @Test func aSensorsNameWithControlCharactersOrTooLongIsMadeSafe() {
        let hostile = Accelerometer(
            id: "iio:device3", name: "accel\nACCEL_MOUNT_MATRIX=0\u{1B}[2J\u{85}", location: .display,
            mountMatrix: .identity)
        let device = AccelerometerRelay.device(for: hostile)
        #expect(device.name == "accel?ACCEL_MOUNT_MATRIX=0?[2J? (shaked relay)")
        let long = Accelerometer(
            id: "iio:device3", name: String(repeating: "é", count: 60), location: .display, mountMatrix: .identity)
        let shortened = AccelerometerRelay.device(for: long).name
        #expect(shortened.utf8.count <= 79)
        #expect(shortened.hasSuffix(" (shaked relay)"))
        #expect(shortened == String(repeating: "é", count: 32) + " (shaked relay)")
    }

    @Test func anUnknownLocationIsLeftOutAndTheIdentityIsSpelledOut() {
        let device = AccelerometerRelay.device(for: accelerometer(location: nil))
        #expect(device.properties == ["ACCEL_MOUNT_MATRIX": "1,0,0;0,1,0;0,0,1"])
    }

    /// iio-sensor-proxy's orientation from the values it reads: y = -256 normal, y = +256 bottom-up, x = -256
    /// right-up, x = +256 left-up. With the identity, the relay passes the device's axes and signs through.
    @Test(arguments: [
        (Vector3(x: 0, y: -9.81, z: 0), Int32(0), Int32(-256), Int32(0)),
        (Vector3(x: 0, y: 9.81, z: 0), 0, 256, 0),
        (Vector3(x: -9.81, y: 0, z: 0), -256, 0, 0),
        (Vector3(x: 9.81, y: 0, z: 0), 256, 0, 0),
        (Vector3(x: 0, y: 0, z: 9.81), 0, 0, 256),
        (Vector3(x: 4.905, y: -4.905, z: 1), 128, -128, 26),
    ])
    func valuesKeepAxesAndSignsAtOneGIs256(acceleration: Vector3, x: Int32, y: Int32, z: Int32) {
        var relay = AccelerometerRelay()
        _ = relay.sensorChanged(accelerometer())
        #expect(relay.sample(Sample(time: 1, acceleration: acceleration)) == .update(x: x, y: y, z: z))
    }

    @Test func samplesInTheDeviceFrameGoBackToTheSensorsAxes() {
        var relay = AccelerometerRelay()
        _ = relay.sensorChanged(accelerometer(matrix: rotated))
        // The sensor reads +1 g on its y; the matrix makes that the device's x.
        let sensor = Vector3(x: 0, y: 9.81, z: 0)
        let device = rotated.apply(sensor)
        #expect(device == Vector3(x: 9.81, y: 0, z: 0))
        #expect(relay.sample(Sample(time: 0, acceleration: device)) == .update(x: 0, y: 256, z: 0))
    }

    @Test func readingsArePacedOnTheSensorsClock() {
        var relay = AccelerometerRelay(interval: 0.2)
        _ = relay.sensorChanged(accelerometer())
        // The device turns steadily: every sample differs from the one before by more than the tolerance.
        let times = (0...100).map { Double($0) / 100 }
        let sent = times.filter { relay.sample(Sample(time: $0, x: $0 * 9.81, y: -9.81, z: 0)) != nil }
        #expect(sent.count == 6)
        #expect(zip(sent, sent.dropFirst()).allSatisfy { $1 - $0 >= 0.2 - 1e-6 })
        // A new stream whose clock starts earlier is paced from its first sample.
        #expect(relay.sample(Sample(time: 0.05, x: 0, y: -9.81, z: 0)) != nil)
    }

    /// A device lying still (its readings within 1/32 g of the last one sent) costs no write after the first,
    /// nor the relay's task a wake-up; a change past the tolerance is sent at once, even after a long still spell.
    @Test func readingsWithinTheToleranceOfTheLastSentAreNotSentAgain() {
        var relay = AccelerometerRelay(interval: 0.2)
        _ = relay.sensorChanged(accelerometer())
        let noise = [0.0, 0.2, -0.2, 0.25, -0.1]  // m/s²: up to 7 units of 1 g = 256
        let still = (0..<500).map { Sample(time: Double($0) / 100, x: noise[$0 % 5], y: -9.81, z: 0) }
        let sent = still.compactMap { relay.sample($0) }
        #expect(sent == [.update(x: 0, y: -256, z: 0)])
        // Turned to bottom-up: sent with the first sample that shows it.
        #expect(relay.sample(Sample(time: 5.0, x: 0, y: 9.81, z: 0)) == .update(x: 0, y: 256, z: 0))
        // Back within the tolerance of that: nothing.
        #expect(relay.sample(Sample(time: 5.5, x: 0.2, y: 9.81, z: 0)) == nil)
        // The same sensor again (capture resumed) keeps what the device holds; another one starts afresh.
        #expect(relay.sensorChanged(accelerometer()) == nil)
        #expect(relay.sample(Sample(time: 6, x: 0, y: 9.81, z: 0)) == nil)
        _ = relay.sensorChanged(accelerometer(matrix: rotated))
        #expect(relay.sample(Sample(time: 7, x: 9.81, y: 0, z: 0)) == .update(x: 0, y: 256, z: 0))
    }

    @Test func nothingIsSentWithoutASensorOrForAnUnusableSample() {
        var relay = AccelerometerRelay()
        #expect(relay.sample(Sample(time: 0, x: 0, y: -9.81, z: 0)) == nil)
        _ = relay.sensorChanged(accelerometer())
        #expect(relay.sample(Sample(time: .nan, x: 0, y: -9.81, z: 0)) == nil)
        #expect(relay.sample(Sample(time: 0, x: .infinity, y: 0, z: 0)) == nil)
    }

    @Test func theSameSensorAgainKeepsTheDeviceAndAnotherReplacesIt() {
        var relay = AccelerometerRelay()
        #expect(relay.sensorChanged(accelerometer()) != nil)
        #expect(relay.sensorChanged(accelerometer()) == nil)
        if case .create = relay.sensorChanged(accelerometer(matrix: rotated)) {} else { Issue.record("not replaced") }
        #expect(relay.sensorGone() == .destroy)
        #expect(relay.sensorGone() == nil)
        #expect(relay.device == nil)
        #expect(relay.sample(Sample(time: 5, x: 0, y: -9.81, z: 0)) == nil)
    }

    @Test func autoRelaysOnlyWhenIIOSensorProxyIsInstalled() {
        let installed = { (path: String) in path == "/usr/lib/udev/rules.d/80-iio-sensor-proxy.rules" }
        #expect(IIOSensorProxy.isInstalled(fileExists: installed))
        #expect(!IIOSensorProxy.isInstalled(fileExists: { _ in false }))
        #expect(IIOSensorProxy.relays(.auto, installed: true))
        #expect(!IIOSensorProxy.relays(.auto, installed: false))
        #expect(IIOSensorProxy.relays(.on, installed: false))
        #expect(!IIOSensorProxy.relays(.off, installed: true))
    }
}
