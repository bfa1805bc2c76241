// SPDX-License-Identifier: Apache-2.0
public import BlockingWork
public import IIOModel
public import Logging
import NumberFormat
import ShakeDetection

#if canImport(Glibc)
    import Glibc
#endif

/// Reads an accelerometer through its IIO buffer: the accel scan elements and the timestamp, with the device's
/// own trigger when it has one, waking a few times per second.
public final class BufferedDriver: SensorDriver {
    /// Seconds without data after which the buffer is given up on (the source falls back to polling).
    public static let silenceLimit = 2.0
    /// The kernel buffer holds this many reads' worth of scans (as libiio 0.24 sizes it), so that a late read
    /// loses nothing.
    public static let bufferReads = 4
    /// The fewest scans the kernel buffer holds while only the relay reads (``kernelBuffers(scansPerRead:relayOnly:)``;
    /// the driver writes it as the length whatever the rate, which libiio then sets again): a sensor may deliver
    /// faster than the rate it was set to (the VM's HID feeder sends 100 Hz to the relay's 5 Hz); a buffer of four
    /// reads' worth at the rate asked for (20 scans) then fills within a fifth of the relay's second between reads,
    /// the kernel drops the newest scans, and what the next read finds is most of a second old (orientation reached
    /// iio-sensor-proxy up to 1.2 s late, measured). 128 holds more than a second at 100 Hz; 2 KiB at 16 bytes
    /// a scan.
    public static let leastBufferScans = 128

    /// How many reads' worth of scans the kernel buffer holds: ``bufferReads``; when only the relay reads, more,
    /// to hold ``leastBufferScans``. libiio 0.24 sets the buffer's length to a read's worth times this count as it
    /// starts it (`iio_device_set_kernel_buffers_count`, 4 by default), over any length written before: left at 4,
    /// the relay's reads of 4 scans had a buffer of 16, which the VM's 100 Hz filled within 0.16 s of a read, and
    /// each read found what came just after the one before (a turn reached iio-sensor-proxy a poll late,
    /// measured). Capture for listeners keeps libiio's four reads' worth (80 scans at 100 Hz, read every 0.2 s at
    /// most): sized to 128 as well, two VM runs lost shakes under a subscriber, then not understood; the losses
    /// later traced in the relay scenario (a subscriber connecting mid-shake, a feeder stalled past `max_gap`,
    /// docs/vm-tests.md) may have been those too, which those runs cannot show.
    public static func kernelBuffers(scansPerRead samples: Int, relayOnly: Bool) -> Int {
        guard relayOnly else { return bufferReads }
        let samples = max(1, samples)
        return max(bufferReads, (leastBufferScans + samples - 1) / samples)
    }

    private let accelerometer: Accelerometer
    private let buffer: any IIOBufferHandle
    private var decoder: ScanDecoder
    private var clock: SampleClock
    private let monotonic: @Sendable () -> Double
    /// How far the boot-time clock is ahead of the monotonic one: it grows by the time the system sleeps.
    private let asleep: @Sendable () -> Double
    private let logger: Logger
    private var lastData: Double
    /// ``asleep`` at the last data (or the last sleep noticed).
    private var asleepAtData: Double
    /// The time of the last scan (seconds, monotonic), to notice the sensor's clock jumping.
    private var lastTimestamp: Double?
    /// The clock the kernel stamps scans with, when it is not the monotonic one and the device would not
    /// change it: its timestamps are moved onto the monotonic clock as they arrive.
    private let timestampClock: TimestampClock?
    /// The time between reads: the kernel wakes a poller at every scan whatever the watermark, so the driver
    /// sleeps for a read's worth of scans before it waits on the buffer (nil: wait at once). Short steps while
    /// ``mode`` is `moving`, long ones otherwise (``ReadPacing``).
    private let pacing: ReadPacing?
    private let rate: Double
    /// How the next read is paced: set by the capture loop before each ``next(wakeup:)`` (`relay` when only the
    /// relay reads).
    public var mode: ReadPacing.Mode
    /// When the relay's reads happen while ``mode`` is `relay` (just before iio-sensor-proxy's polls,
    /// ``PollPhase``); nil: every ``ReadPacing/relay`` seconds.
    public var relayTiming: (any RelayReadTiming)?
    private var lastRead: ContinuousClock.Instant?
    /// Seconds between two scans' timestamps past which the clock counts as having jumped ahead.
    private let jumpLimit: Double
    /// The bytes of a read's worth of scans: a read that returns them all may have left more in the kernel.
    private let fullRead: Int
    /// The most reads of a read's worth it takes to empty the kernel buffer.
    private let readsToEmpty: Int
    private var lastJumpWarning = -Double.infinity
    public let summary: String

