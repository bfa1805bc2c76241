// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import IIOModel
import IIOSensor
import ShakeDetection
import ShakeTestSupport
import Synchronization
import Testing

/// Breaks in a buffered sensor's stream that the sensor does not announce by vanishing: its timestamps leaping
/// (a suspend and resume, a clock step), and a remote buffer read through iiod, which cannot be waited on.
struct StreamBreakTests {
    @Test(arguments: [
        (1.00, 1.01, ScanContinuity.continuous),
        (1.00, 2.00, .continuous),
        (1.00, 2.50, .jumpedAhead(seconds: 1.5)),
        (5.00, 4.00, .wentBack(seconds: 1)),
    ])
    func theStepBetweenTwoScansIsJudgedAgainstTheLimit(previous: Double, current: Double, expected: ScanContinuity) {
        let continuity = ScanContinuity.between(previous: previous, current: current, limit: 1)
        #expect(continuity == expected)
        #expect(continuity.breaksStream == (expected != .continuous))
        #expect((continuity.reason == nil) == (expected == .continuous))
    }

    func world(_ device: FakeWorld.Device) -> FakeWorld {
        let world = FakeWorld()
        world.add(device)
        world.add(.trigger(number: 0, name: "fake-accel-dev0"))
        return world
    }

    /// A shake at 1-2.5 s whose timestamps leap 2 s ahead 0.1 s before its end (a suspend and resume mid-shake):
    /// the shake is cancelled `interrupted` at the last scan before the leap, even with a detector whose own
    /// gap limit (`max_gap`, up to 60 s) would have bridged it, and its rest starts no shake of its own.
    @Test func timestampsLeapingAheadMidShakeInterruptIt() {
        let trace = synthesize {
            $0.before = 1; $0.after = 1.5; $0.duration = 1.5
        }
        let leap = 2.4
        let moved = trace.map { $0.time < leap ? $0 : Sample(time: $0.time + 2, acceleration: $0.acceleration) }
        var device = FakeWorld.Device.accelerometer(number: 0)
        device.reads = FakeScans.reads(moved)
        let world = world(device)
        let source = SensorSource(
            backend: FakeBackend(world: world),
            configuration: .init(
                rate: 100, rescanInterval: .milliseconds(1), retryInterval: .milliseconds(5), pacedReads: false),
            logger: quietLogger, monotonic: world.clock)
        var settings = DetectorSettings()
        settings.maxGap = 5
        var detector = ShakeDetector(settings: settings)
        var events: [ShakeEvent] = []
        var count = 0
        var breaks: [String] = []
        var kept: [Bool] = []
        let wakeup = Wakeup()
        source.run(wakeup: wakeup) { report in
            switch report {
            case .sample(let sample):
                count += 1
                if let event = detector.process(sample) { events.append(event) }
                if count >= moved.count { wakeup.signal() }
            case .broke(let reason, let sensorKept):
                breaks.append(reason)
                kept.append(sensorKept)
                if let event = detector.interrupt() { events.append(event) }
            case .capturing, .stopped, .waiting, .busy:
                break
            }
        }
        #expect(count == moved.count)
        #expect(breaks.count == 1)
        #expect(breaks.first?.contains("jumped ahead") == true)
        // Capture goes on from the same sensor: the break says so, and the daemon keeps naming it.
        #expect(kept == [true])
        #expect(outline(events) == ["began", "cancelled(interrupted)"])
        if events.count == 2 {
            #expect(events[1].time <= leap && events[1].time > leap - 0.05, "\(events)")
        }
    }

    @Test(arguments: [
        (0.5, 0.0, BufferSilence.waiting),
        (2.5, 0.0, .silent(seconds: 2.5)),
        (16.0, 2.0, .slept(seconds: 2)),
        (0.3, 0.01, .waiting),
    ])
    func silenceIsJudgedBySleepFirst(silent: Double, slept: Double, expected: BufferSilence) {
        #expect(BufferSilence.judge(silent: silent, slept: slept, limit: 2) == expected)
    }

    /// The system's time asleep, as a test moves it.
    final class Sleeps: Sendable {
        let seconds = Mutex(100.0)
        var clock: @Sendable () -> Double { { [self] in seconds.withLock { $0 } } }
        func sleep(_ time: Double) { seconds.withLock { $0 += time } }
    }

    func scans(from start: Double, count: Int = 20) -> [UInt8] {
        Array(
            (0..<count).map {
                FakeScans.layout.encode(x: 0, y: 981, z: 0, timestamp: Int64((start + Double($0) * 0.01) * 1e9))
            }
            .joined())
    }

    /// The fake accelerometer's buffered driver, unpaced, on `world`'s clock, with `sleeps` as the time asleep.
    func sleepingDriver(_ world: FakeWorld, _ sleeps: Sleeps) throws -> BufferedDriver {
        let context = try FakeBackend(world: world).makeContext()
        let accelerometer = AccelerometerDiscovery.discover(in: context, logger: quietLogger)[0]
        return try BufferedDriver(
            accelerometer: accelerometer, context: context, rate: 100, logger: quietLogger, monotonic: world.clock,
            paced: false, asleep: sleeps.clock)
    }

