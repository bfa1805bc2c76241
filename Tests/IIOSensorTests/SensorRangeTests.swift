// SPDX-License-Identifier: Apache-2.0
import IIOModel
import IIOSensor
import ShakeDetection
import ShakeTestSupport
import Testing

/// The choice of a measuring range (`sensor.range`), pure.
struct SensorRangeChoiceTests {
    /// kxcjk-1013's scales (12-bit values): ±2, ±4 and ±8 g.
    let kxcjk = "0.009582 0.019163 0.038326\n"

    @Test func parsesAutoKeepAndANumberOfG() {
        #expect(SensorRange(parsing: "auto") == .automatic)
        #expect(SensorRange(parsing: "KEEP") == .keep)
        #expect(SensorRange(parsing: "8") == .atLeast(8))
        #expect(SensorRange(parsing: "2.5") == .atLeast(2.5))
        for bad in ["", "0.5", "2000", "nan", "inf", "-4", "4g", "big"] {
            #expect(SensorRange(parsing: bad) == nil, "\(bad)")
        }
        #expect(SensorRange.atLeast(8).description == "8")
        #expect(SensorRange.automatic.description == "auto")
    }

    @Test func autoTakesTheSmallestRangeOfAtLeastFourG() {
        let decision = SensorRange.choose(.automatic, available: kxcjk, current: "0.009582", bits: 12)
        guard case .set(let scale, let range, let from, let widest) = decision else {
            Issue.record("\(decision)")
            return
        }
        #expect(scale.text == "0.019163")
        #expect(abs(range - 4) < 0.01 && abs(from - 2) < 0.01)
        #expect(!widest)
    }

    @Test func aNumberAsksForTheSmallestRangeAtLeastThatWide() {
        #expect(scale(SensorRange.choose(.atLeast(5), available: kxcjk, current: "0.009582", bits: 12)) == "0.038326")
        #expect(scale(SensorRange.choose(.atLeast(1), available: kxcjk, current: "0.038326", bits: 12)) == "0.009582")
        // Wider than any offered: the widest.
        let wide = SensorRange.choose(.atLeast(16), available: kxcjk, current: "0.009582", bits: 12)
        #expect(scale(wide) == "0.038326")
        if case .set(_, _, _, let widest) = wide { #expect(widest) }
    }

    @Test func nothingIsWrittenWhenTheSensorIsAtTheRangeOrKeepIsAsked() {
        #expect(leaves(SensorRange.choose(.automatic, available: kxcjk, current: "0.019163", bits: 12)))
        #expect(leaves(SensorRange.choose(.atLeast(16), available: kxcjk, current: "0.038326", bits: 12)))
        #expect(leaves(SensorRange.choose(.keep, available: kxcjk, current: "0.009582", bits: 12)))
    }

    @Test func whatCannotBeReadLeavesTheRange() {
        #expect(leaves(SensorRange.choose(.automatic, available: nil, current: "0.009582", bits: 12)))
        #expect(leaves(SensorRange.choose(.automatic, available: "", current: "0.009582", bits: 12)))
        #expect(leaves(SensorRange.choose(.automatic, available: "low high", current: "0.009582", bits: 12)))
        #expect(leaves(SensorRange.choose(.automatic, available: "0.01 -0.02", current: "0.009582", bits: 12)))
        #expect(leaves(SensorRange.choose(.automatic, available: "0.01 nan", current: "0.009582", bits: 12)))
        #expect(leaves(SensorRange.choose(.automatic, available: kxcjk, current: "fast", bits: 12)))
        #expect(leaves(SensorRange.choose(.automatic, available: kxcjk, current: nil, bits: 12)))
        #expect(leaves(SensorRange.choose(.automatic, available: kxcjk, current: "0.009582", bits: nil)))
        #expect(leaves(SensorRange.choose(.automatic, available: kxcjk, current: "0.009582", bits: 99)))
    }

    func scale(_ decision: SensorRange.Decision) -> String? {
        if case .set(let scale, _, _, _) = decision { return scale.text }
        return nil
    }

    func leaves(_ decision: SensorRange.Decision) -> Bool {
        if case .leave = decision { return true }
        return false
    }
}

/// The range set for a capture and put back after it, on the fake backend.
struct SensorRangeCaptureTests {
    /// A kxcjk-1013-like accelerometer: 12-bit values in 16-bit storage, booted at ±2 g.
    func device(available: String? = "0.009582 0.019163 0.038326") -> FakeWorld.Device {
        var device = FakeWorld.Device.accelerometer(number: 0)
        let type = ScanType(bits: 12, storageBits: 16)
        device.info.scanElements =
            ["x", "y", "z"].enumerated().map { index, axis in
                IIOScanElement(channel: "accel_\(axis)", index: index, type: type)
            } + [IIOScanElement(channel: "timestamp", index: 3, type: .timestamp)]
        device.values["in_accel_scale"] = "0.009582"
        if let available {
            device.info.attributes.insert("in_accel_scale_available")
            device.values["in_accel_scale_available"] = available
        }
        return device
    }