    /// Starts the buffer: sets the trigger (or none), the timestamp clock, the buffer's length and watermark —
    /// all before the buffer is enabled, as the kernel refuses them (EBUSY) while it is — then enables the accel
    /// and timestamp elements and the buffer.
    /// - Parameters:
    ///   - paced: sleep between reads as `pacing` says (the daemon); false waits on the buffer at once (tests
    ///     with a simulated clock).
    ///   - asleep: seconds the system has slept since boot (the boot-time clock less the monotonic one).
    ///   - relayOnly: only the relay reads: a read every 0.7 s (``ReadPacing``), the buffer sized for it.
    /// - Throws: ``SensorFailure/failed(_:)`` when the buffer cannot be started.
    public init(
        accelerometer: Accelerometer, context: any IIOContextHandle, rate: Double, logger: Logger,
        monotonic: @escaping @Sendable () -> Double = SensorSource.monotonicSeconds, paced: Bool = true,
        asleep: @escaping @Sendable () -> Double = BufferedDriver.secondsAsleep,
        pacing: ReadPacing = ReadPacing(), relayOnly: Bool = false
    ) throws(SensorFailure) {
        self.accelerometer = accelerometer
        self.monotonic = monotonic
        self.asleep = asleep
        self.logger = logger
        jumpLimit = rate > 0 ? max(1, 5 / rate) : 1
        var details: [String] = []
        if let trigger = accelerometer.triggerID {
            do {
                try context.setTrigger(device: accelerometer.id, trigger: trigger)
                details.append("trigger \(accelerometer.triggerName ?? trigger)")
            } catch  where error.isBusy || error.isPermissionDenied {
                // Another program runs the buffer with this trigger: running without it would read nothing
                // useful. The source names the holder and tries again later. Or the daemon may not write the
                // trigger (yet): nor could it enable the buffer; the source tries again when udev has given it
                // the attributes.
                throw .failed(error)
            } catch {
                logger.warning(
                    "cannot set the trigger; trying without one",
                    metadata: ["device": "\(accelerometer.id)", "error": "\(error)"])
                details.append("no trigger")
            }
        } else {
            details.append("no trigger")
        }
        let withTimestamp = accelerometer.timestampElement != nil
        var channels = accelerometer.scanElements.map(\.channel)
        if withTimestamp { channels.append("timestamp") }
        let samples = pacing.scansPerRead(rate: rate, relayOnly: relayOnly)
        timestampClock =
            withTimestamp ? Self.setTimestampClock(device: accelerometer.id, context: context, logger: logger) : nil
        // The length first: the kernel refuses a watermark longer than the buffer. libiio writes it again as it
        // starts the buffer, a read's worth times its count of kernel buffers (``kernelBuffers``).
        let blocks = Self.kernelBuffers(scansPerRead: samples, relayOnly: relayOnly)
        let length = max(samples * Self.bufferReads, Self.leastBufferScans)
        readsToEmpty = blocks + 1
        for (attribute, value) in [("length", length), ("watermark", samples)] {
            do {
                try context.writeBuffer(device: accelerometer.id, attribute: attribute, value: String(value))
            } catch {
                logger.debug(
                    "cannot set a buffer attribute",
                    metadata: ["device": "\(accelerometer.id)", "attribute": "\(attribute)", "error": "\(error)"])
            }
        }
        do {
            buffer = try context.openBuffer(
                device: accelerometer.id, channels: channels, samples: samples, blocks: blocks)
        } catch {
            throw .failed(error)
        }
        self.pacing = paced && rate > 0 ? pacing : nil
        self.rate = rate
        mode = relayOnly ? .relay : .still
        let layout = accelerometer.scanLayout(withTimestamp: withTimestamp)
        fullRead = samples * layout.scanBytes
        decoder = ScanDecoder(layout: layout)
        clock = SampleClock(rate: rate)
        lastData = monotonic()
        asleepAtData = asleep()
        if let timestampClock {
            details.append("timestamps (\(timestampClock.name), moved onto the monotonic clock)")
        } else {
            details.append(withTimestamp ? "timestamps" : "no timestamps (times from the rate)")
        }
        details.append("\(samples) scans per read, \(layout.scanBytes) bytes per scan")
        summary = "buffered, " + details.joined(separator: ", ")
    }

