// SPDX-License-Identifier: Apache-2.0
import IIOModel
import ShakeDetection
import ShakeProtocol
import SystemdSupport
import Testing

@testable import ShakeDaemon

/// The shake object's D-Bus properties as values: what each says of the daemon's state, and which changed.
struct BusPropertiesTests {
    static let accelerometer = Accelerometer(id: "iio:device0", name: "accel_3d", location: .display)
    static let sensor = SensorState.capturing(accelerometer, rate: 100)

    @Test func theyDescribeTheDaemonsState() {
        let properties = BusProperties(sensor: Self.sensor, shaking: true, sensitivity: .hard)
        #expect(properties.hasAccelerometer)
        #expect(properties.shaking)
        #expect(properties.sensor == "accel_3d (iio:device0)")
        #expect(properties.sensitivity == "hard")
        #expect(properties.bool("HasAccelerometer") == true)
        #expect(properties.bool("Shaking") == true)
        #expect(properties.string("Sensor") == "accel_3d (iio:device0)")
        #expect(properties.string("Sensitivity") == "hard")
    }

    @Test func anUnknownNameOrTypeHasNoValue() {
        let properties = BusProperties(sensor: Self.sensor, shaking: false, sensitivity: .medium)
        #expect(properties.bool("Sensor") == nil)
        #expect(properties.string("Shaking") == nil)
        #expect(properties.bool("shaking") == nil)
        #expect(properties.string("") == nil)
    }

    @Test func withoutASensorThereIsNoAccelerometerAndNoName() {
        let properties = BusProperties(sensor: .none, shaking: false, sensitivity: .medium)
        #expect(!properties.hasAccelerometer)
        #expect(properties.sensor == "")
        #expect(
            properties
                == BusProperties(sensor: .waiting(reason: "no IIO devices"), shaking: false, sensitivity: .medium))
    }

    @Test(arguments: [
        (SensorInfo(source: "iio", name: "accel_3d", id: "iio:device0"), "accel_3d (iio:device0)"),
        (SensorInfo(source: "iio", name: "iio:device0", id: "iio:device0"), "iio:device0"),
        (SensorInfo(source: "iio", name: "accel_3d"), "accel_3d"),
        (SensorInfo(source: "iio", id: "iio:device1"), "iio:device1"),
        (SensorInfo(source: "replay", name: "/tmp/demo.csv"), "/tmp/demo.csv"),
        (SensorInfo(source: "iio"), "iio"),
    ])
    func theSensorIsNamedOnce(_ info: SensorInfo, _ described: String) {
        #expect(BusProperties.describe(info) == described)
    }

    @Test func onlyWhatChangedIsAnnouncedInTheInterfacesOrder() {
        let before = BusProperties(sensor: .none, shaking: false, sensitivity: .medium)
        #expect(before.changes(from: before).isEmpty)
        #expect(BusProperties().changes(from: before) == ["Sensitivity"])
        let after = BusProperties(sensor: Self.sensor, shaking: true, sensitivity: .light)
        #expect(after.changes(from: before) == ["HasAccelerometer", "Shaking", "Sensor", "Sensitivity"])
        #expect(before.changes(from: after) == ["HasAccelerometer", "Shaking", "Sensor", "Sensitivity"])
        var calmer = after
        calmer.shaking = false
        #expect(calmer.changes(from: after) == ["Shaking"])
        // The same sensor in another state (its rate, idle) is the same property value: no notice.
        let idle = SensorState.idle(Self.accelerometer, rate: nil)
        #expect(BusProperties(sensor: idle, shaking: true, sensitivity: .light).changes(from: after).isEmpty)
    }

    @Test func aShakeSignalCarriesTheEventsFieldsUnderItsNumber() {
        let began = BusObject.Shake(.began(time: 12.5), seq: 7)
        #expect(began == BusObject.Shake(phase: "began", seq: 7, time: 12.5))
        let summary = ShakeSummary(time: 14, began: 12.5, peak: 23.4, axis: .y, reversals: 5)
        #expect(
            BusObject.Shake(.ended(summary), seq: 8)
                == BusObject.Shake(phase: "ended", seq: 8, time: 14, duration: 1.5, peak: 23.4, axis: "y", reversals: 5)
        )
        #expect(
            BusObject.Shake(.cancelled(time: 16, began: 15.25, reason: .notAShake, detail: .weak), seq: 9)
                == BusObject.Shake(
                    phase: "cancelled", seq: 9, time: 16, duration: 0.75, reason: "not_a_shake", detail: "weak"))
        #expect(
            BusObject.Shake(.cancelled(time: 20, began: 10, reason: .tooLong), seq: 10).detail == "")
    }
}
