// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import IIOSensor
import Logging
import NumberFormat
import ServiceLifecycle
import UInput

#if canImport(Glibc)
    import Glibc
#endif

/// Where the relay's readings go: the uinput accelerometer (a stand-in in tests).
protocol RelayOutput: AnyObject {
    func report(x: Int32, y: Int32, z: Int32) throws(UInputError)
}

extension VirtualAccelerometer: RelayOutput {}

/// The relay's decisions, made on the source's thread, and its readings: the ``AccelerometerRelay`` while the
/// relay is on; its readings written to the device from that thread; the making and removing of the device
/// carried to the ``RelayService``, and the service's own tries at making its device again.
final class RelayLink: Sendable {
    /// What the relay service is handed: an action of the relay (the device to make or remove), or a try that
    /// is due. Readings are not handed over: the source's thread writes them (``flush()``).
    enum Step: Sendable, Equatable {
        case action(AccelerometerRelay.Action)
        /// Try again to make the device, if the try is not stale (``RelayRetry/due(generation:)``).
        case retry(generation: Int)
    }

    /// The device the readings are written to while it exists, and the newest reading, which a device made
    /// after it gets at once. Used under the lock only, so the device (not thread-safe) has one user at a time.
    private struct Output: @unchecked Sendable {
        var device: (any RelayOutput)?
        var latest: (x: Int32, y: Int32, z: Int32)?
        /// Writes that failed in a row.
        var failures = 0
    }

    private let relay = Locked(AccelerometerRelay())
    private let stream = AsyncStream.makeStream(of: Step.self)
    private let capture: CaptureSwitch
    private let logger: Logger
    private let output = Locked(Output())
    /// Whether anything reads the relay's device: while nothing does, capture does not run for its sake.
    let readers: RelayReaders

    init(capture: CaptureSwitch, logger: Logger) {
        self.capture = capture
        self.logger = logger
        readers = RelayReaders(capture: capture, logger: logger)
    }

    var steps: AsyncStream<Step> { stream.stream }

    /// The newest reading decided since the last read of the sensor, not written yet. iio-sensor-proxy reads
    /// the device once a poll, so of a read's readings (up to four while the device turns) only the newest
    /// matters: one write a read at most.
    private let pending = Locked<(x: Int32, y: Int32, z: Int32)?>(nil)

    /// Runs a step of the relay: a reading is written at the next ``flush()``; the device to make or remove goes
    /// to the relay service at once (after the reading held back), and takes no more readings meanwhile.
    func act(_ step: (inout AccelerometerRelay) -> AccelerometerRelay.Action?) {
        guard let action = relay.withLock(step) else { return }
        if case .update(let x, let y, let z) = action {
            pending.withLock { $0 = (x, y, z) }
            return
        }
        flush()
        output.withLock { output in
            output.device = nil
            output.latest = nil
        }
        stream.continuation.yield(.action(action))
    }

    /// Writes the reading held back, if any, to the device, from the calling thread: the source's thread calls it
    /// before each read of the sensor (the last read's samples are all through) and when capture stops. Written
    /// there, not handed to the relay service's task, a reading costs no wake-up of another thread (the task's
    /// event loop woke for each one).
    func flush() {
        guard
            let reading = pending.withLock({ pending in
                defer { pending = nil }
                return pending
            })
        else { return }
        write(reading)
    }

    /// The relay service made the device (nil: it is about to remove it): readings go to it from now on, and the
    /// newest one at once.
    func attach(_ device: (any RelayOutput)?) {
        let latest = output.withLock { output in
            output.device = device
            output.failures = 0
            return device == nil ? nil : output.latest
        }
        if let latest { write(latest) }
    }

    private func write(_ reading: (x: Int32, y: Int32, z: Int32)) {
        let (written, failed): (Bool, UInputError?) = output.withLock { output in
            output.latest = reading
            guard let device = output.device else { return (false, nil) }
            do throws(UInputError) {
                try device.report(x: reading.x, y: reading.y, z: reading.z)
                output.failures = 0
                return (true, nil)
            } catch {
                output.failures += 1
                return (false, output.failures == 1 ? error : nil)
            }
        }
        if let failed {
            logger.warning("cannot write to the relay's uinput accelerometer", metadata: ["error": "\(failed)"])
        }
        if written {
            logger.debug(
                "relay reading written",
                metadata: [
                    "at": "\(DecimalText.format(SensorSource.monotonicSeconds(), decimals: 3))",
                    "x": "\(reading.x)", "y": "\(reading.y)", "z": "\(reading.z)",
                ])
        }
    }

    /// Hands the service a try at making the device again, after `wait`.
    func retry(generation: Int, after wait: Duration) {
        let continuation = stream.continuation
        Task {
            try? await LoopExecutor.sleep(for: wait)
            continuation.yield(.retry(generation: generation))
        }
    }

