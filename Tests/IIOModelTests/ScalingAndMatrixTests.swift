// SPDX-License-Identifier: Apache-2.0
import IIOModel
import NumberFormat
import ShakeDetection
import Testing

struct ChannelScalingTests {
    func lookup(_ values: [String: String]) -> (ChannelScaling, [String]) {
        let result = ChannelScaling.lookup(attributes: Set(values.keys)) { values[$0] }
        return (result.scaling, result.problems)
    }

    @Test func perChannelBeatsSharedBeatsDeviceWide() {
        let (scaling, problems) = lookup([
            "in_accel_x_scale": "0.5", "in_accel_scale": "0.25", "scale": "2", "in_accel_offset": "-10",
        ])
        #expect(problems.isEmpty)
        #expect(scaling.x.scale == 0.5 && scaling.x.scaleSource == "in_accel_x_scale")
        #expect(scaling.y.scale == 0.25 && scaling.z.scaleSource == "in_accel_scale")
        #expect(scaling.x.offset == -10 && scaling.z.offsetSource == "in_accel_offset")
        #expect(scaling.apply(x: 30, y: 50, z: 10) == Vector3(x: 10, y: 10, z: 0))
    }

    @Test func deviceWideScaleAndOffsetApplyToEveryAxis() {
        let (scaling, _) = lookup(["scale": "0.01", "offset": "100"])
        #expect(scaling.apply(x: -100, y: 0, z: 881) == Vector3(x: 0, y: 1, z: 9.81))
    }

    @Test func everythingIsOptional() {
        let (scaling, problems) = lookup([:])
        #expect(problems.isEmpty)
        #expect(scaling == .identity)
        #expect(scaling.apply(x: 3, y: -4, z: 9) == Vector3(x: 3, y: -4, z: 9))
    }

    @Test func aMalformedScaleFallsBackToTheNextAndIsReported() {
        let (scaling, problems) = lookup(["in_accel_x_scale": "abc", "in_accel_scale": "0.5", "in_accel_y_scale": "0"])
        #expect(scaling.x.scale == 0.5)
        #expect(scaling.y.scale == 0.5)
        #expect(problems.count == 2)
    }
}

struct MountMatrixTests {
    @Test func parsesTheKernelsSpelling() throws {
        let matrix = try MountMatrix(parsing: "0, 1, 0; -1, 0, 0; 0, 0, 1")
        #expect(matrix.rows == [Vector3(x: 0, y: 1, z: 0), Vector3(x: -1, y: 0, z: 0), Vector3(x: 0, y: 0, z: 1)])
        #expect(matrix.description == "0, 1, 0; -1, 0, 0; 0, 0, 1")
        #expect(try MountMatrix(parsing: "1,0,0;0,1,0;0,0,1\n").isIdentity)
        #expect(try MountMatrix(parsing: "0.5, 0, 0; 0, 1, 0; 0, 0, 1").rows[0].x == 0.5)
    }

    @Test func theDeviceFrameIsTheMatrixTimesTheSensorFrame() throws {
        let matrix = try MountMatrix(parsing: "0, 1, 0; -1, 0, 0; 0, 0, 1")
        // A sensor turned a quarter turn: its y axis is the device's x.
        #expect(matrix.apply(Vector3(x: 0, y: 9.81, z: 0)) == Vector3(x: 9.81, y: 0, z: 0))
        #expect(matrix.apply(Vector3(x: 2, y: 0, z: 0)) == Vector3(x: 0, y: -2, z: 0))
        let back = matrix.transposed.apply(matrix.apply(Vector3(x: 1, y: 2, z: 3)))
        #expect(back == Vector3(x: 1, y: 2, z: 3))
    }

    @Test(arguments: [
        "", "1, 0, 0; 0, 1, 0", "1, 0, 0; 0, 1, 0; 0, 0, x", "0, 0, 0; 0, 1, 0; 0, 0, 1", "1,0,0;0,1,0;0,0,1;1",
    ])
    func rejectsWhatIsNotARotation(text: String) {
        #expect(throws: MountMatrix.Invalid.self) { try MountMatrix(parsing: text) }
    }
}

struct SamplingFrequencyTests {
    @Test func theConfiguredRateWhenNothingIsListed() {
        #expect(SamplingFrequency.choose(requested: 100, available: nil) == 100)
        #expect(SamplingFrequency.choose(requested: 100, available: SamplingFrequency.Available(parsing: "")) == 100)
    }