    /// Buffer reads of a still device lying flat, as counts of `scale`.
    func stillReads(scale: Double) -> [[UInt8]] {
        let type = ScanType(bits: 12, storageBits: 16)
        let layout = ScanLayout([(.x, 0, type), (.y, 1, type), (.z, 2, type), (.timestamp, 3, .timestamp)])
        let scans = (0..<40).map { index in
            layout.encode(x: 0, y: Int64((9.81 / scale).rounded()), z: 0, timestamp: Int64(index) * 10_000_000)
        }
        return stride(from: 0, to: scans.count, by: 20).map { Array(scans[$0..<$0 + 20].joined()) }
    }

    func capture(_ world: FakeWorld, range: SensorRange) -> [Sample] {
        world.add(.trigger(number: 0, name: "fake-accel-dev0"))
        let source = SensorSource(
            backend: FakeBackend(world: world),
            configuration: .init(
                rate: 100, rescanInterval: .milliseconds(1), retryInterval: .milliseconds(5), pacedReads: false,
                range: range),
            logger: quietLogger, monotonic: world.clock)
        return SensorSourceTests().run(source) { samples, _, _ in samples.count >= 20 }.samples
    }

    @Test func autoSetsFourGWhileCapturingAndPutsTwoGBack() throws {
        let world = FakeWorld()
        var device = device()
        device.reads = stillReads(scale: 0.019163)
        world.add(device)
        let samples = capture(world, range: .automatic)
        let (values, written) = world.state.withLock { ($0.devices[0].values, $0.written) }
        // Set before the buffer started, restored after it stopped (the fake, like the kernel, refuses a scale
        // while the buffer runs).
        let set = try #require(written.firstIndex(of: "iio:device0/in_accel_scale=0.019163"))
        let started = try #require(written.firstIndex { $0.hasPrefix("iio:device0/buffer channels=") })
        let restored = try #require(written.lastIndex(of: "iio:device0/in_accel_scale=0.009582"))
        #expect(set < started && started < restored, "\(written)")
        #expect(values["in_accel_scale"] == "0.009582")
        // The samples are converted with the scale in force while capturing.
        let sample = try #require(samples.first)
        #expect(abs(sample.acceleration.y - 9.81) < 0.02, "\(sample)")
    }

    @Test func keepAndADeviceWithoutAvailableScalesAreLeftAlone() {
        for (range, available) in [(SensorRange.keep, "0.009582 0.019163 0.038326"), (.automatic, nil)] {
            let world = FakeWorld()
            var device = device(available: available)
            device.reads = stillReads(scale: 0.009582)
            world.add(device)
            let samples = capture(world, range: range)
            let written = world.state.withLock { $0.written }
            #expect(!written.contains { $0.contains("in_accel_scale") }, "\(written)")
            #expect(abs((samples.first?.acceleration.y ?? 0) - 9.81) < 0.02)
        }
    }

    @Test func unparseableScalesAreLeftAlone() {
        for (available, current) in [("fast slow", "0.009582"), ("0.009582 0.019163", "n/a")] {
            let world = FakeWorld()
            var device = device(available: available)
            device.values["in_accel_scale"] = current
            device.reads = stillReads(scale: 0.009582)
            world.add(device)
            _ = capture(world, range: .automatic)
            let written = world.state.withLock { $0.written }
            #expect(!written.contains { $0.contains("in_accel_scale") }, "\(available) \(current): \(written)")
        }
    }

    @Test func aRefusedScaleLeavesTheSamplesAtTheOldOne() {
        let world = FakeWorld()
        var device = device()
        device.refusedWrites.insert("in_accel_scale")
        device.reads = stillReads(scale: 0.009582)
        world.add(device)
        let samples = capture(world, range: .atLeast(8))
        #expect(abs((samples.first?.acceleration.y ?? 0) - 9.81) < 0.02)
        #expect(world.state.withLock { $0.devices[0].values["in_accel_scale"] } == "0.009582")
    }
}
