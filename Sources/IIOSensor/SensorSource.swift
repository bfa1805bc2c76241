// SPDX-License-Identifier: Apache-2.0
public import BlockingWork
public import IIOModel
public import Logging
import NumberFormat
import ShakeDetection

#if canImport(Glibc)
    import Glibc
#endif

/// The capture loop: finds the accelerometer, opens it (buffered, else polled), hands every sample over in the
/// device's frame, and survives sensors that are missing, vanish or fall silent.
///
/// libiio has no hotplug, so the loop watches a cheap fingerprint of the devices present and re-creates its
/// context when it changes: a sensor that appears later is picked up, one that vanishes breaks the stream
/// (``run(wakeup:lowestRate:report:)`` reports ``SourceEvent/broke(reason:)``) and capture resumes when it returns.
/// Everything it has to say (samples, the sensor in use, waiting, busy, a broken stream) comes out as one
/// ``SourceEvent`` stream.
public final class SensorSource {
    public struct Configuration: Sendable {
        public var request: DeviceRequest
        /// The sampling rate to ask for, Hz.
        public var rate: Double
        /// The measuring range to set while capturing (``RangeSetting``).
        public var range: SensorRange
        /// How often to look for devices appearing or vanishing.
        public var rescanInterval: Duration
        /// Retry a context that fails for another reason this often even if no device changed.
        public var retryInterval: Duration
        /// Buffered capture sleeps between reads as ``pacing`` says, so that it wakes about five times a second
        /// while the device is still (the kernel wakes a buffer's poller at every scan, whatever the watermark).
        /// False only for tests whose clock is simulated.
        public var pacedReads: Bool
        /// The time between reads of a buffer: long while the device is still, short while a motion is under
        /// way, longest when only the relay reads.
        public var pacing: ReadPacing
        /// The first wait, seconds, before setting up a sensor again whose attributes udev has not yet given the
        /// daemon (``PermissionRetry``).
        public var permissionRetryFirst: Double

        public init(
            request: DeviceRequest = .automatic, rate: Double = 100, rescanInterval: Duration = .seconds(1),
            retryInterval: Duration = .seconds(10), pacedReads: Bool = true, permissionRetryFirst: Double = 0.25,
            range: SensorRange = .automatic, pacing: ReadPacing = ReadPacing()
        ) {
            self.pacing = pacing
            self.request = request
            self.rate = rate
            self.range = range
            self.rescanInterval = rescanInterval
            self.retryInterval = retryInterval
            self.pacedReads = pacedReads
            self.permissionRetryFirst = permissionRetryFirst
        }
    }

    /// The programs holding a device node (`/dev/iio:deviceN`).
    public var findHolders: (String) -> [DeviceHolders.Holder] = { DeviceHolders.find($0) }
    /// The running programs known to use accelerometers, for when the holder cannot be seen.
    public var findSuspects: () -> [DeviceHolders.Holder] = { DeviceHolders.running(DeviceHolders.knownUsers) }
    /// Whether nobody holds a device node (`/dev/iio:deviceN`) now.
    public var nodeIsFree: (String) -> Bool = { DeviceHolders.nodeIsFree($0) }
    /// Called with each wait, seconds, before another try at a context that could not be had where the devices
    /// cannot be watched (a remote one).
    public var willRetryContext: (Double) -> Void = { _ in }
    private var backoff = RetryBackoff()
    /// The waits between tries at a remote context: from the rescan interval, doubling, to the retry interval.
    private var contextBackoff: RetryBackoff
    private var permissions: PermissionRetry
    /// A failure that comes back at every try (a still remote sensor's reads timing out), said once, reminded
    /// at most every 10 minutes, and said once more when data comes.
    private var failures = RepeatedFailure()

    private let backend: any IIOBackend
    private let configuration: Configuration
    private let logger: Logger
    private let monotonic: @Sendable () -> Double
    private var lastNotice: String?

    public init(
        backend: any IIOBackend, configuration: Configuration, logger: Logger,
        monotonic: @escaping @Sendable () -> Double = SensorSource.monotonicSeconds
    ) {
        self.backend = backend.logging(to: logger)
        self.configuration = configuration
        permissions = PermissionRetry(first: configuration.permissionRetryFirst)
        contextBackoff = RetryBackoff(
            first: Self.seconds(configuration.rescanInterval),
            maximum: max(Self.seconds(configuration.rescanInterval), Self.seconds(configuration.retryInterval)))
        self.logger = logger
        self.monotonic = monotonic
    }

