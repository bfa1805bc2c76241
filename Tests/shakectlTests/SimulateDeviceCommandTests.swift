// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeTestSupport
import Testing

/// `shakectl simulate-device`: what the simulated sensor stores, read back from the files it writes.
struct SimulateDeviceCommandTests {
    /// Writes `trace` and runs simulate-device on it with `arguments`. - Returns: the output folder.
    func simulate(_ trace: String, _ arguments: [String]) throws -> (Command.Result, String) {
        let directory = URL(fileURLWithPath: try Scratch.directory("simulate"))
        let path = directory.appendingPathComponent("trace.csv").path
        try trace.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try Command.run("shakectl", ["simulate-device", path, "--out", directory.path] + arguments)
        return (result, directory.path)
    }

    /// The script's reads: each line's delay and its bytes, unescaped.
    func reads(_ directory: String) throws -> [(delay: Int, bytes: [UInt8])] {
        let data = try Data(contentsOf: URL(fileURLWithPath: "\(directory)/iio:device0.script"))
        return UmockdevScript.reads(Array(data))
    }

    /// The scans of a buffered device with timestamps: three 16-bit elements, padding, a 64-bit timestamp.
    func scans(_ directory: String) throws -> [(values: [UInt16], nanoseconds: Int64)] {
        let bytes = try reads(directory).flatMap(\.bytes)
        return stride(from: 0, to: bytes.count - 15, by: 16).map { start in
            let values = (0..<3).map { UInt16(bytes[start + 2 * $0]) | UInt16(bytes[start + 2 * $0 + 1]) << 8 }
            let nanoseconds = (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[start + 8 + $1]) << (8 * UInt64($1)) }
            return (values, Int64(bitPattern: nanoseconds))
        }
    }

    func attribute(_ name: String, in directory: String) throws -> String? {
        let description = try String(contentsOfFile: "\(directory)/device.umockdev", encoding: .utf8)
        let prefix = "A: \(name)="
        return description.split(separator: "\n").first { $0.hasPrefix(prefix) }
            .map { String($0.dropFirst(prefix.count).dropLast(2)) }  // the value, without its "\n"
    }

    /// Beyond full scale, by a little, by far, and infinitely.
    let violent = """
        time,x,y,z
        0,1000,-1000,1e300
        0.01,inf,-inf,0
        0.02,0,9.81,0
        """

    @Test func valuesBeyondTheRangeClipAtFullScale() throws {
        let (result, directory) = try simulate(violent, ["--shape", "buffered"])
        #expect(result.status == 0, "\(result.stderr)")
        let scans = try scans(directory)
        #expect(scans.count == 3)
        #expect(
            scans.map { $0.values.map { Int16(bitPattern: $0) } } == [
                [32767, -32768, 32767], [32767, -32768, 0], [0, 4019, 0],
            ])
        // The _raw attributes clip the same way as the buffer.
        #expect(try attribute("in_accel_x_raw", in: directory) == "32767")
        #expect(try attribute("in_accel_y_raw", in: directory) == "-32768")
        #expect(try attribute("in_accel_z_raw", in: directory) == "32767")
    }

    @Test func twelveBitSamplesClipAtTwelveBitsNotAtTheirStorage() throws {
        let (result, directory) = try simulate(violent, ["--shape", "shifted"])
        #expect(result.status == 0, "\(result.stderr)")
        let first = try #require(try scans(directory).first)
        // le:s12/16>>4: 2047 and -2048, shifted up by four bits.
        #expect(first.values.map { Int16(bitPattern: $0) >> 4 } == [2047, -2048, 2047])
        #expect(try attribute("in_accel_x_raw", in: directory) == "2047")
        #expect(try attribute("in_accel_y_raw", in: directory) == "-2048")
    }

    @Test func unsignedSamplesClipAtZeroAndTheirTop() throws {
        let (result, directory) = try simulate(violent, ["--shape", "scaled"])
        #expect(result.status == 0, "\(result.stderr)")
        let first = try #require(try scans(directory).first)
        #expect(first.values == [65535, 0, 65535])
    }

    @Test func aClockJumpMovesTheTimestampsAfterItButNotThePace() throws {
        let trace = "time,x,y,z\n" + (0..<5).map { "\(Double($0) / 100),0,9.81,0" }.joined(separator: "\n")
        let (plain, plainDirectory) = try simulate(trace, [])
        #expect(plain.status == 0, "\(plain.stderr)")
        let (jumped, jumpedDirectory) = try simulate(
            trace, ["--clock-jump", "0.015:300", "--clock-jump", "0.025:-1.5"])
        #expect(jumped.status == 0, "\(jumped.stderr)")
        let times = try scans(jumpedDirectory).map(\.nanoseconds)
        #expect(times == [0, 10_000_000, 300_020_000_000, 298_530_000_000, 298_540_000_000])
        #expect(try scans(plainDirectory).map(\.nanoseconds) == [0, 10_000_000, 20_000_000, 30_000_000, 40_000_000])
        #expect(try reads(jumpedDirectory).map(\.delay) == reads(plainDirectory).map(\.delay))
    }

    @Test func aClockJumpNeedsTimestampsAndAWellFormedValue() throws {
        let trace = "time,x,y,z\n0,0,9.81,0\n0.01,0,9.81,0\n"
        let polled = try simulate(trace, ["--shape", "polled", "--clock-jump", "0:10"]).0
        #expect(polled.status != 0)
        #expect(polled.stderr.contains("--clock-jump needs a shape with timestamps"))
        let malformed = try simulate(trace, ["--clock-jump", "ten"]).0
        #expect(malformed.status != 0)
        #expect(malformed.stderr.contains("--clock-jump"))
    }
}
