// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import IIOModel
import IIOSensor
import ShakeDetection
import ShakeTestSupport
import Synchronization
import Testing

/// The capture loop against a simulated IIO world: buffered and polled capture, sensors appearing, vanishing
/// mid-shake and returning, and a silent buffer.
struct SensorSourceTests {
    /// A remote context (iiod) that cannot be had: its devices cannot be watched, and the connection is refused.
    final class UnreachableBackend: IIOBackend {
        let tries = Mutex(0)
        func makeContext() throws(IIOError) -> any IIOContextHandle {
            tries.withLock { $0 += 1 }
            throw IIOError(code: 111, operation: "creating the IIO context ip:sensor", reason: "Connection refused")
        }
        func devicesFingerprint() -> String? { nil }
    }

    /// The network link to iiod, the machine behind it or iiod is down: each try costs a connection (over a dead
    /// link, libiio's 5 s timeout), so the tries come further and further apart, from the rescan interval to the
    /// retry interval, instead of every rescan interval.
    @Test func anUnreachableRemoteContextIsTriedWithBackOff() {
        let backend = UnreachableBackend()
        let source = SensorSource(
            backend: backend,
            configuration: .init(rescanInterval: .milliseconds(1), retryInterval: .milliseconds(5), pacedReads: false),
            logger: quietLogger)
        let wakeup = Wakeup()
        var waits: [Double] = []
        source.willRetryContext = { wait in
            waits.append(wait)
            if waits.count == 5 { wakeup.signal() }
        }
        var waiting: [String] = []
        source.run(wakeup: wakeup) { event in
            if case .waiting(let reason) = event { waiting.append(reason) }
        }
        #expect(waits == [0.001, 0.002, 0.004, 0.005, 0.005])
        #expect(backend.tries.withLock { $0 } == 5)
        // Said once, not at every try.
        #expect(waiting.count == 1)
    }

    func source(_ world: FakeWorld, request: DeviceRequest = .automatic) -> SensorSource {
        SensorSource(
            backend: FakeBackend(world: world),
            configuration: .init(
                request: request, rate: 100, rescanInterval: .milliseconds(1), retryInterval: .milliseconds(5),
                pacedReads: false),
            logger: quietLogger, monotonic: world.clock)
    }

    /// Runs the source with a detector until `stop` says so (or a safety limit of iterations); `busy` hears of a
    /// busy sensor.
    func run(
        _ source: SensorSource, busy: (Accelerometer, String) -> Void = { _, _ in },
        stop: @escaping (_ samples: [Sample], _ events: [ShakeEvent], _ breaks: Int) -> Bool,
        onBreak: (Int) -> Void = { _ in }
    ) -> (samples: [Sample], events: [ShakeEvent], breaks: Int) {
        let wakeup = Wakeup()
        var detector = ShakeDetector()
        var samples: [Sample] = []
        var events: [ShakeEvent] = []
        var breaks = 0
        source.run(wakeup: wakeup) { report in
            switch report {
            case .sample(let sample):
                samples.append(sample)
                if let event = detector.process(sample) { events.append(event) }
                if stop(samples, events, breaks) { wakeup.signal() }
            case .broke:
                breaks += 1
                if let event = detector.interrupt() { events.append(event) }
                onBreak(breaks)
                if stop(samples, events, breaks) { wakeup.signal() }
            case .busy(let accelerometer, let advice):
                busy(accelerometer, advice)
            case .capturing, .stopped, .waiting:
                break
            }
        }
        return (samples, events, breaks)
    }

    /// The relay looks at its readers before every wait for samples, whether samples come or not: a sensor that
    /// delivers nothing (a HID sensor reporting only on change, lying still) must not keep it from seeing that
    /// nobody reads it any more. Here the buffer stays empty: the loop still asks, and asks what the detector
    /// follows.
    @Test func everyWaitForSamplesIsAnnouncedEvenWhenNoneCome() {
        let world = FakeWorld()
        world.add(.accelerometer(number: 0))
        world.add(.trigger(number: 0, name: "fake-accel-dev0"))
        let source = source(world)
        let wakeup = Wakeup()
        var announced = 0
        var asked = 0
        var samples = 0
        source.run(
            wakeup: wakeup,
            motionUnderWay: {
                asked += 1
                return false
            },
            beforeRead: {
                announced += 1
                if announced >= 5 { wakeup.signal() }
            },
            report: { report in
                if case .sample = report { samples += 1 }
            })
        #expect(announced >= 5)
        #expect(samples == 0)
        #expect(asked > 0)
    }