    /// Whether the relay's device exists: while it cannot be made, capture does not run for its sake.
    func available(_ available: Bool) {
        capture.update { $0.relayChanged(available) }
    }

    /// No more steps: the service's loop ends.
    func finish() {
        stream.continuation.finish()
    }
}

/// The relay to iio-sensor-proxy: performs what ``AccelerometerRelay`` decided on the source's thread — makes
/// the uinput accelerometer (after writing the udev properties it carries over) and hands it to the link, whose
/// caller writes the readings to it, and destroys it when the sensor goes or the daemon stops. A device that cannot be made (no /dev/uinput yet, or no
/// right to it yet) is tried again, less and less often (``RelayRetry``), for as long as it is wanted.
struct RelayService: Service {
    let link: RelayLink
    /// Where the udev rule (81-shaked-iio-sensor-proxy.rules) imports the input device's properties from.
    let propertiesPath: String
    let uinputPath: String
    let logger: Logger

    /// The path the shipped udev rule reads.
    static let defaultPropertiesPath = "/run/shaked/accelerometer-relay.properties"

    func run() async {
        var device: VirtualAccelerometer?
        var retry = RelayRetry()
        for await step in link.steps.cancelOnGracefulShutdown() {
            switch step {
            case .action(.create(let relay)):
                link.attach(nil)
                device?.close()
                device = nil
                retry.create(relay)
                device = make(relay, retry: &retry)
            case .retry(let generation):
                guard let relay = retry.due(generation: generation) else { continue }
                device = make(relay, retry: &retry)
            case .action(.update):
                // Readings are written by the source's thread (RelayLink.flush).
                continue
            case .action(.destroy):
                if device != nil { logger.info("the relay's uinput accelerometer is removed") }
                link.attach(nil)
                device?.close()
                device = nil
                link.readers.deviceRemoved()
                if retry.failures > 0 { link.available(true) }
                retry.destroy()
            }
        }
        link.attach(nil)
        device?.close()
        _ = unlink(propertiesPath)
    }

    /// Makes the device (after writing its properties), and says what came of it; a failure schedules the next
    /// try.
    private func make(_ relay: AccelerometerRelay.Device, retry: inout RelayRetry) -> VirtualAccelerometer? {
        writeProperties(relay)
        let made: VirtualAccelerometer
        do {
            made = try VirtualAccelerometer(name: relay.name, path: uinputPath)
        } catch {
            guard case .retry(let wait, let generation, let first) = retry.tried(succeeded: false) else { return nil }
            if first {
                logger.error(
                    "cannot make the relay's uinput accelerometer; iio-sensor-proxy gets no readings until it can: trying again, less and less often",
                    metadata: ["error": "\(error)", "path": "\(uinputPath)"])
                // Until then, capture does not run for the relay's sake.
                link.available(false)
            }
            link.retry(generation: generation, after: wait)
            return nil
        }
        if case .recovered(let failures) = retry.tried(succeeded: true) {
            logger.notice(
                "the relay's uinput accelerometer could be made after all", metadata: ["tries": "\(failures + 1)"])
            link.available(true)
        }
        logger.info(
            "relaying the accelerometer to iio-sensor-proxy",
            metadata: [
                "device": "\(relay.source)", "input": "\(made.systemName ?? "unknown")", "name": "\(relay.name)",
                "mount_matrix": "\(relay.properties["ACCEL_MOUNT_MATRIX"] ?? "")",
                "location": "\(relay.properties["ACCEL_LOCATION"] ?? "unknown")",
            ])
        link.attach(made)
        link.readers.deviceMade(systemName: made.systemName)
        return made
    }

    /// Writes the properties before the device exists, so that udev finds them when it adds it. A file that
    /// cannot be written costs the matrix and location only: iio-sensor-proxy then assumes identity and display.
    private func writeProperties(_ relay: AccelerometerRelay.Device) {
        let text = AccelerometerRelay.propertiesFile(relay)
        do {
            try text.write(toFile: propertiesPath, atomically: true, encoding: .utf8)
        } catch {
            logger.warning(
                "cannot write the relay's udev properties; iio-sensor-proxy will assume no mount matrix",
                metadata: ["path": "\(propertiesPath)", "error": "\(error)"])
        }
    }
}

/// The relay follows the live stream's sensor and samples; events are not its concern.
extension RelayLink: EventConsumer {
    func consume(_ event: PublishedEvent) {}

    func consume(_ report: SourceEvent) {
        switch report {
        case .sample(let sample): act { $0.sample(sample) }
        case .capturing(let accelerometer, _): act { $0.sensorChanged(accelerometer) }
        case .waiting: act { $0.sensorGone() }
        case .stopped, .broke: flush()
        case .busy: break
        }
    }
}