    deinit {
        buffer.close()
    }

    public func next(wakeup: Wakeup) throws(SensorFailure) -> DriverRead {
        // (a remote buffer's blocking read paces itself: sleeping before it would let scans pile up at iiod)
        if let pacing, let lastRead, !buffer.readsBlock {
            if mode == .relay, let timing = relayTiming, let next = timing.nextRead(now: monotonic()) {
                if waitForRelayRead(next.plan, watch: next.watch, timing: timing, wakeup: wakeup) { return .stopped }
                if case .read = next.plan { timing.willRead() }
            } else {
                let readInterval = Duration.microseconds(Int64((pacing.interval(mode, rate: rate) * 1e6).rounded()))
                let remaining = ContinuousClock.now.duration(to: lastRead + readInterval)
                if remaining > .zero, wakeup.sleep(for: remaining) { return .stopped }
            }
            // A read's worth of time has passed: take what is there (non-blocking), without waiting for the
            // watermark — a poll would wake at every scan still to come.
            if let read = deliver(try readAll()) { return read }
        }
        if buffer.readsBlock {
            // A remote buffer (iiod): the read itself waits for a read's worth of scans, bounded by the
            // context's timeout, past which it fails and the capture connects again.
            if wakeup.isSignalled { return .stopped }
            if let read = deliver(try readBuffer()) { return read }
            return try checkSilence()
        }
        let outcome = buffer.wait(timeout: .milliseconds(250), wakeup: wakeup)
        switch outcome {
        case .stopped:
            return .stopped
        case .failed:
            // Let the read report what went wrong.
            _ = try readBuffer()
            throw .failed(
                IIOError(
                    code: 19, operation: "waiting for the buffer of \(accelerometer.id)",
                    reason: "the device reported an error"))
        case .timedOut:
            return try checkSilence()
        case .ready:
            if let read = deliver(try readAll()) { return read }
            return try checkSilence()
        }
    }

    /// The longest wait for a relay's read, seconds: a plan gone wrong costs a late read, never a stalled capture.
    static let longestRelayWait = 2.0