    /// On the way into a suspend to RAM the kernel may take many seconds of the monotonic clock with user space
    /// frozen (15 s in the emulated guest): the buffer is silent past its limit, yet it is not at fault. The
    /// stream breaks and the buffer is kept, where it used to be given up for polling.
    @Test func aSleepIsNotSilence() throws {
        var device = FakeWorld.Device.accelerometer(number: 0)
        device.reads = [scans(from: 5)]
        let world = world(device)
        let sleeps = Sleeps()
        let driver = try sleepingDriver(world, sleeps)
        guard case .samples = try driver.next(wakeup: Wakeup()) else {
            Issue.record("no samples")
            return
        }
        world.advance(16)
        sleeps.sleep(2)
        #expect(try driver.next(wakeup: Wakeup()) == .broken(before: [], reason: "the system slept", after: []))
        // Its silence counts afresh from the sleep.
        #expect(try driver.next(wakeup: Wakeup()) == .nothing)
    }

    /// A sleep short enough that the timestamps do not leap past the limit still breaks the stream, before the
    /// first data after it.
    @Test func dataAfterASleepStartsANewStream() throws {
        var device = FakeWorld.Device.accelerometer(number: 0)
        device.reads = [scans(from: 5)]
        let world = world(device)
        let sleeps = Sleeps()
        let driver = try sleepingDriver(world, sleeps)
        guard case .samples = try driver.next(wakeup: Wakeup()) else {
            Issue.record("no samples")
            return
        }
        sleeps.sleep(30)
        world.state.withLock { $0.devices[0].reads = [scans(from: 5.4)] }
        guard case .broken(let before, let reason, let after) = try driver.next(wakeup: Wakeup()) else {
            Issue.record("no break")
            return
        }
        #expect(before.isEmpty)
        #expect(reason == "the system slept")
        #expect(after.count == 20)
    }

    /// A sensor polled across a suspend to RAM: its samples are timed on the monotonic clock, which stops while
    /// the system sleeps, so the way into and out of a short sleep can take less of it than the detector's
    /// largest gap. The stream breaks before the first sample after the sleep, as a buffer's does.
    @Test func aPolledStreamBreaksAcrossASleep() throws {
        let world = world(.accelerometer(number: 0))
        let sleeps = Sleeps()
        let context = try FakeBackend(world: world).makeContext()
        let accelerometer = AccelerometerDiscovery.discover(in: context, logger: quietLogger)[0]
        let driver = PolledDriver(
            accelerometer: accelerometer, context: context, rate: 100, logger: quietLogger, monotonic: world.clock,
            asleep: sleeps.clock)
        guard case .samples(let first) = try driver.next(wakeup: Wakeup()) else {
            Issue.record("no sample")
            return
        }
        world.advance(0.01)
        #expect(try driver.next(wakeup: Wakeup()) != .nothing)
        // A sleep of 30 s that took 0.1 s of the monotonic clock, less than the detector's max_gap (0.5 s).
        sleeps.sleep(30)
        world.advance(0.1)
        guard case .broken(let before, let reason, let after) = try driver.next(wakeup: Wakeup()) else {
            Issue.record("no break across the sleep")
            return
        }
        #expect(before.isEmpty)
        #expect(reason == "the system slept")
        #expect(after.count == 1)
        #expect(after[0].time - first[0].time < 0.5)
        // The stream goes on after it.
        world.advance(0.01)
        guard case .samples = try driver.next(wakeup: Wakeup()) else {
            Issue.record("no sample after the break")
            return
        }
    }

    /// A buffer read through iiod (libiio's network backend) cannot be polled and has no non-blocking mode: the
    /// driver reads it with blocking reads instead of failing on the wait.
    @Test func aRemoteBufferIsReadWithBlockingReads() throws {
        let layout = FakeScans.layout
        var device = FakeWorld.Device.accelerometer(number: 0)
        device.remote = true
        device.reads = [
            layout.encode(x: 0, y: 981, z: 0, timestamp: 5_000_000_000)
                + layout.encode(x: 0, y: 981, z: 0, timestamp: 5_010_000_000)
        ]
        let world = world(device)
        let context = try FakeBackend(world: world).makeContext()
        let accelerometer = AccelerometerDiscovery.discover(in: context, logger: quietLogger)[0]
        let driver = try BufferedDriver(
            accelerometer: accelerometer, context: context, rate: 100, logger: quietLogger, monotonic: world.clock,
            paced: false)
        guard case .samples(let samples) = try driver.next(wakeup: Wakeup()) else {
            Issue.record("no samples")
            return
        }
        #expect(samples.map(\.time) == [5, 5.01])
        // A remote sensor that sends nothing fails the read at the context's timeout: the capture connects again.
        #expect(throws: SensorFailure.self) { _ = try driver.next(wakeup: Wakeup()) }
        driver.stop()
    }
}
