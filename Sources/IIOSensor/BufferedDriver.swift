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
    private var lastData: Double
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
                Sample(
                    time: Double(scan.timestamp!) / 1e9, acceleration: scaling.apply(x: scan.x, y: scan.y, z: scan.z))
            }
        }
        let times = clock.times(count: scans.count, arrival: arrival)
        return zip(scans, times).map { scan, time in
            Sample(time: time, acceleration: scaling.apply(x: scan.x, y: scan.y, z: scan.z))
        }
    }

    public func stop() {
        buffer.close()
    }
}
