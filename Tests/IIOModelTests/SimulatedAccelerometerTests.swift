// SPDX-License-Identifier: Apache-2.0
import IIOModel
import ShakeDetection
import ShakeTestSupport
import Testing

/// The simulated accelerometer as a value: what it stores, read back with the same `ScanLayout` and `ScanType`
/// the daemon decodes with.
struct SimulatedAccelerometerTests {
    func device(_ shape: SimulatedAccelerometer.Shape, _ samples: [Sample]) -> SimulatedAccelerometer {
        var device = SimulatedAccelerometer(number: 0, name: "fake-accel", shape: shape)
        device.samples = samples
        return device
    }

    /// The values a scan holds, decoded as the daemon decodes them.
    func decoded(_ scan: [UInt8], _ layout: ScanLayout) -> [ScanLayout.Role: Int64] {
        scan.withUnsafeBytes { bytes in
            Dictionary(uniqueKeysWithValues: layout.elements.map { ($0.role, $0.type.decode(bytes, at: $0.offset)) })
        }
    }

    /// The script's reads.
    func reads(_ script: [UInt8]) -> [(delay: Int, bytes: [UInt8])] {
        UmockdevScript.reads(script)
    }

    @Test(arguments: [
        SimulatedAccelerometer.Shape.buffered, .noTrigger, .shifted, .bigEndian, .scaled, .rotated, .udevRotated,
    ])
    func aScanDecodesBackToTheSample(_ shape: SimulatedAccelerometer.Shape) {
        let sample = Sample(time: 1.5, x: 1.2, y: -3.4, z: 9.81)
        let device = device(shape, [sample])
        let values = decoded(device.scan(sample), device.layout)
        var sensor = (0..<3).map { Double(values[[.x, .y, .z][$0]]!) + device.offset }
        sensor = (0..<3).map { sensor[$0] * device.scales[$0] }
        // device = M * sensor for the rotated shapes.
        let frame =
            device.isRotated
            ? (0..<3).map { row in (0..<3).reduce(0) { $0 + SimulatedAccelerometer.rotation[row][$1] * sensor[$1] } }
            : sensor
        for (got, want) in zip(frame, [sample.acceleration.x, sample.acceleration.y, sample.acceleration.z]) {
            #expect(abs(got - want) <= device.scales.max()! / 2 + 1e-9)
        }
        #expect(values[.timestamp] == (device.hasTimestamp ? 1_500_000_000 : nil))
    }

    @Test func beyondFullScaleReadsAsFullScale() {
        let device = device(.buffered, [])
        #expect(device.raw(Vector3(x: 1000, y: -1000, z: .infinity)) == [32767, -32768, 32767])
        #expect(self.device(.shifted, []).raw(Vector3(x: 1000, y: -1000, z: 0)) == [2047, -2048, 0])
    }

    @Test func clockJumpsShiftTheTimestampsAfterThem() {
        var device = device(.buffered, [])
        device.clockJumps = [.init(at: 2, seconds: 300), .init(at: 5, seconds: -60)]
        #expect(device.timestamp(at: 1) == 1)
        #expect(device.timestamp(at: 2) == 2)
        #expect(device.timestamp(at: 3) == 303)
        #expect(device.timestamp(at: 6) == 246)
        #expect(SimulatedAccelerometer.ClockJump(parsing: "2.1:-60") == .init(at: 2.1, seconds: -60))
        for bad in ["2.1", "a:1", "1:inf", "1:1e10", "1:2:3", ""] {
            #expect(SimulatedAccelerometer.ClockJump(parsing: bad) == nil)
        }
    }

    @Test func theScriptPlaysEveryScanAtItsTimeEscaped() {
        // x = 0x5E ('^') counts and y = 31 counts: both bytes need escaping.
        let scale = 0.002441
        let samples = (0..<4).map { Sample(time: 10 + Double($0) * 0.01, x: 94 * scale, y: 31 * scale, z: 9.81) }
        let device = device(.buffered, samples)
        let script = device.script(speed: 1)
        let reads = reads(script)
        #expect(reads.map(\.delay) == [0, 10, 10, 10])
        #expect(reads.map(\.bytes) == samples.map { device.scan($0) })
        #expect(!script.contains { $0 < 32 && $0 != UInt8(ascii: "\n") })
        // In groups of three: one read per group, its delay the group's.
        let batched = self.reads(device.script(speed: 1, batch: 3))
        #expect(batched.map(\.delay) == [20, 10])
        #expect(batched.map(\.bytes.count) == [48, 16])
        // Twice as fast: half the delays.
        #expect(self.reads(device.script(speed: 2)).map(\.delay) == [0, 5, 5, 5])
    }

    /// umockdev drops spaces at the start of a read: a first scan that would start with one is nudged off it.
    @Test func aFirstScanNeverStartsWithASpace() {
        let sample = Sample(time: 0, x: 32 * 0.002441, y: 0, z: 9.81)
        let device = device(.buffered, [sample])
        #expect(device.scan(sample).first == 32)
        #expect(reads(device.script(speed: 1)).first?.bytes.first != 32)
    }

    @Test func theDescriptionNamesTheShapesAttributes() {
        let buffered = device(.buffered, [Sample(time: 0, x: 0, y: 0, z: 9.81)]).umockdevDescription()
        #expect(buffered.contains("A: scan_elements/in_accel_x_type=le:s16/16>>0\\n"))
        #expect(buffered.contains("A: scan_elements/in_timestamp_type=le:s64/64>>0\\n"))
        #expect(buffered.contains("A: in_accel_z_raw=4019\\n"))
        #expect(buffered.contains("A: name=fake-accel-dev0\\n"))
        let polled = device(.polled, []).umockdevDescription()
        #expect(!polled.contains("scan_elements"))
        #expect(!polled.contains("trigger"))
        #expect(
            device(.rotated, []).umockdevDescription().contains(
                "A: in_accel_mount_matrix=0, 1, 0; -1, 0, 0; 0, 0, 1\\n"))
        #expect(
            device(.udevRotated, []).umockdevDescription().contains("E: ACCEL_MOUNT_MATRIX=0, 1, 0; -1, 0, 0; 0, 0, 1"))
        #expect(SimulatedAccelerometer.escape("a\\b\nc") == "a\\\\b\\nc")
    }

    @Test func thePolledShapeListsRawValuesByTime() {
        let device = device(.polled, [Sample(time: 5, x: 0, y: 0, z: 9.81), Sample(time: 5.25, x: 0, y: 0, z: 0)])
        #expect(device.rawPlayback(speed: 1).split(separator: "\n").dropFirst() == ["0 0 0 4019", "250 0 0 0"])
        #expect(!device.isBuffered)
    }
}