    /// Waits until the relay's read is due as `plan` says: its time, or (with `watch`) the open of the relay's
    /// node seen before it (an open of another input node waits on). One wake-up either way.
    /// - Returns: true when `wakeup` was signalled.
    private func waitForRelayRead(
        _ plan: PollPhase.Plan, watch: Int32?, timing: any RelayReadTiming, wakeup: Wakeup
    ) -> Bool {
        var watch = watch
        let until: Double
        switch plan {
        case .read(let at):
            until = at
            watch = nil
        case .readAtOpen(let end):
            until = end
        }
        let deadline = min(until, monotonic() + Self.longestRelayWait)
        while true {
            let remaining = deadline - monotonic()
            guard remaining > 0, remaining.isFinite else { return wakeup.isSignalled }
            let duration = Duration.microseconds(Int64((remaining * 1e6).rounded(.up)))
            guard let descriptor = watch else { return wakeup.sleep(for: duration) }
            var descriptors = [
                pollfd(fd: wakeup.fileDescriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
            ]
            let result = Readiness.wait(&descriptors, timeout: duration)
            if wakeup.isSignalled { return true }
            guard case .success(let ready) = result else {
                watch = nil
                continue
            }
            guard ready > 0 else { return false }
            if descriptors[1].revents & Int16(POLLIN) == 0 {
                // An error on the watch: its time alone.
                watch = nil
            } else if timing.watchReady(at: monotonic()) {
                return false
            }
        }
    }

    /// Everything the kernel holds, in as many refills of a read's worth as its buffer holds (and one more): a
    /// sensor that delivers faster than its rate says (the VM's feeder at 100 Hz under the relay's 5 Hz), or a
    /// late read, would otherwise leave the oldest scans for the next read while the kernel's full buffer drops
    /// the newest.
    private func readAll() throws(SensorFailure) -> [UInt8] {
        var bytes = try readBuffer()
        var reads = 1
        while fullRead > 0, bytes.count >= fullRead, reads < readsToEmpty {
            let more = try readBuffer()
            if more.isEmpty { break }
            bytes += more
            reads += 1
        }
        return bytes
    }

    private func readBuffer() throws(SensorFailure) -> [UInt8] {
        do {
            return try buffer.read()
        } catch {
            throw .failed(error)
        }
    }

    /// The samples in `bytes`, or nil when they hold no whole scan.
    private func deliver(_ bytes: [UInt8]) -> DriverRead? {
        let scans = decoder.decode(bytes)
        guard !scans.isEmpty else { return nil }
        lastRead = ContinuousClock.now
        let now = monotonic()
        lastData = now
        let sleptSince = noteSleep()
        let previousTimestamp = lastTimestamp
        let (samples, jump) = samples(from: scans, arrival: now)
        if let jump, let reason = jump.continuity.reason {
            return .broken(before: Array(samples[..<jump.index]), reason: reason, after: Array(samples[jump.index...]))
        }
        if sleptSince {
            // The system slept since the last data, and the timestamps did not leap past the limit: the break
            // goes where they step furthest (scans from before the sleep may still have been in the buffer).
            let index = Self.widestStep(samples.map(\.time), after: previousTimestamp)
            return .broken(
                before: Array(samples[..<index]), reason: Self.sleptReason, after: Array(samples[index...]))
        }
        return .samples(samples)
    }

    static let sleptReason = "the system slept"

    /// Whether the system slept since the last data (or the last sleep noticed), logged once.
    private func noteSleep() -> Bool {
        IIOSensor.noteSleep(now: asleep(), since: &asleepAtData, device: accelerometer.id, logger: logger)
    }

    /// The index of the sample after the widest step between consecutive times (the first's from `previous`).
    static func widestStep(_ times: [Double], after previous: Double?) -> Int {
        var best = 0
        var widest = previous.map { (times.first ?? $0) - $0 } ?? -Double.infinity
        for index in times.indices.dropFirst() where times[index] - times[index - 1] > widest {
            widest = times[index] - times[index - 1]
            best = index
        }
        return best
    }

    private func checkSilence() throws(SensorFailure) -> DriverRead {
        let silent = monotonic() - lastData
        switch BufferSilence.judge(silent: silent, slept: asleep() - asleepAtData, limit: Self.silenceLimit) {
        case .waiting:
            return .nothing
        case .slept:
            // Not the buffer's fault: the stream breaks, and its silence counts from now.
            _ = noteSleep()
            lastData = monotonic()
            return .broken(before: [], reason: Self.sleptReason, after: [])
        case .silent(let seconds):
            throw .silent(seconds: seconds)
        }
    }

    /// Scales the scans and gives them times: the kernel's timestamps when enabled, the sample clock otherwise.
    /// - Returns: the samples, and where their timestamps last leapt (a break in the stream before that sample),
    ///   if they did.
    func samples(from scans: [RawScan], arrival: Double) -> ([Sample], (index: Int, continuity: ScanContinuity)?) {
        let scaling = accelerometer.scaling
        if scans.allSatisfy({ $0.timestamp != nil }) {
            let offset = timestampClock?.offsetFromMonotonic() ?? 0
            var jump: (index: Int, continuity: ScanContinuity)?
            let samples = scans.enumerated().map { index, scan in
                let time = Double(scan.timestamp!) / 1e9 - offset
                if let lastTimestamp {
                    let continuity = ScanContinuity.between(previous: lastTimestamp, current: time, limit: jumpLimit)
                    if continuity.breaksStream {
                        noteClockJump(continuity, at: arrival)
                        jump = (index, continuity)
                    }
                }
                lastTimestamp = time
                return Sample(time: time, acceleration: scaling.apply(x: scan.x, y: scan.y, z: scan.z))
            }
            return (samples, jump)
        }
        let times = clock.times(count: scans.count, arrival: arrival)
        let samples = zip(scans, times).map { scan, time in
            Sample(time: time, acceleration: scaling.apply(x: scan.x, y: scan.y, z: scan.z))
        }
        return (samples, nil)
    }

    /// Logs the sensor's clock going back, or leaping ahead, between two scans (a suspend and resume, or the
    /// clock being set): the capture breaks the stream there (a shake in progress is interrupted), and the log
    /// says why. A warning at most every ten seconds, the rest at debug level, so that a sensor whose clock
    /// misbehaves does not flood it.
    private func noteClockJump(_ continuity: ScanContinuity, at now: Double) {
        let magnitude = continuity.seconds
        var wentBack = false
        if case .wentBack = continuity { wentBack = true }
        let size = DecimalText.format(
            magnitude >= 1 ? (magnitude * 10).rounded() / 10 : (magnitude * 1000).rounded() / 1000)
        let level: Logger.Level = now - lastJumpWarning >= 10 ? .warning : .debug
        if level == .warning { lastJumpWarning = now }
        logger.log(
            level: level,
            wentBack
                ? "the timestamps went back between two scans (a clock step)"
                : "the timestamps jumped ahead between two scans (a suspend and resume, a clock step or lost data)",
            metadata: ["device": "\(accelerometer.id)", "seconds": "\(size)"])
    }

    public func stop() {
        buffer.close()
    }
}

extension BufferedDriver {
    /// Seconds the system has slept since boot: the boot-time clock less the monotonic one.
    public static let secondsAsleep: @Sendable () -> Double = {
        var boot = timespec()
        var monotonic = timespec()
        clock_gettime(CLOCK_BOOTTIME, &boot)
        clock_gettime(CLOCK_MONOTONIC, &monotonic)
        return Double(boot.tv_sec - monotonic.tv_sec) + Double(boot.tv_nsec - monotonic.tv_nsec) / 1e9
    }

