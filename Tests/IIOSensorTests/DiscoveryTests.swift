// SPDX-License-Identifier: Apache-2.0
import IIOModel
import IIOSensor
import Logging
import ShakeDetection
import Testing

let quietLogger: Logger = {
    var logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
    logger.logLevel = .critical
    return logger
}()

struct DiscoveryTests {
    func discover(_ devices: [FakeWorld.Device]) throws -> [Accelerometer] {
        let world = FakeWorld()
        devices.forEach(world.add)
        let context = try FakeBackend(world: world).makeContext()
        return AccelerometerDiscovery.discover(in: context, logger: quietLogger)
    }

    @Test func findsAccelerometersByRawAttributesOrScanElements() throws {
        var bufferOnly = FakeWorld.Device.accelerometer(number: 1)
        bufferOnly.info.attributes = []
        let other = FakeWorld.Device(
            info: IIODeviceInfo(id: "iio:device2", name: "als", attributes: ["in_illuminance_raw"]))
        let found = try discover([
            .accelerometer(number: 0, buffered: false), bufferOnly, other, .trigger(number: 0, name: "x"),
        ])
        #expect(found.map(\.id) == ["iio:device0", "iio:device1"])
        #expect(found[0].hasRawAttributes && !found[0].canBuffer)
        #expect(!found[1].hasRawAttributes && found[1].canBuffer)
        #expect(found[1].timestampElement?.type == .timestamp)
    }

    @Test func theTriggerIsNameDashDevNElseNameDashTrigger() throws {
        let first = try discover([
            .accelerometer(number: 3), .trigger(number: 0, name: "other-dev3"),
            .trigger(number: 1, name: "fake-accel-dev3"),
        ])
        #expect(first[0].triggerID == "trigger1" && first[0].triggerName == "fake-accel-dev3")
        let second = try discover([.accelerometer(number: 0), .trigger(number: 5, name: "fake-accel-trigger")])
        #expect(second[0].triggerID == "trigger5")
        let none = try discover([.accelerometer(number: 0), .trigger(number: 0, name: "fake-accel-dev1")])
        #expect(none[0].triggerID == nil)
    }

    @Test func udevsMountMatrixBeatsTheKernelsAndLocationComesFromLabelOrUdev() throws {
        var device = FakeWorld.Device.accelerometer(number: 0)
        device.info.attributes.insert("in_accel_mount_matrix")
        device.values["in_accel_mount_matrix"] = "0, 1, 0; -1, 0, 0; 0, 0, 1"
        let kernel = try discover([device])[0]
        #expect(kernel.mountMatrixSource == "in_accel_mount_matrix")
        #expect(kernel.mountMatrix.apply(Vector3(x: 0, y: 1, z: 0)) == Vector3(x: 1, y: 0, z: 0))
        #expect(kernel.location == nil)

        device.udev = ["ACCEL_MOUNT_MATRIX": "-1, 0, 0; 0, -1, 0; 0, 0, 1", "ACCEL_LOCATION": "base"]
        let udev = try discover([device])[0]
        #expect(udev.mountMatrixSource == "udev ACCEL_MOUNT_MATRIX")
        #expect(udev.mountMatrix.apply(Vector3(x: 1, y: 2, z: 3)) == Vector3(x: -1, y: -2, z: 3))
        #expect(udev.location == .base)

        let labelled = try discover([.accelerometer(number: 0, label: "accel-display")])[0]
        #expect(labelled.location == .display && labelled.locationSource == "label accel-display")
    }

    @Test(arguments: ["mount_matrix", "in_mount_matrix"])
    func otherMatrixAttributesAreRead(name: String) throws {
        var device = FakeWorld.Device.accelerometer(number: 0)
        device.info.attributes.insert(name)
        device.values[name] = "1, 0, 0; 0, 0, 1; 0, 1, 0"
        #expect(try discover([device])[0].mountMatrixSource == name)
    }

    @Test func aBrokenMatrixIsIgnored() throws {
        var device = FakeWorld.Device.accelerometer(number: 0)
        device.info.attributes.insert("mount_matrix")
        device.values["mount_matrix"] = "garbage"
        let found = try discover([device])[0]
        #expect(found.mountMatrix.isIdentity && found.mountMatrixSource == "none")
    }
}

struct DeviceSelectionTests {
    func accelerometer(_ number: Int, name: String = "accel", location: Accelerometer.Location? = nil) -> Accelerometer
    {
        Accelerometer(id: "iio:device\(number)", name: name, location: location)
    }

    @Test func requestsAreParsed() {
        #expect(DeviceRequest(parsing: "display") == .location(.display))
        #expect(DeviceRequest(parsing: "lid") == .location(.display))
        #expect(DeviceRequest(parsing: "base") == .location(.base))
        #expect(DeviceRequest(parsing: "iio:device3") == .id("iio:device3"))
        #expect(DeviceRequest(parsing: "mma8452") == .name("mma8452"))
        #expect(DeviceRequest(parsing: "") == .automatic)
    }

    @Test func automaticPrefersTheDisplayThenTheOnlyThenTheFirst() {
        let all = [accelerometer(10), accelerometer(2, location: .base), accelerometer(7, location: .display)]
        #expect(DeviceSelection.choose(from: all, request: .automatic)?.accelerometer.id == "iio:device7")
        let noDisplay = [accelerometer(10), accelerometer(2, location: .base)]
        let first = DeviceSelection.choose(from: noDisplay, request: .automatic)
        #expect(first?.accelerometer.id == "iio:device2")
        #expect(first?.reason.contains("first of 2") == true)
        let only = DeviceSelection.choose(from: [accelerometer(4)], request: .automatic)
        #expect(only?.reason == "the only accelerometer")
        #expect(DeviceSelection.choose(from: [], request: .automatic) == nil)
    }

    @Test func explicitRequestsPickTheirDeviceOrNone() {
        let all = [
            accelerometer(0, name: "bma250", location: .base), accelerometer(1, name: "mma8452", location: .display),
        ]
        #expect(DeviceSelection.choose(from: all, request: .location(.base))?.accelerometer.id == "iio:device0")
        #expect(DeviceSelection.choose(from: all, request: .id("iio:device1"))?.accelerometer.name == "mma8452")
        #expect(DeviceSelection.choose(from: all, request: .name("bma250"))?.accelerometer.id == "iio:device0")
        #expect(DeviceSelection.choose(from: all, request: .id("iio:device9")) == nil)
        #expect(DeviceSelection.choose(from: [accelerometer(0)], request: .location(.display)) == nil)
    }
}
