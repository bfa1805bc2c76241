public import Logging
import ShakeDetection

/// Reads an accelerometer through its IIO buffer: the accel scan elements and the timestamp, with the device's
/// own trigger when it has one, waking a few times per second.
public final class BufferedDriver: SensorDriver {
    /// How many times per second the buffer wakes the daemon (scans per read = rate / this).
    public static let wakeupsPerSecond = 5.0
    /// Seconds without data after which the buffer is given up on (the source falls back to polling).
    public static let silenceLimit = 2.0

    private let accelerometer: Accelerometer
    private let buffer: any IIOBufferHandle
    private var decoder: ScanDecoder
    private var clock: SampleClock
    private let monotonic: @Sendable () -> Double
    private let logger: Logger
    private var lastData: Double
    /// The timestamp of the last scan, to notice the sensor's clock jumping.
    private var lastTimestamp: Int64?
    /// Seconds between two scans' timestamps past which the clock counts as having jumped ahead.
    private let jumpLimit: Double
    private var lastJumpWarning = -Double.infinity
    public let summary: String

    /// Starts the buffer: sets the trigger (or none), enables the accel and timestamp elements, and sets the
    /// watermark.
    /// - Throws: ``SensorFailure/failed(_:)`` when the buffer cannot be started.
    public init(
        accelerometer: Accelerometer, context: any IIOContextHandle, rate: Double, logger: Logger,
        monotonic: @escaping @Sendable () -> Double = SensorSource.monotonicSeconds
    ) throws(SensorFailure) {
        self.accelerometer = accelerometer
        self.monotonic = monotonic
        self.logger = logger
        jumpLimit = rate > 0 ? max(1, 5 / rate) : 1
        var details: [String] = []
        if let trigger = accelerometer.triggerID {
            do {
                try context.setTrigger(device: accelerometer.id, trigger: trigger)
                details.append("trigger \(accelerometer.triggerName ?? trigger)")
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
        let samples = max(1, Int((rate / Self.wakeupsPerSecond).rounded()))
        do {
            buffer = try context.openBuffer(device: accelerometer.id, channels: channels, samples: samples)
        } catch {
            throw .failed(error)
        }
        do {
            try context.writeBuffer(device: accelerometer.id, attribute: "watermark", value: String(samples))
        } catch {
            logger.debug("cannot set the watermark", metadata: ["device": "\(accelerometer.id)", "error": "\(error)"])
        }
        let layout = accelerometer.scanLayout(withTimestamp: withTimestamp)
        decoder = ScanDecoder(layout: layout)
        clock = SampleClock(rate: rate)
        lastData = monotonic()
        details.append(withTimestamp ? "timestamps" : "no timestamps (times from the rate)")
        details.append("\(samples) scans per read, \(layout.scanBytes) bytes per scan")
        summary = "buffered, " + details.joined(separator: ", ")
    }

    deinit {
        buffer.close()
    }

    public func next(wakeup: Wakeup) throws(SensorFailure) -> DriverRead {
        let outcome = buffer.wait(timeout: .milliseconds(250), wakeup: wakeup)
        switch outcome {
        case .stopped:
            return .stopped
        case .failed:
            // Let the read report what went wrong.
            do {
                _ = try buffer.read()
            } catch {
                throw .failed(error)
            }
            throw .failed(
                IIOError(
                    code: 19, operation: "waiting for the buffer of \(accelerometer.id)",
                    reason: "the device reported an error"))
        case .timedOut:
            return try checkSilence()
        case .ready:
            let bytes: [UInt8]
            do {
                bytes = try buffer.read()
            } catch {
                throw .failed(error)
            }
            let scans = decoder.decode(bytes)
            guard !scans.isEmpty else { return try checkSilence() }
            let now = monotonic()
            lastData = now
            return .samples(samples(from: scans, arrival: now))
        }
    }

    private func checkSilence() throws(SensorFailure) -> DriverRead {
        let silent = monotonic() - lastData
        if silent >= Self.silenceLimit { throw .silent(seconds: silent) }
        return .nothing
    }

    /// Scales the scans and gives them times: the kernel's timestamps when enabled, the sample clock otherwise.
    func samples(from scans: [RawScan], arrival: Double) -> [Sample] {
        let scaling = accelerometer.scaling
        if scans.allSatisfy({ $0.timestamp != nil }) {
            return scans.map { scan in
                let timestamp = scan.timestamp!
                if let lastTimestamp { noteClockJump(from: lastTimestamp, to: timestamp, at: arrival) }
                lastTimestamp = timestamp
                return Sample(
                    time: Double(timestamp) / 1e9, acceleration: scaling.apply(x: scan.x, y: scan.y, z: scan.z))
            }
        }
        let times = clock.times(count: scans.count, arrival: arrival)
        return zip(scans, times).map { scan, time in
            Sample(time: time, acceleration: scaling.apply(x: scan.x, y: scan.y, z: scan.z))
        }
    }

    /// Logs the sensor's clock going back, or leaping ahead, between two scans (a suspend and resume, or the
    /// clock being set): the detector sees a break in the stream there, and the log says why. A warning at most
    /// every ten seconds, the rest at debug level, so that a sensor whose clock misbehaves does not flood it.
    private func noteClockJump(from previous: Int64, to current: Int64, at now: Double) {
        let seconds = (Double(current) - Double(previous)) / 1e9
        guard seconds < 0 || seconds > jumpLimit else { return }
        let magnitude = abs(seconds)
        let size = SamplingFrequency.format(
            magnitude >= 1 ? (magnitude * 10).rounded() / 10 : (magnitude * 1000).rounded() / 1000)
        let level: Logger.Level = now - lastJumpWarning >= 10 ? .warning : .debug
        if level == .warning { lastJumpWarning = now }
        logger.log(
            level: level,
            seconds < 0
                ? "the timestamps of \(accelerometer.id) went back \(size) s between two scans (a clock step)"
                : "the timestamps of \(accelerometer.id) jumped ahead \(size) s between two scans (a suspend and resume, a clock step or lost data)"
        )
    }

    public func stop() {
        buffer.close()
    }
}