    /// The attribute that says which clock the kernel stamps a device's scans with (Linux 4.10 and later).
    static let clockAttribute = "current_timestamp_clock"

    /// Asks the kernel to stamp scans with the monotonic clock, as polled samples are timed; when the device
    /// keeps another clock (the write refused), its timestamps are mapped onto the monotonic one.
    /// - Returns: the clock to map from, or nil when the scans are monotonic already or the device does not say
    ///   (no such attribute: times are taken as they come).
    static func setTimestampClock(device: String, context: any IIOContextHandle, logger: Logger) -> TimestampClock? {
        do {
            try context.write(device: device, attribute: clockAttribute, value: "monotonic")
        } catch {
            logger.debug(
                "cannot set the timestamp clock to monotonic", metadata: ["device": "\(device)", "error": "\(error)"])
        }
        guard let name = try? context.read(device: device, attribute: clockAttribute), name != "monotonic" else {
            return nil
        }
        let clock = TimestampClock(name: name)
        logger.notice(
            "the device stamps its scans with another clock; their times are moved onto the monotonic clock",
            metadata: ["device": "\(device)", "clock": "\(clock.name)"])
        return clock
    }
}

/// A kernel clock a device may stamp scans with (`current_timestamp_clock`), and its distance from the monotonic
/// clock now.
struct TimestampClock: Sendable, Hashable {
    /// The kernel's name for it: `realtime`, `boottime`, ...
    let name: String
    let id: clockid_t

    /// An unknown name is taken as realtime, the kernel's default.
    init(name: String) {
        switch name {
        case "monotonic_raw": id = CLOCK_MONOTONIC_RAW
        case "realtime_coarse": id = CLOCK_REALTIME_COARSE
        case "monotonic_coarse": id = CLOCK_MONOTONIC_COARSE
        case "boottime": id = CLOCK_BOOTTIME
        case "tai": id = CLOCK_TAI
        default: id = CLOCK_REALTIME
        }
        self.name = name
    }

    /// Seconds this clock is ahead of the monotonic one, read now (the smallest of three tries, so that a
    /// preemption between the two reads does not count).
    func offsetFromMonotonic() -> Double {
        var best = Double.infinity
        var result = 0.0
        for _ in 0..<3 {
            var before = timespec()
            var other = timespec()
            var after = timespec()
            clock_gettime(CLOCK_MONOTONIC, &before)
            clock_gettime(id, &other)
            clock_gettime(CLOCK_MONOTONIC, &after)
            let start = Double(before.tv_sec) + Double(before.tv_nsec) / 1e9
            let end = Double(after.tv_sec) + Double(after.tv_nsec) / 1e9
            if end - start < best {
                best = end - start
                result = Double(other.tv_sec) + Double(other.tv_nsec) / 1e9 - (start + end) / 2
            }
        }
        return result
    }
}
