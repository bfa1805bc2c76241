// SPDX-License-Identifier: Apache-2.0
import IIOSensor
import Logging
import ServiceLifecycle
import UInput

#if canImport(Glibc)
    import Glibc
#endif

/// The relay's decisions, made on the source's thread and carried to the ``RelayService``: the
/// ``AccelerometerRelay`` while the relay is on, its actions, and the service's own tries at making its device
/// again.
final class RelayLink: Sendable {
    /// What the relay service is handed: an action of the relay, or a try that is due.
    enum Step: Sendable, Equatable {
        case action(AccelerometerRelay.Action)
        /// Try again to make the device, if the try is not stale (``RelayRetry/due(generation:)``).
        case retry(generation: Int)
    }

    private let relay = Locked(AccelerometerRelay())
    private let stream = AsyncStream.makeStream(of: Step.self)
    private let capture: CaptureSwitch
    /// Whether anything reads the relay's device: while nothing does, capture does not run for its sake.
    let readers: RelayReaders

    init(capture: CaptureSwitch, logger: Logger) {
        self.capture = capture
        readers = RelayReaders(capture: capture, logger: logger)
    }

    var steps: AsyncStream<Step> { stream.stream }

    /// The newest reading decided since the last read of the sensor, not handed over yet. iio-sensor-proxy reads
    /// the device once a poll, so of a read's readings (up to four while the device turns) only the newest
    /// matters, and one hand-over a read is at most one wake-up of the relay service's task a read.
    private let pending = Locked<AccelerometerRelay.Action?>(nil)

    /// Runs a step of the relay and hands its action to the relay service: a reading at the next ``flush()``,
    /// anything else at once (after the reading held back).
    func act(_ step: (inout AccelerometerRelay) -> AccelerometerRelay.Action?) {
        guard let action = relay.withLock(step) else { return }
        if case .update = action {
            pending.withLock { $0 = action }
            return
        }
        flush()
        stream.continuation.yield(.action(action))
    }

    /// Hands the relay service the reading held back, if any: the source's thread calls it before each read of
    /// the sensor (the last read's samples are all through) and when capture stops.
    func flush() {
        let action = pending.withLock { pending in
            defer { pending = nil }
            return pending
        }
        if let action { stream.continuation.yield(.action(action)) }
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
/// the uinput accelerometer (after writing the udev properties it carries over), reports readings to it, and
/// destroys it when the sensor goes or the daemon stops. A device that cannot be made (no /dev/uinput yet, or no
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
        var failures = 0
        for await step in link.steps.cancelOnGracefulShutdown() {
            switch step {
            case .action(.create(let relay)):
                device?.close()
                device = nil
                retry.create(relay)
                device = make(relay, retry: &retry)
            case .retry(let generation):
                guard let relay = retry.due(generation: generation) else { continue }
                device = make(relay, retry: &retry)
            case .action(.update(let x, let y, let z)):
                guard let current = device else { continue }
                do {
                    try current.report(x: x, y: y, z: z)
                    failures = 0
                } catch {
                    failures += 1
                    if failures == 1 {
                        logger.warning(
                            "cannot write to the relay's uinput accelerometer", metadata: ["error": "\(error)"])
                    }
                }
            case .action(.destroy):
                if device != nil { logger.info("the relay's uinput accelerometer is removed") }
                device?.close()
                device = nil
                link.readers.deviceRemoved()
                if retry.failures > 0 { link.available(true) }
                retry.destroy()
            }
        }
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
