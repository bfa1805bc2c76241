// SPDX-License-Identifier: Apache-2.0
public import BlockingWork
public import IIOModel
public import Logging
import NumberFormat
import ShakeDetection

/// Reads an accelerometer by polling its `in_accel_{x,y,z}_raw` attributes at the sampling rate: for devices
/// without a buffer, or whose buffer stays silent.
public final class PolledDriver: SensorDriver {
    /// Consecutive failed polls, in seconds' worth, after which the device counts as failed.
    public static let failureLimit = 2.0

    private let accelerometer: Accelerometer
    private let context: any IIOContextHandle
    private let interval: Double
    private let monotonic: @Sendable () -> Double
    /// Seconds the system has slept since boot (``BufferedDriver/secondsAsleep``).
    private let asleep: @Sendable () -> Double
    /// ``asleep`` at the last poll.
    private var asleepAtPoll: Double
    private let logger: Logger
    private var nextPoll: Double
    private var lastTime = -Double.infinity
    private var failingSince: Double?
    public let summary: String

    public init(
        accelerometer: Accelerometer, context: any IIOContextHandle, rate: Double, logger: Logger,
        monotonic: @escaping @Sendable () -> Double = SensorSource.monotonicSeconds,
        asleep: @escaping @Sendable () -> Double = BufferedDriver.secondsAsleep
    ) {
        self.accelerometer = accelerometer
        self.context = context
        self.interval = 1 / max(1, rate)
        self.monotonic = monotonic
        self.asleep = asleep
        asleepAtPoll = asleep()
        self.logger = logger
        self.nextPoll = monotonic()
        summary = "polled, in_accel_{x,y,z}_raw every \(DecimalText.format((interval * 10000).rounded() / 10)) ms"
    }

    public func next(wakeup: Wakeup) throws(SensorFailure) -> DriverRead {
        let now = monotonic()
        if nextPoll > now, wakeup.sleep(for: .milliseconds(Int64(((nextPoll - now) * 1000).rounded(.up)))) {
            return .stopped
        }
        if wakeup.isSignalled { return .stopped }
        let time = monotonic()
        // Keep to the schedule; after a stall, start afresh from now rather than catch up.
        nextPoll = max(nextPoll + interval, time)
        do {
            let x = try readRaw("in_accel_x_raw")
            let y = try readRaw("in_accel_y_raw")
            let z = try readRaw("in_accel_z_raw")
            failingSince = nil
            guard let x, let y, let z, time > lastTime else { return .nothing }
            lastTime = time
            let sample = Sample(time: time, acceleration: accelerometer.scaling.apply(x: x, y: y, z: z))
            if sleptSinceLastPoll() {
                // The samples are timed on the monotonic clock, which stops while the system sleeps: the way into
                // and out of a short suspend can take less of it than the detector's largest gap, and a shake
                // would go on across the sleep. The stream breaks before this sample, as a buffer's does.
                return .broken(before: [], reason: BufferedDriver.sleptReason, after: [sample])
            }
            return .samples([sample])
        } catch {
            if error.isDeviceGone { throw .failed(error) }
            let since = failingSince ?? time
            failingSince = since
            if time - since >= Self.failureLimit { throw .failed(error) }
            return .nothing
        }
    }

    /// Whether the system slept since the last poll (logged).
    private func sleptSinceLastPoll() -> Bool {
        noteSleep(now: asleep(), since: &asleepAtPoll, device: accelerometer.id, logger: logger)
    }

    /// Reads a raw attribute; nil when it is not a whole number (a value caught mid-update).
    private func readRaw(_ attribute: String) throws(IIOError) -> Int64? {
        let text = try context.read(device: accelerometer.id, attribute: attribute)
        if let value = Int64(text) { return value }
        if let value = Double(text), value.isFinite { return Int64(value.rounded()) }
        logger.debug("unreadable raw value", metadata: ["attribute": "\(attribute)", "value": "\(text)"])
        return nil
    }

    public func stop() {}
}