    @Test func bufferedCaptureDeliversEverySampleInTheDeviceFrame() {
        let trace = synthesize {
            $0.before = 1; $0.after = 1; $0.duration = 1.2
        }
        let world = FakeWorld()
        var device = FakeWorld.Device.accelerometer(number: 0)
        device.info.attributes.insert("in_accel_mount_matrix")
        device.values["in_accel_mount_matrix"] = "0, 1, 0; -1, 0, 0; 0, 0, 1"
        device.reads = FakeScans.reads(trace)
        world.add(device)
        world.add(.trigger(number: 0, name: "fake-accel-dev0"))
        let result = run(source(world)) { samples, _, _ in samples.count >= trace.count }
        #expect(result.samples.count == trace.count)
        #expect(result.samples.map(\.time) == trace.map { ($0.time * 1e9).rounded() / 1e9 })
        // The sensor's y is the device's x.
        let sample = result.samples[10]
        #expect(abs(sample.acceleration.x - (trace[10].acceleration.y / 0.01).rounded() * 0.01) < 1e-9)
        #expect(outline(result.events) == ["began", "ended"])
        let written = world.state.withLock { $0.written }
        #expect(written.contains("iio:device0/sampling_frequency=100"))
        #expect(written.contains("iio:device0/trigger=trigger0"))
        #expect(written.contains("iio:device0/buffer channels=accel_x,accel_y,accel_z,timestamp samples=20"))
    }

    @Test func aSensorAppearingLaterIsPickedUp() {
        let world = FakeWorld()
        var device = FakeWorld.Device.accelerometer(number: 0)
        device.reads = FakeScans.reads(
            synthesize {
                $0.motion = .none; $0.before = 1; $0.after = 0
            })
        world.state.withLock { $0.appearing = (after: 20, device: device) }
        let result = run(source(world)) { samples, _, _ in samples.count >= 50 }
        #expect(result.samples.count >= 50)
        #expect(world.state.withLock { $0.contextsCreated } >= 2)
    }

    @Test func aSensorVanishingMidShakeCancelsItAndCaptureResumesWhenItReturns() {
        let trace = synthesize {
            $0.before = 1; $0.after = 1.5; $0.duration = 1.5
        }
        // The sensor vanishes 0.6 s into the shake.
        let cut = trace.firstIndex { $0.time >= 1.6 }!
        let world = FakeWorld()
        var device = FakeWorld.Device.accelerometer(number: 0)
        device.reads = FakeScans.reads(Array(trace[..<cut]))
        device.vanishWhenDrained = true
        world.add(device)
        var returning = FakeWorld.Device.accelerometer(number: 0)
        returning.reads = FakeScans.reads(trace.map { Sample(time: $0.time + 10, acceleration: $0.acceleration) })
        let result = run(source(world)) { samples, _, _ in
            samples.count >= cut + trace.count
        } onBreak: { breaks in
            if breaks == 1 { world.add(returning) }
        }
        #expect(result.breaks == 1)
        #expect(result.samples.count == cut + trace.count)
        #expect(outline(result.events) == ["began", "cancelled(interrupted)", "began", "ended"])
    }

    /// A read that fails ends the stream before the buffer is stopped, not after: stopping a buffer read through
    /// iiod whose network link failed waits for iiod's answer (up to the context's timeout), and a shake in
    /// progress must be cancelled at the failed read. The break is reported once.
    @Test func aFailedReadBreaksTheStreamBeforeTheBufferIsStopped() {
        let world = FakeWorld()
        var device = FakeWorld.Device.accelerometer(number: 0)
        device.reads = FakeScans.reads(
            synthesize {
                $0.motion = .none; $0.before = 0.5; $0.after = 0
            })
        device.vanishWhenDrained = true
        world.add(device)
        let source = source(world)
        let wakeup = Wakeup()
        var reports: [String] = []
        source.run(wakeup: wakeup) { event in
            switch event {
            case .broke:
                reports.append(world.state.withLock { $0.enabled.contains("iio:device0") } ? "broke (open)" : "broke")
            case .stopped:
                reports.append("stopped")
                wakeup.signal()
            default: break
            }
        }
        #expect(reports == ["broke (open)", "stopped"])
    }

    @Test func aSilentBufferFallsBackToPolling() {
        let world = FakeWorld()
        var device = FakeWorld.Device.accelerometer(number: 0)
        device.reads = FakeScans.reads(
            synthesize {
                $0.motion = .none; $0.before = 0.5; $0.after = 0
            })
        world.add(device)
        let buffered = device.reads.count * 20
        let result = run(source(world)) { samples, _, _ in samples.count >= buffered + 3 }
        #expect(result.breaks == 1)
        let polled = result.samples.suffix(3)
        #expect(polled.allSatisfy { $0.acceleration == Vector3(x: 0, y: 9.81, z: 0) })
    }

