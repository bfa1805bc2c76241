// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import Foundation
import IIOModel
import IIOSensor
import ShakeDetection
import Synchronization
import Testing

/// What the buffered driver asks of the kernel before it enables a buffer, the clock of its sample times, and
/// the pace of its reads.
struct BufferedDriverTests {
    let layout = ScanLayout([
        (.x, 0, ScanType(bits: 16, storageBits: 16)), (.y, 1, ScanType(bits: 16, storageBits: 16)),
        (.z, 2, ScanType(bits: 16, storageBits: 16)), (.timestamp, 3, .timestamp),
    ])

    func world(_ change: (inout FakeWorld.Device) -> Void = { _ in }) -> (FakeWorld, Accelerometer) {
        let world = FakeWorld()
        var device = FakeWorld.Device.accelerometer(number: 0)
        change(&device)
        world.add(device)
        world.add(.trigger(number: 0, name: "fake-accel-dev0"))
        let context = try! FakeBackend(world: world).makeContext()
        let accelerometer = AccelerometerDiscovery.discover(in: context, logger: quietLogger)[0]
        return (world, accelerometer)
    }

    @Test func theClockLengthAndWatermarkAreSetBeforeTheBufferIsEnabled() throws {
        let (world, accelerometer) = world()
        let context = try FakeBackend(world: world).makeContext()
        let driver = try BufferedDriver(
            accelerometer: accelerometer, context: context, rate: 100, logger: quietLogger, monotonic: world.clock,
            paced: false)
        let written = world.state.withLock { $0.written }
        let start = try #require(written.firstIndex { $0.hasPrefix("iio:device0/buffer channels=") })
        let before = written[..<start]
        #expect(before.contains("iio:device0/current_timestamp_clock=monotonic"))
        #expect(before.contains("iio:device0/buffer/length=128"))
        #expect(before.contains("iio:device0/buffer/watermark=20"))
        let length = try #require(before.firstIndex(of: "iio:device0/buffer/length=128"))
        let watermark = try #require(before.firstIndex(of: "iio:device0/buffer/watermark=20"))
        #expect(length < watermark)
        // Like the kernel, the fake refuses them while the buffer is enabled: writing them after would fail.
        #expect(throws: IIOError.self) {
            try context.writeBuffer(device: "iio:device0", attribute: "watermark", value: "20")
        }
        #expect(driver.summary.contains("timestamps"))
        driver.stop()
        try context.writeBuffer(device: "iio:device0", attribute: "watermark", value: "20")
    }

    @Test func timestampsOnTheRealtimeClockAreMovedOntoTheMonotonicClock() throws {
        let (world, accelerometer) = world { device in
            device.values["current_timestamp_clock"] = "realtime"
            device.refusedWrites = ["current_timestamp_clock"]
        }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let realtime = Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
        world.state.withLock {
            $0.devices[0].reads = [
                layout.encode(x: 0, y: 981, z: 0, timestamp: realtime)
                    + layout.encode(x: 0, y: 981, z: 0, timestamp: realtime + 10_000_000)
            ]
        }
        let context = try FakeBackend(world: world).makeContext()
        let driver = try BufferedDriver(
            accelerometer: accelerometer, context: context, rate: 100, logger: quietLogger, monotonic: world.clock,
            paced: false)
        #expect(driver.summary.contains("realtime"))
        guard case .samples(let samples) = try driver.next(wakeup: Wakeup()) else {
            Issue.record("no samples")
            return
        }
        let monotonic = SensorSource.monotonicSeconds()
        #expect(samples.count == 2)
        #expect(abs(samples[0].time - monotonic) < 1)
        #expect(abs(samples[1].time - samples[0].time - 0.01) < 1e-6)
    }

    @Test func monotonicTimestampsAreKeptAsTheyAre() throws {
        let (world, accelerometer) = world()
        world.state.withLock {
            $0.devices[0].reads = [layout.encode(x: 0, y: 981, z: 0, timestamp: 5_000_000_000)]
        }
        let context = try FakeBackend(world: world).makeContext()
        let driver = try BufferedDriver(
            accelerometer: accelerometer, context: context, rate: 100, logger: quietLogger, monotonic: world.clock,
            paced: false)
        guard case .samples(let samples) = try driver.next(wakeup: Wakeup()) else {
            Issue.record("no samples")
            return
        }
        #expect(samples.map(\.time) == [5])
    }

    /// The kernel wakes a buffer's poller at every scan, whatever the watermark: paced reads sleep a read's worth
    /// of scans (20 at 100 Hz, 0.2 s) between reads instead.
    /// Only the relay reads (5 Hz, every 0.7 s): a read takes 0.7 s of scans (4), the watermark is a read's worth,
    /// and the buffer holds at least 128 scans (four reads' worth would be 16).
    @Test func theRelayAlonesBufferHoldsItsReadsWorth() throws {
        let (world, accelerometer) = world()
        let context = try FakeBackend(world: world).makeContext()
        let driver = try BufferedDriver(
            accelerometer: accelerometer, context: context, rate: 5, logger: quietLogger, monotonic: world.clock,
            relayOnly: true)
        let written = world.state.withLock { $0.written }
        #expect(written.contains("iio:device0/buffer/length=128"))
        #expect(written.contains("iio:device0/buffer/watermark=4"))
        #expect(written.contains { $0.hasPrefix("iio:device0/buffer channels=") && $0.hasSuffix("samples=4") })
        #expect(driver.mode == .relay)
        #expect(driver.summary.contains("4 scans per read"))
    }

    /// libiio sizes the kernel buffer itself when it starts it (a read's worth of scans times its count of kernel
    /// buffers, 4 by default), over the length written before: 16 scans for the relay's reads of 4, which a
    /// sensor sending 100 Hz (the VM's) fills within 0.16 s of a read; the kernel then drops the newest scans and
    /// each read found what came just after the one before (a reading 0.7 s old at iio-sensor-proxy's poll, 1.4 s
    /// after a read at an open). For the relay alone the driver asks libiio for enough kernel buffers that the
    /// length stays 128; capture for listeners keeps four reads' worth.
    @Test func theKernelBufferStillHolds128ScansOnceLibiioStartedIt() throws {
        for (rate, relayOnly, length) in [(5.0, true, "128"), (100, false, "80"), (1000, false, "800")] {
            let (world, accelerometer) = world()
            let context = try FakeBackend(world: world).makeContext()
            let driver = try BufferedDriver(
                accelerometer: accelerometer, context: context, rate: rate, logger: quietLogger,
                monotonic: world.clock, relayOnly: relayOnly)
            let values = world.state.withLock { $0.devices.first { $0.info.id == "iio:device0" }?.values ?? [:] }
            #expect(values["buffer/length"] == length, "rate \(rate)")
            driver.stop()
        }
    }

    /// A read takes everything the kernel holds, not a read's worth: left behind, the oldest scans would be the
    /// next read's while a full kernel buffer drops the newest.
    @Test func aReadTakesEverythingTheKernelHolds() throws {
        let (world, accelerometer) = world()
        let full = (0..<20).map { layout.encode(x: 0, y: 981, z: 0, timestamp: Int64($0 + 1) * 10_000_000) }
        let rest = (20..<25).map { layout.encode(x: 0, y: 981, z: 0, timestamp: Int64($0 + 1) * 10_000_000) }
        world.state.withLock { $0.devices[0].reads = [Array(full.joined()), Array(rest.joined())] }
        let context = try FakeBackend(world: world).makeContext()
        let driver = try BufferedDriver(
            accelerometer: accelerometer, context: context, rate: 100, logger: quietLogger, monotonic: world.clock,
            paced: false)
        var delivered: [Sample] = []
        while delivered.isEmpty {
            if case .samples(let samples) = try driver.next(wakeup: Wakeup()) { delivered = samples }
        }
        #expect(delivered.count == 25)
    }

    /// A sensor that sends 100 Hz while the relay alone reads it at 5 Hz: a read late by a second takes the
    /// whole second (100 scans, 25 reads' worth), newest included. Taking five reads' worth, as it did, left the
    /// newest for later while the kernel's buffer, full, dropped what came next: the relay sent iio-sensor-proxy
    /// readings most of a second old.
    @Test func theRelayTakesASecondOfAFasterSensorNewestIncluded() throws {
        let (world, accelerometer) = world()
        let scans = (0..<100).map { layout.encode(x: 0, y: 981, z: 0, timestamp: Int64($0 + 1) * 10_000_000) }
        let reads = stride(from: 0, to: 100, by: 4).map { Array(scans[$0..<$0 + 4].joined()) }
        world.state.withLock { $0.devices[0].reads = reads }
        let context = try FakeBackend(world: world).makeContext()
        let driver = try BufferedDriver(
            accelerometer: accelerometer, context: context, rate: 5, logger: quietLogger, monotonic: world.clock,
            paced: false, relayOnly: true)
        var delivered: [Sample] = []
        while delivered.isEmpty {
            if case .samples(let samples) = try driver.next(wakeup: Wakeup()) { delivered = samples }
        }
        #expect(delivered.count == 100)
        #expect(delivered.last?.time == 1.0, "the newest scan, at 1 s")
    }

    @Test func pacedReadsAreAReadsWorthOfScansApart() throws {
        let (world, accelerometer) = world()
        let read = layout.encode(x: 0, y: 981, z: 0, timestamp: 1)
        world.state.withLock { $0.devices[0].reads = [read, read, read] }
        let context = try FakeBackend(world: world).makeContext()
        let driver = try BufferedDriver(
            accelerometer: accelerometer, context: context, rate: 100, logger: quietLogger, monotonic: world.clock)
        let wakeup = Wakeup()
        let start = ContinuousClock.now
        var reads = 0
        while reads < 3 {
            if case .samples = try driver.next(wakeup: wakeup) { reads += 1 }
        }
        #expect(ContinuousClock.now - start >= .milliseconds(390))
        // A stop ends the sleep at once.
        world.state.withLock { $0.devices[0].reads = [read] }
        wakeup.signal()
        #expect(try driver.next(wakeup: wakeup) == .stopped)
    }

    /// While only the relay reads, a read waits as its timing plans (``PollPhase``): one that waits for the open
    /// of the relay's node happens as soon as the node is seen opened, and the open is reported with its time.
    @Test func theRelaysReadWaitsForTheOpenOfItsNodeWhenPlannedSo() throws {
        let (world, accelerometer) = world()
        let read = layout.encode(x: 0, y: 981, z: 0, timestamp: 1)
        world.state.withLock { $0.devices[0].reads = [read, read, read] }
        let context = try FakeBackend(world: world).makeContext()
        let driver = try BufferedDriver(
            accelerometer: accelerometer, context: context, rate: 5, logger: quietLogger, monotonic: world.clock,
            relayOnly: true)
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer {
            close(ends[0])
            close(ends[1])
        }
        let timing = PlannedTiming(watch: ends[0])
        driver.relayTiming = timing
        let wakeup = Wakeup()
        // The first read: at once (nothing planned yet).
        guard case .samples = try driver.next(wakeup: wakeup) else {
            Issue.record("the first read delivered nothing")
            return
        }
        // The node opened: the read planned at its open (or in an hour) happens now.
        var byte: UInt8 = 1
        #expect(write(ends[1], &byte, 1) == 1)
        guard case .samples = try driver.next(wakeup: wakeup) else {
            Issue.record("the read at the open delivered nothing")
            return
        }
        #expect(timing.state.withLock { $0.plans } == 1)
        #expect(timing.state.withLock { $0.opens } == 1)
        // A read planned for a time past: at once, without the watch, the opens before it counted first.
        #expect(timing.state.withLock { $0.counts } == 0)
        timing.state.withLock { $0.next = PollPhase.Plan.read(at: 0) }
        guard case .samples = try driver.next(wakeup: wakeup) else {
            Issue.record("the planned read delivered nothing")
            return
        }
        #expect(timing.state.withLock { $0.plans } == 2)
        #expect(timing.state.withLock { $0.counts } == 1)
    }
}

/// A relay timing that plans what it is told, and counts the opens reported.
final class PlannedTiming: RelayReadTiming {
    struct State {
        var next: PollPhase.Plan = .readAtOpen(until: 1e9)
        var plans = 0
        var opens = 0
        /// The counts of opens before a planned read.
        var counts = 0
    }
    let state = Mutex(State())
    let watch: Int32

    init(watch: Int32) { self.watch = watch }

    func nextRead(now: Double) -> (plan: PollPhase.Plan, watch: Int32?)? {
        state.withLock { state in
            state.plans += 1
            if case .readAtOpen = state.next { return (.readAtOpen(until: now + 3600), watch) }
            return (state.next, watch)
        }
    }

    func watchReady(at time: Double) -> Bool {
        var byte: UInt8 = 0
        guard read(watch, &byte, 1) == 1 else { return false }
        state.withLock { $0.opens += 1 }
        return true
    }

    func willRead() {
        state.withLock { $0.counts += 1 }
    }
}