    @Test func theNearestListedRateAtOrAboveFifty() {
        let list = SamplingFrequency.Available(parsing: "1.5625 3.125 6.25 12.5 25 50 100 200 400 800\n")
        #expect(SamplingFrequency.choose(requested: 100, available: list) == 100)
        #expect(SamplingFrequency.choose(requested: 120, available: list) == 100)
        #expect(SamplingFrequency.choose(requested: 30, available: list) == 50)
        #expect(SamplingFrequency.choose(requested: 150, available: list) == 200)
        let slow = SamplingFrequency.Available(parsing: "1 5 10 25")
        #expect(SamplingFrequency.choose(requested: 100, available: slow) == 25)
        let coarse = SamplingFrequency.Available(parsing: "12.5 62.5 125 250")
        #expect(SamplingFrequency.choose(requested: 100, available: coarse) == 125)
    }

    @Test func aRangeIsClampedAndStepped() {
        let range = SamplingFrequency.Available(parsing: "[1 1 400]")
        #expect(range == .range(min: 1, step: 1, max: 400))
        #expect(SamplingFrequency.choose(requested: 100, available: range) == 100)
        #expect(SamplingFrequency.choose(requested: 10, available: range) == 50)
        #expect(SamplingFrequency.choose(requested: 1000, available: range) == 400)
    }

    @Test func theLowestRateThatServesAFewReadingsASecond() {
        let list = SamplingFrequency.Available(parsing: "1.5625 3.125 6.25 12.5 25 50 100 200 400 800\n")
        #expect(SamplingFrequency.lowest(atLeast: 5, available: list) == 6.25)
        #expect(SamplingFrequency.lowest(atLeast: 5, available: SamplingFrequency.Available(parsing: "25 50")) == 25)
        #expect(SamplingFrequency.lowest(atLeast: 5, available: SamplingFrequency.Available(parsing: "1 2 4")) == 4)
        #expect(SamplingFrequency.lowest(atLeast: 5, available: nil) == 5)
        let range = SamplingFrequency.Available(parsing: "[1 1 400]")
        #expect(SamplingFrequency.lowest(atLeast: 5, available: range) == 5)
        let coarse = SamplingFrequency.Available(parsing: "[10 10 400]")
        #expect(SamplingFrequency.lowest(atLeast: 5, available: coarse) == 10)
    }

    @Test func ratesAreWrittenAsSysfsTakesThem() {
        #expect(DecimalText.format(100) == "100")
        #expect(DecimalText.format(12.5) == "12.5")
    }
}

struct UdevPropertiesTests {
    @Test func readsTheDatabaseAndUeventFormats() {
        let database =
            "S:iio/accel\nI:123\nE:ACCEL_MOUNT_MATRIX=0, -1, 0; 1, 0, 0; 0, 0, 1\nE:ACCEL_LOCATION=base\nG:seat\n"
        let properties = UdevProperties.parse(database)
        #expect(properties["ACCEL_MOUNT_MATRIX"] == "0, -1, 0; 1, 0, 0; 0, 0, 1")
        #expect(properties["ACCEL_LOCATION"] == "base")
        #expect(properties.count == 2)
        #expect(UdevProperties.parse("MAJOR=241\nMINOR=0\nDEVNAME=iio:device0\n")["MINOR"] == "0")
        #expect(UdevProperties.deviceNumber("241:3\n")! == (241, 3))
        #expect(UdevProperties.deviceNumber("x") == nil)
    }
}

struct SampleClockTests {
    @Test func batchesContinueAtTheNominalInterval() {
        var clock = SampleClock(rate: 100)
        let first = clock.times(count: 3, arrival: 10)
        #expect(zip(first, [9.98, 9.99, 10.0]).allSatisfy { abs($0 - $1) < 1e-9 })
        let second = clock.times(count: 2, arrival: 10.021)
        #expect(zip(second, [10.01, 10.02]).allSatisfy { abs($0 - $1) < 1e-9 })
    }

    @Test func aGapReanchorsAtTheArrivalAndTimeNeverGoesBack() {
        var clock = SampleClock(rate: 100)
        _ = clock.times(count: 2, arrival: 1)
        let late = clock.times(count: 2, arrival: 3)
        #expect(abs(late[1] - 3) < 1e-9 && late[0] > 1)
        let early = clock.times(count: 5, arrival: 3.01)
        #expect(early.allSatisfy { $0 > 3 })
        #expect(zip(early, early.dropFirst()).allSatisfy { $0 < $1 })
    }
}