    @Test func aDeviceWithoutABufferIsPolled() {
        let world = FakeWorld()
        world.add(.accelerometer(number: 0, buffered: false))
        let result = run(source(world)) { samples, _, _ in samples.count >= 3 }
        #expect(result.samples.count == 3)
        #expect(zip(result.samples, result.samples.dropFirst()).allSatisfy { $0.time < $1.time })
    }
}

/// A sensor another program holds, and leaving the sensor as it was found.
struct SensorSourceTakeoverTests {
    @Test func aBusySensorIsNamedAndRetriedWithBackoffUntilItIsFree() {
        let world = FakeWorld()
        var device = FakeWorld.Device.accelerometer(number: 0)
        device.reads = FakeScans.reads(
            synthesize {
                $0.motion = .none; $0.before = 1; $0.after = 0
            })
        world.add(device)
        world.state.withLock { $0.busyOpens["iio:device0"] = 2 }
        let source = SensorSourceTests().source(world)
        var busy: [String] = []
        source.findHolders = { node in node == "/dev/iio:device0" ? [.init(pid: 812, command: "iio-sensor-proxy")] : []
        }
        let start = ContinuousClock.now
        let result = SensorSourceTests().run(
            source, busy: { accelerometer, advice in busy.append("\(accelerometer.id): \(advice)") }
        ) { samples, _, _ in samples.count >= 10 }
        #expect(result.samples.count >= 10)
        #expect(busy.count == 2)
        #expect(busy.first?.hasPrefix("iio:device0: /dev/iio:device0 is held by iio-sensor-proxy (pid 812)") == true)
        // Waited 1 s, then 2 s, instead of giving up on the buffer or polling beside the other program.
        #expect(ContinuousClock.now - start >= .seconds(3))
        #expect(!world.state.withLock { $0.written }.contains { $0.contains("polling") })
    }

    @Test func aBusySensorAlreadyHandedOverAsksForIIOSensorProxysRestartNotTheRule() {
        let world = FakeWorld()
        var device = FakeWorld.Device.accelerometer(number: 0)
        device.reads = FakeScans.reads(
            synthesize {
                $0.motion = .none; $0.before = 1; $0.after = 0
            })
        // The hand-over rule ran on it (81-shaked-iio-sensor-proxy.rules), but iio-sensor-proxy still holds it.
        device.udev = ["SHAKED_OWNS": "1"]
        world.add(device)
        world.state.withLock { $0.busyOpens["iio:device0"] = 1 }
        let source = SensorSourceTests().source(world)
        var busy: [String] = []
        source.findHolders = { _ in [.init(pid: 812, command: "iio-sensor-proxy")] }
        let result = SensorSourceTests().run(source, busy: { _, advice in busy.append(advice) }) { samples, _, _ in
            samples.count >= 10
        }
        #expect(result.samples.count >= 10)
        #expect(busy.count == 1)
        #expect(busy.first?.contains("systemctl restart iio-sensor-proxy.service") == true, "\(busy)")
        #expect(busy.first?.contains("81-shaked-iio-sensor-proxy.rules") == false, "\(busy)")
    }

    /// iio-sensor-proxy, stopped so that shaked can have the sensor the hand-over gave it, leaves its buffer on.
    @Test func aBufferLeftOnByAProgramThatEndedIsTurnedOffOnASensorHandedOver() {
        let world = FakeWorld()
        var device = FakeWorld.Device.accelerometer(number: 0)
        device.reads = FakeScans.reads(
            synthesize {
                $0.motion = .none; $0.before = 1; $0.after = 0
            })
        device.udev = ["SHAKED_OWNS": "1"]
        world.add(device)
        world.state.withLock { _ = $0.enabled.insert("iio:device0") }
        let source = SensorSourceTests().source(world)
        source.findHolders = { _ in [] }
        source.findSuspects = { [] }
        source.nodeIsFree = { _ in true }
        let wakeup = Wakeup()
        var samples = 0
        var busy = 0
        source.run(wakeup: wakeup) { report in
            switch report {
            case .busy:
                busy += 1
                if busy >= 2 { wakeup.signal() }
            case .sample:
                samples += 1
                if samples >= 10 { wakeup.signal() }
            default:
                break
            }
        }
        #expect(samples >= 10)
        #expect(busy == 0)
        let (written, enabled) = world.state.withLock { ($0.written, $0.enabled) }
        #expect(written.first == "iio:device0/buffer/enable=0", "\(written)")
        // Not turned on again when capture ends: the program that ran it is gone.
        #expect(!enabled.contains("iio:device0"))
    }