    /// Seconds on the system's monotonic clock.
    public static let monotonicSeconds: @Sendable () -> Double = {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// The accelerometer capture would use now, found without opening it (nil: none present or none matching):
    /// what the daemon names while capture is off.
    public func peek() -> Accelerometer? {
        guard let context = try? backend.makeContext() else { return nil }
        let accelerometers = AccelerometerDiscovery.discover(in: context, logger: logger)
        return DeviceSelection.choose(from: accelerometers, request: configuration.request)?.accelerometer
    }

    /// Runs until `wakeup` is signalled.
    /// - Parameters:
    ///   - lowestRate: when given, capture at the lowest rate the sensor offers at or above it instead of the
    ///     configured one (a reader that needs only a few samples a second).
    ///   - motionUnderWay: asked before each read of a buffer: whether the detector follows a motion now. Reads
    ///     come in short steps then, so that its decisions are not held back (``ReadPacing``).
    ///   - beforeRead: called before each wait for samples while capturing, whether samples come or not (at least
    ///     every 0.25 s with a buffer, every sample interval when polling).
    ///   - relayTiming: when the relay's reads happen while only it reads the sensor (``BufferedDriver/relayTiming``).
    ///   - report: each sample and each change of the sensor's state, in order, on the calling thread.
    public func run(
        wakeup: Wakeup, lowestRate: Double? = nil, motionUnderWay: () -> Bool = { false }, beforeRead: () -> Void = {},
        relayTiming: (any RelayReadTiming)? = nil, report: (SourceEvent) -> Void
    ) {
        while !wakeup.isSignalled {
            let fingerprint = backend.devicesFingerprint()
            let context: any IIOContextHandle
            do {
                context = try backend.makeContext()
            } catch {
                if error.isNoDevices {
                    if isNewNotice("no IIO devices yet; waiting for a sensor to appear", report) {
                        logger.warning("no IIO devices yet; waiting for a sensor to appear")
                    }
                } else if isNewNotice("cannot open the IIO context (\(error)); waiting for a sensor", report) {
                    logger.error("cannot open the IIO context; waiting for a sensor", metadata: ["error": "\(error)"])
                }
                if fingerprint == nil {
                    // A remote context (iiod) whose devices cannot be watched: the network link, the machine
                    // behind it or iiod is down. Tried again after a wait that doubles (each try over a dead
                    // link costs a connection and libiio's own 5 s timeout), up to the retry interval.
                    let wait = contextBackoff.next()
                    logger.debug(
                        "connecting to the IIO context again", metadata: ["seconds": "\(DecimalText.format(wait))"])
                    willRetryContext(wait)
                    if wakeup.sleep(for: .microseconds(Int64((wait * 1e6).rounded()))) { return }
                } else if waitForChange(from: fingerprint, wakeup: wakeup) {
                    return
                }
                continue
            }
            contextBackoff.reset()
            permissions.present(Set(context.devices.map(\.id)))
            let accelerometers = AccelerometerDiscovery.discover(in: context, logger: logger)
            guard let selection = DeviceSelection.choose(from: accelerometers, request: configuration.request) else {
                if accelerometers.isEmpty {
                    let devices = context.devices.count
                    if isNewNotice("no accelerometer among \(devices) IIO devices; waiting for one to appear", report) {
                        logger.warning(
                            "no accelerometer among the IIO devices; waiting for one to appear",
                            metadata: ["devices": "\(devices)"])
                    }
                } else {
                    let present = accelerometers.map(\.displayName).joined(separator: ", ")
                    let request = configuration.request
                    if isNewNotice(
                        "no accelerometer matches --device \(request) (present: \(present)); waiting", report)
                    {
                        logger.warning(
                            "no accelerometer matches the device asked for; waiting",
                            metadata: ["request": "\(request)", "present": "\(present)"])
                    }
                }
                if waitForChange(from: fingerprint, wakeup: wakeup) { return }
                continue
            }
            lastNotice = nil
            let outcome = capture(
                selection, context: context, fingerprint: fingerprint, wakeup: wakeup, lowestRate: lowestRate,
                motionUnderWay: motionUnderWay, beforeRead: beforeRead, relayTiming: relayTiming, report: report)
            switch outcome {
            case .stopped:
                return
            case .broke(let reason, let delivered, let reported):
                if !reported { report(.broke(reason: reason)) }
                // A sensor that fails before delivering anything is not retried at once: wait for the devices
                // to change, or for the retry interval.
                let stopped =
                    delivered
                    ? wakeup.sleep(for: configuration.rescanInterval)
                    : waitForChange(from: backend.devicesFingerprint(), wakeup: wakeup)
                if stopped { return }
            case .restart(let reason):
                report(.broke(reason: reason))
            case .busy:
                let wait = backoff.next()
                logger.debug("retrying the busy sensor", metadata: ["seconds": "\(DecimalText.format(wait))"])
                if wakeup.sleep(for: .milliseconds(Int64(wait * 1000))) { return }
            case .refused(let wait):
                if wakeup.sleep(for: .microseconds(Int64((wait * 1e6).rounded()))) { return }
            }
        }
    }

    private enum CaptureOutcome {
        case stopped
        /// The sensor vanished or failed (after delivering samples, or not): wait before looking again. `reported`:
        /// the break was reported already.
        case broke(String, delivered: Bool, reported: Bool = false)
        /// Another sensor should be used: look again at once.
        case restart(String)
        /// The sensor is held by another program: try again after a back-off.
        case busy
        /// Set-up was refused (EACCES, EPERM) before udev gave the daemon the attributes: try again after this
        /// many seconds.
        case refused(Double)
    }

    private func capture(
        _ selection: DeviceSelection, context: any IIOContextHandle, fingerprint: String?, wakeup: Wakeup,
        lowestRate: Double?, motionUnderWay: () -> Bool, beforeRead: () -> Void, relayTiming: (any RelayReadTiming)?,
        report: (SourceEvent) -> Void
    ) -> CaptureOutcome {
        var accelerometer = selection.accelerometer
        turnOffLeftBuffer(accelerometer, context: context)
        // As the device was found, to leave it so (a program that used it before resumes).
        let found = context.deviceState(device: accelerometer.id)
        // (the same news at every try while a failure keeps coming back)
        let setUpLevel: Logger.Level = failures.isRepeating ? .debug : .info
        defer {
            if let found {
                restore(found, of: accelerometer, context: context, level: failures.isRepeating ? .debug : .info)
            }
        }
        let (rate, rateRefused) = configureRate(accelerometer, context: context, lowestRate: lowestRate)
        if let rateRefused, let wait = refused(accelerometer, error: rateRefused) { return .refused(wait) }
        let foundScale = RangeSetting.apply(configuration.range, to: &accelerometer, context: context, logger: logger)
        defer {
            if let foundScale { RangeSetting.restore(foundScale, of: accelerometer, context: context, logger: logger) }
        }
        logger.log(
            level: setUpLevel, "using accelerometer",
            metadata: [
                "sensor": "\(accelerometer.displayName)",
                "reason": "\(selection.reason)",
                "device": "\(accelerometer.id)",
                "rate": "\(DecimalText.format(rate)) Hz",
                "scale": "\(accelerometer.scaling.summary)",
                "mount_matrix": "\(accelerometer.mountMatrix) (\(accelerometer.mountMatrixSource))",
                "location": "\(accelerometer.location?.rawValue ?? "unknown")",
            ])

        var driver: (any SensorDriver)?
        if accelerometer.canBuffer {
            do {
                driver = try BufferedDriver(
                    accelerometer: accelerometer, context: context, rate: rate, logger: logger, monotonic: monotonic,
                    paced: configuration.pacedReads, pacing: configuration.pacing, relayOnly: lowestRate != nil)
            } catch .failed(let failure) where failure.isPermissionDenied && permissions.retries(accelerometer.id) {
                if let wait = refused(accelerometer, error: failure) { return .refused(wait) }
                logger.warning(
                    accelerometer.hasRawAttributes
                        ? "cannot start the buffer; polling instead" : "cannot start the buffer",
                    metadata: ["device": "\(accelerometer.id)", "error": "\(failure)"])
            } catch .failed(let failure) where failure.isBusy {
                let holders = findHolders("/dev/\(accelerometer.id)")
                let advice = DeviceHolders.advice(
                    device: accelerometer.id, holders: holders, suspects: holders.isEmpty ? findSuspects() : [],
                    handedOver: context.udevProperties(device: accelerometer.id)["SHAKED_OWNS"] == "1")
                logger.error(
                    "the sensor is busy: another program holds it",
                    metadata: ["device": "\(accelerometer.id)", "error": "\(failure)", "advice": "\(advice)"])
                report(.busy(accelerometer, advice: advice))
                return .busy
            } catch {
                logger.warning(
                    accelerometer.hasRawAttributes
                        ? "cannot start the buffer; polling instead" : "cannot start the buffer",
                    metadata: ["device": "\(accelerometer.id)", "error": "\(error)"])
            }
        }
        if driver == nil, accelerometer.hasRawAttributes {
            driver = PolledDriver(
                accelerometer: accelerometer, context: context, rate: rate, logger: logger, monotonic: monotonic)
        }
        guard var driver else {
            logger.error(
                "cannot read the sensor: its buffer cannot be started and it has no _raw attributes",
                metadata: ["sensor": "\(accelerometer.displayName)"])
            return waitForChange(from: fingerprint, wakeup: wakeup) ? .stopped : .restart("the sensor cannot be read")
        }
        logger.log(
            level: setUpLevel, "capturing from the sensor",
            metadata: ["device": "\(accelerometer.id)", "driver": "\(driver.summary)"])
        backoff.reset()
        permissions.succeeded(accelerometer.id)
        report(.capturing(accelerometer, rate: rate))
        defer { report(.stopped) }

        let matrix = accelerometer.mountMatrix
        var fingerprint = fingerprint
        var lastScan = monotonic()
        var receiving = false
        var delivered = false
        var silentNoticed = false
        while true {
            let now = monotonic()
            if now - lastScan >= Self.seconds(configuration.rescanInterval) {
                lastScan = now
                if let current = backend.devicesFingerprint(), current != fingerprint {
                    fingerprint = current
                    if let change = devicesChanged(current, using: accelerometer) {
                        driver.stop()
                        return change
                    }
                }
            }
            beforeRead()
            if let buffered = driver as? BufferedDriver {
                buffered.mode = ReadPacing.mode(relayOnly: lowestRate != nil, motionUnderWay: motionUnderWay())
                buffered.relayTiming = relayTiming
            }
            let read: DriverRead
            do {
                read = try driver.next(wakeup: wakeup)
            } catch {
                switch error {
                case .silent(let seconds):
                    if driver is BufferedDriver, accelerometer.hasRawAttributes {
                        logger.warning(
                            "the buffer delivered no data; polling its _raw attributes instead",
                            metadata: [
                                "device": "\(accelerometer.id)", "seconds": "\(DecimalText.format(seconds.rounded()))",
                            ])
                        driver.stop()
                        driver = PolledDriver(
                            accelerometer: accelerometer, context: context, rate: rate, logger: logger,
                            monotonic: monotonic)
                        logger.info(
                            "capturing from the sensor",
                            metadata: ["device": "\(accelerometer.id)", "driver": "\(driver.summary)"])
                        if receiving {
                            // The polled samples run on another clock: a new stream.
                            receiving = false
                            report(.broke(reason: "the buffer fell silent", sensorKept: true))
                        }
                    } else if !silentNoticed {
                        logger.warning(
                            "the sensor has delivered no data; still waiting",
                            metadata: [
                                "sensor": "\(accelerometer.displayName)",
                                "seconds": "\(DecimalText.format(seconds.rounded()))",
                            ])
                        silentNoticed = true
                    }
                    continue
                case .failed(let error):
                    switch failures.failed("\(error)", now: monotonic()) {
                    case .began:
                        logger.error(
                            "the sensor failed or vanished; waiting for a sensor",
                            metadata: ["sensor": "\(accelerometer.displayName)", "error": "\(error)"])
                    case .again:
                        logger.debug(
                            "the sensor failed again the same way; waiting for a sensor",
                            metadata: ["sensor": "\(accelerometer.displayName)", "error": "\(error)"])
                    case .reminder(let count, let seconds):
                        logger.warning(
                            "the sensor still fails the same way; waiting for a sensor",
                            metadata: [
                                "sensor": "\(accelerometer.displayName)", "error": "\(error)", "failures": "\(count)",
                                "seconds": "\(DecimalText.format(seconds.rounded()))",
                            ])
                    }
                    // The stream ends at the failed read, before the driver stops: stopping a buffer read through
                    // iiod whose link failed waits for iiod's answer, up to the context's timeout (RemoteRead).
                    report(.broke(reason: "the sensor failed or vanished"))
                    driver.stop()
                    return .broke("the sensor failed or vanished", delivered: delivered, reported: true)
                }
            }
            switch read {
            case .stopped:
                driver.stop()
                return .stopped
            case .nothing:
                continue
            case .samples(let samples), .broken(before: let samples, reason: _, after: _):
                delivered = true
                if !receiving {
                    receiving = true
                    logger.info("receiving samples", metadata: ["device": "\(accelerometer.id)"])
                    if let ended = failures.recovered(now: monotonic()) {
                        logger.notice(
                            "the sensor's repeated failures are over",
                            metadata: [
                                "sensor": "\(accelerometer.displayName)", "failures": "\(ended.failures)",
                                "seconds": "\(DecimalText.format(ended.seconds.rounded()))",
                            ])
                    }
                }
                silentNoticed = false
                for sample in samples {
                    report(.sample(Sample(time: sample.time, acceleration: matrix.apply(sample.acceleration))))
                }
                if case .broken(_, let reason, let after) = read {
                    report(.broke(reason: reason, sensorKept: true))
                    for sample in after {
                        report(.sample(Sample(time: sample.time, acceleration: matrix.apply(sample.acceleration))))
                    }
                }
            }
        }
    }

    /// A buffer found running on a device that shaked's hand-over rule gave to shaked (udev's `SHAKED_OWNS=1`)
    /// while nobody holds its node: a program that has ended left it on (iio-sensor-proxy does when it stops, as
    /// the hand-over has it do), and every set-up would be refused (EBUSY) for as long as it runs. It is turned
    /// off, and not turned on again when capture ends.
    private func turnOffLeftBuffer(_ accelerometer: Accelerometer, context: any IIOContextHandle) {
        guard context.deviceState(device: accelerometer.id)?.bufferEnabled == true,
            context.udevProperties(device: accelerometer.id)["SHAKED_OWNS"] == "1",
            nodeIsFree("/dev/\(accelerometer.id)")
        else { return }
        do {
            try context.writeBuffer(device: accelerometer.id, attribute: "enable", value: "0")
            logger.notice(
                "turned off the buffer a program that has ended left running on the sensor handed over to shaked",
                metadata: ["device": "\(accelerometer.id)"])
        } catch {
            logger.warning(
                "cannot turn off the buffer left running on the sensor handed over to shaked",
                metadata: ["device": "\(accelerometer.id)", "error": "\(error)"])
        }
    }

    /// Puts the device back as it was found: trigger, buffer length and watermark, rate, scan elements, and the
    /// buffer on again if it was.
    private func restore(
        _ found: DeviceState, of accelerometer: Accelerometer, context: any IIOContextHandle, level: Logger.Level
    ) {
        guard let now = context.deviceState(device: accelerometer.id) else { return }
        let writes = found.restoration(from: now)
        guard !writes.isEmpty else { return }
        let failed = context.apply(device: accelerometer.id, writes: writes)
        if failed.isEmpty {
            logger.log(
                level: level, "left the sensor as it was found",
                metadata: [
                    "device": "\(accelerometer.id)", "writes": "\(writes.map(\.description).joined(separator: " "))",
                ])
        } else {
            logger.warning(
                "cannot leave the sensor entirely as it was found",
                metadata: [
                    "device": "\(accelerometer.id)",
                    "failed": "\(failed.map { "\($0.0): \($0.1.reason)" }.joined(separator: "; "))",
                ])
        }
    }

    /// What a change of the devices present means for the capture from `accelerometer`: nil to go on.
    private func devicesChanged(_ fingerprint: String, using accelerometer: Accelerometer) -> CaptureOutcome? {
        let present = Set(fingerprint.split(separator: " ").map(String.init))
        if !present.contains(accelerometer.id) {
            logger.error(
                "the sensor vanished; waiting for it to return", metadata: ["sensor": "\(accelerometer.displayName)"])
            return .broke("the sensor vanished", delivered: true)
        }
        // Something else appeared or vanished: would the choice now be another sensor?
        guard let context = try? backend.makeContext() else { return nil }
        let accelerometers = AccelerometerDiscovery.discover(in: context, logger: logger)
        guard let choice = DeviceSelection.choose(from: accelerometers, request: configuration.request),
            choice.accelerometer.id != accelerometer.id
        else { return nil }
        logger.notice(
            "another sensor appeared; switching to it",
            metadata: ["sensor": "\(choice.accelerometer.displayName)", "reason": "\(choice.reason)"])
        return .restart("switching to another sensor")
    }

    /// Set-up of `accelerometer` was refused (`error`: EACCES, EPERM): the wait before trying again, or nil when
    /// it is given up on (logged once each).
    private func refused(_ accelerometer: Accelerometer, error: IIOError) -> Double? {
        let first = permissions.tries == 0 || permissions.device != accelerometer.id
        guard let wait = permissions.refused(accelerometer.id) else {
            logger.warning(
                "udev has still not given the daemon the sensor's attributes; going on without them",
                metadata: [
                    "device": "\(accelerometer.id)", "error": "\(error)", "tries": "\(permissions.maximumTries + 1)",
                ])
            return nil
        }
        if first {
            logger.notice(
                "the sensor's attributes are not writable yet (udev gives them to the daemon a moment after the device appears); trying again",
                metadata: ["device": "\(accelerometer.id)", "error": "\(error)"])
        }
        return wait
    }

    /// Sets the sampling rate: the configured one, or the nearest listed rate at or above 50 Hz; with
    /// `lowestRate`, the lowest offered at or above it.
    /// - Returns: the rate the device reports afterwards (the requested one when it has no such attribute), and
    ///   the error when the write was refused (EACCES, EPERM) while the device is still retried for that
    ///   (``PermissionRetry``): then nothing is logged, the caller decides.
    private func configureRate(
        _ accelerometer: Accelerometer, context: any IIOContextHandle, lowestRate: Double?
    ) -> (rate: Double, refused: IIOError?) {
        let requested = lowestRate ?? configuration.rate
        guard let attribute = accelerometer.frequencyAttribute else { return (requested, nil) }
        var available: SamplingFrequency.Available?
        if let name = accelerometer.availableFrequenciesAttribute,
            let text = try? context.read(device: accelerometer.id, attribute: name)
        {
            available = SamplingFrequency.Available(parsing: text)
        }
        let rate =
            lowestRate.map { SamplingFrequency.lowest(atLeast: $0, available: available) }
            ?? SamplingFrequency.choose(requested: requested, available: available)
        do {
            try context.write(device: accelerometer.id, attribute: attribute, value: DecimalText.format(rate))
        } catch {
            if error.isPermissionDenied, permissions.retries(accelerometer.id) { return (rate, error) }
            logger.warning(
                "cannot set the sampling rate",
                metadata: [
                    "device": "\(accelerometer.id)", "attribute": "\(attribute)",
                    "rate": "\(DecimalText.format(rate)) Hz", "error": "\(error)",
                ])
        }
        if let text = try? context.read(device: accelerometer.id, attribute: attribute), let actual = Double(text),
            actual.isFinite, actual > 0
        {
            if actual != rate {
                logger.warning(
                    "the sensor runs at another rate than asked for",
                    metadata: [
                        "device": "\(accelerometer.id)", "rate": "\(DecimalText.format(actual)) Hz",
                        "asked": "\(DecimalText.format(rate)) Hz",
                    ])
            }
            return (actual, nil)
        }
        return (rate, nil)
    }

    /// Waits until the devices present change (or, where that cannot be seen, one rescan interval; or the
    /// retry interval in any case).
    /// - Returns: true when stopped.
    private func waitForChange(from fingerprint: String?, wakeup: Wakeup) -> Bool {
        let start = monotonic()
        while true {
            if wakeup.sleep(for: configuration.rescanInterval) { return true }
            guard let fingerprint, let current = backend.devicesFingerprint() else { return false }
            if current != fingerprint { return false }
            if monotonic() - start >= Self.seconds(configuration.retryInterval) { return false }
        }
    }

    /// A waiting state is logged once, not on every retry: true (and ``SourceEvent/waiting(reason:)`` reported)
    /// when it differs from the last one.
    private func isNewNotice(_ reason: String, _ report: (SourceEvent) -> Void) -> Bool {
        guard reason != lastNotice else { return false }
        lastNotice = reason
        report(.waiting(reason: reason))
        return true
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
