// SPDX-License-Identifier: Apache-2.0
import IIOModel
import ShakeDetection
import ShakeProtocol
import Testing

@testable import ShakeDaemon

/// The sensor's state as the daemon follows what the source reports, and what the status and the bus say of it,
/// without a sensor.
struct SensorStateTests {
    static let display = Accelerometer(id: "iio:device0", name: "accel_3d", location: .display)
    static let base = Accelerometer(id: "iio:device1", name: nil, label: "accel-base", location: .base)

    @Test func beforeTheSourceReportsTheSensorFoundAtStartIsStartingNotNone() {
        #expect(
            SensorState.starting(Self.display).info
                == SensorInfo(
                    source: "iio", name: "accel_3d", id: "iio:device0", location: "display", state: "starting"))
        #expect(SensorState.starting(nil).info == SensorInfo(source: "none", state: "starting"))
        // Then the source's first report replaces it: idle keeps the sensor found.
        var state = SensorState.starting(Self.display)
        state.idle(lookUp: { nil })
        #expect(state == .idle(Self.display, rate: nil))
        #expect(state.info.state == "idle" && state.info.id == "iio:device0")
    }

    @Test func capturingNamesTheSensorItsRateAndSaysSoToSystemd() {
        var state = SensorState.none
        let line = state.capturing(Self.display, rate: 100)
        #expect(
            state.info
                == SensorInfo(
                    source: "iio", name: "accel_3d", id: "iio:device0", location: "display", rate: 100,
                    state: "capturing"))
        #expect(line == "capturing from \(Self.display.displayName) at 100 Hz")
        #expect(state.logName == "iio:device0")
    }

    @Test func aSensorWithoutANameGoesByItsLabel() {
        var state = SensorState.none
        _ = state.capturing(Self.base, rate: 12.5)
        let info = state.info
        #expect(info.name == "accel-base" && info.location == "base" && info.rate == 12.5)
    }

    @Test func whileNobodyListensTheKnownSensorStaysIdleWithoutLookingAgain() {
        var state = SensorState.none
        _ = state.capturing(Self.display, rate: 100)
        var lookedUp = false
        state.idle(lookUp: {
            lookedUp = true
            return Self.base
        })
        #expect(!lookedUp)
        #expect(state == .idle(Self.display, rate: 100))
        let info = state.info
        #expect(info.id == "iio:device0" && info.state == "idle" && info.reason == nil && info.rate == 100)
        // Idle again (capture came and went without a sensor change): still the same.
        state.idle(lookUp: { Self.base })
        #expect(state == .idle(Self.display, rate: 100))
    }

    @Test func beforeTheFirstCaptureTheSensorIsLookedUp() {
        var state = SensorState.waiting(reason: "no IIO devices yet")
        state.idle(lookUp: { Self.base })
        #expect(
            state.info
                == SensorInfo(source: "iio", name: "accel-base", id: "iio:device1", location: "base", state: "idle"))
        // Nothing found: the sensor stays unknown.
        var nothing = SensorState.none
        nothing.idle(lookUp: { nil })
        #expect(nothing == .none)
        #expect(nothing.info == .none)
    }

    @Test func busyAndWaitingSayWhyToClientsAndSystemd() {
        var state = SensorState.none
        #expect(state.busy(Self.display, advice: "iio-sensor-proxy holds it") == "iio-sensor-proxy holds it")
        let busy = state.info
        #expect(busy.state == "busy" && busy.reason == "iio-sensor-proxy holds it" && busy.id == "iio:device0")
        // A busy sensor that goes idle is no longer busy, and has no rate.
        var idle = state
        idle.idle(lookUp: { nil })
        #expect(idle == .idle(Self.display, rate: nil))
        #expect(state.waiting("the sensor vanished") == "the sensor vanished")
        #expect(state.info == SensorInfo(source: "none", state: "waiting", reason: "the sensor vanished"))
    }

    @Test func aBrokenStreamForgetsTheSensorButNotAReplay() {
        var state = SensorState.none
        _ = state.capturing(Self.display, rate: 100)
        state.streamBroke()
        #expect(state == .none)
        var replay = SensorState.replaying(path: "demo.csv", rate: 100)
        let before = replay
        replay.streamBroke()
        replay.idle(lookUp: { Self.display })
        #expect(replay == before)
        #expect(replay.info == SensorInfo(source: "replay", name: "demo.csv", rate: 100, state: "replaying"))
        #expect(replay.logName == "demo.csv")
    }

    /// The bus's properties read the state: a replay has a sensor, waiting has none.
    @Test func theBusSaysWhetherThereIsASensorFromTheState() {
        let waiting = BusProperties(
            sensor: .waiting(reason: "no IIO devices yet"), shaking: false, sensitivity: .medium)
        #expect(!waiting.hasAccelerometer && waiting.sensor == "")
        let replay = BusProperties(
            sensor: .replaying(path: "demo.csv", rate: nil), shaking: false, sensitivity: .medium)
        #expect(replay.hasAccelerometer && replay.sensor == "demo.csv")
        let capturing = BusProperties(
            sensor: .capturing(Self.display, rate: 100), shaking: true, sensitivity: .light)
        #expect(capturing.hasAccelerometer && capturing.sensor == "accel_3d (iio:device0)")
        #expect(capturing.changes(from: waiting) == ["HasAccelerometer", "Shaking", "Sensor", "Sensitivity"])
    }
}