    @Test func aBufferRunningOnANodeSomebodyHoldsIsLeftAlone() {
        let world = FakeWorld()
        var device = FakeWorld.Device.accelerometer(number: 0)
        device.udev = ["SHAKED_OWNS": "1"]
        world.add(device)
        world.state.withLock { _ = $0.enabled.insert("iio:device0") }
        let source = SensorSourceTests().source(world)
        source.findHolders = { _ in [] }
        source.findSuspects = { [] }
        source.nodeIsFree = { _ in false }
        let wakeup = Wakeup()
        var busy = 0
        source.run(wakeup: wakeup) { report in
            guard case .busy = report else { return }
            busy += 1
            wakeup.signal()
        }
        #expect(busy == 1)
        #expect(world.state.withLock { $0.enabled.contains("iio:device0") })
    }

    @Test func theSensorIsLeftAsItWasFound() {
        let world = FakeWorld()
        var device = FakeWorld.Device.accelerometer(number: 0)
        device.values["trigger/current_trigger"] = "someone-elses"
        device.values["buffer/length"] = "128"
        device.values["buffer/watermark"] = "1"
        device.values["sampling_frequency"] = "12.5"
        device.reads = FakeScans.reads(
            synthesize {
                $0.motion = .none; $0.before = 1; $0.after = 0
            })
        world.add(device)
        world.add(.trigger(number: 0, name: "fake-accel-dev0"))
        let result = SensorSourceTests().run(SensorSourceTests().source(world)) { samples, _, _ in samples.count >= 10 }
        #expect(result.samples.count >= 10)
        let (values, enabled, written) = world.state.withLock { state in
            (state.devices[0].values, state.enabled, state.written)
        }
        // While capturing, shaked had its own trigger, rate, length and watermark.
        #expect(written.contains("iio:device0/trigger=trigger0"))
        #expect(written.contains("iio:device0/sampling_frequency=100"))
        #expect(values["trigger/current_trigger"] == "someone-elses")
        #expect(values["buffer/length"] == "128")
        #expect(values["buffer/watermark"] == "1")
        #expect(values["sampling_frequency"] == "12.5")
        #expect(!enabled.contains("iio:device0"))
    }
}

/// A sensor that appears while the daemon runs, opened before udev has given the daemon's group its attributes
/// (60-shaked.rules changes them a moment after the node is made).
struct SensorSourcePermissionTests {
    func source(_ world: FakeWorld) -> SensorSource {
        SensorSource(
            backend: FakeBackend(world: world),
            configuration: .init(
                rate: 100, rescanInterval: .milliseconds(1), retryInterval: .milliseconds(5), pacedReads: false,
                permissionRetryFirst: 0.001),
            logger: quietLogger, monotonic: world.clock)
    }

    @Test func setUpRefusedUntilUdevGrantsTheAttributesIsTriedAgainAndCapturesBuffered() {
        let world = FakeWorld()
        var device = FakeWorld.Device.accelerometer(number: 0)
        let trace = synthesize {
            $0.before = 1; $0.after = 1; $0.duration = 1.2
        }
        device.reads = FakeScans.reads(trace)
        world.add(device)
        world.add(.trigger(number: 0, name: "fake-accel-dev0"))
        // udev gets to it after a few looks at the devices (each try makes a new context).
        world.state.withLock { $0.ungranted["iio:device0"] = 6 }
        let result = SensorSourceTests().run(source(world)) { samples, _, _ in samples.count >= trace.count }
        // Every sample of the trace, from the buffer (polling would read the constant _raw values).
        #expect(result.samples.count == trace.count)
        #expect(outline(result.events) == ["began", "ended"])
        let written = world.state.withLock { $0.written }
        #expect(written.contains("iio:device0/sampling_frequency=100"))
        #expect(written.contains("iio:device0/buffer channels=accel_x,accel_y,accel_z,timestamp samples=20"))
    }

    @Test func setUpStillRefusedAfterTheRetriesFallsBackToPolling() {
        let world = FakeWorld()
        var device = FakeWorld.Device.accelerometer(number: 0)
        device.reads = FakeScans.reads(
            synthesize {
                $0.motion = .none; $0.before = 1; $0.after = 0
            })
        world.add(device)
        world.state.withLock { $0.ungranted["iio:device0"] = .some(nil) }
        let result = SensorSourceTests().run(source(world)) { samples, _, _ in samples.count >= 3 }
        #expect(result.samples.count == 3)
        #expect(result.samples.allSatisfy { $0.acceleration == Vector3(x: 0, y: 9.81, z: 0) })
        #expect(!world.state.withLock { $0.written }.contains { $0.contains("buffer channels") })
    }
}
