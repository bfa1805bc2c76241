// SPDX-License-Identifier: Apache-2.0
import IIOModel
import ShakeDaemon
import ShakeProtocol
import Testing

/// The sensor as the status describes it, following what the source reports, without a sensor.
struct SensorInfoSourceTests {
    static let display = Accelerometer(id: "iio:device0", name: "accel_3d", location: .display)
    static let base = Accelerometer(id: "iio:device1", name: nil, label: "accel-base", location: .base)

    @Test func beforeTheSourceReportsTheSensorFoundAtStartIsStartingNotNone() {
        #expect(
            SensorInfo.starting(Self.display)
                == SensorInfo(
                    source: "iio", name: "accel_3d", id: "iio:device0", location: "display", state: "starting"))
        #expect(SensorInfo.starting(nil) == SensorInfo(source: "none", state: "starting"))
        // Then the source's first report replaces it: idle keeps the sensor found.
        var info = SensorInfo.starting(Self.display)
        info.idle(lookUp: { nil })
        #expect(info.state == "idle")
        #expect(info.id == "iio:device0")
    }

    @Test func capturingNamesTheSensorItsRateAndSaysSoToSystemd() {
        var info = SensorInfo.none
        let line = info.capturing(Self.display, rate: 100)
        #expect(
            info
                == SensorInfo(
                    source: "iio", name: "accel_3d", id: "iio:device0", location: "display", rate: 100,
                    state: "capturing"))
        #expect(line == "capturing from \(Self.display.displayName) at 100 Hz")
    }

    @Test func aSensorWithoutANameGoesByItsLabel() {
        var info = SensorInfo.none
        _ = info.capturing(Self.base, rate: 12.5)
        #expect(info.name == "accel-base" && info.location == "base" && info.rate == 12.5)
    }

    @Test func whileNobodyListensTheKnownSensorStaysIdleWithoutLookingAgain() {
        var info = SensorInfo.none
        _ = info.capturing(Self.display, rate: 100)
        var lookedUp = false
        info.idle(lookUp: {
            lookedUp = true
            return Self.base
        })
        #expect(!lookedUp)
        #expect(info.id == "iio:device0" && info.state == "idle" && info.reason == nil && info.rate == 100)
    }

    @Test func beforeTheFirstCaptureTheSensorIsLookedUp() {
        var info = SensorInfo(source: "none", state: "waiting", reason: "no IIO devices yet")
        info.idle(lookUp: { Self.base })
        #expect(
            info == SensorInfo(source: "iio", name: "accel-base", id: "iio:device1", location: "base", state: "idle"))
        // Nothing found: the sensor stays unknown.
        var nothing = SensorInfo.none
        nothing.idle(lookUp: { nil })
        #expect(nothing == .none)
    }

    @Test func busyAndWaitingSayWhyToClientsAndSystemd() {
        var info = SensorInfo.none
        #expect(info.busy(Self.display, advice: "iio-sensor-proxy holds it") == "iio-sensor-proxy holds it")
        #expect(info.state == "busy" && info.reason == "iio-sensor-proxy holds it" && info.id == "iio:device0")
        #expect(info.waiting("the sensor vanished") == "the sensor vanished")
        #expect(info == SensorInfo(source: "none", state: "waiting", reason: "the sensor vanished"))
    }

    @Test func aBrokenStreamForgetsTheSensorButNotAReplay() {
        var info = SensorInfo.none
        _ = info.capturing(Self.display, rate: 100)
        info.streamBroke()
        #expect(info == .none)
        var replay = SensorInfo(source: "replay", name: "demo.csv", rate: 100, state: "replaying")
        let before = replay
        replay.streamBroke()
        replay.idle(lookUp: { Self.display })
        #expect(replay == before)
    }
}
