// SPDX-License-Identifier: Apache-2.0
/// Whether the relay's uinput accelerometer is to be made, and when to try again after it could not be: the
/// `uinput` module not loaded yet, or /dev/uinput not yet given to the service's group (a package installed on a
/// running system, before udev applied its rules to the node). The relay tries again after half a second, then
/// twice as long after each failure, at most every ``longestWait``, for as long as the device is wanted. No I/O
/// and no clock: ``RelayService`` makes the device, sleeps, and hands each outcome back here.
public struct RelayRetry: Sendable, Equatable {
    /// The device the relay should have, made or not; nil when none is wanted.
    public private(set) var wanted: AccelerometerRelay.Device?
    /// Failed tries at making ``wanted`` since it was asked for.
    public private(set) var failures = 0
    /// Counts every change of ``wanted``: a try scheduled for an older one is dropped.
    public private(set) var generation = 0

    /// The longest wait between two tries.
    public static let longestWait = Duration.seconds(10)

    public enum Outcome: Sendable, Equatable {
        /// The device was made at the first try: nothing to say.
        case made
        /// The device was made after failed tries: the relay works again (capture for its sake resumes).
        case recovered(failures: Int)
        /// The device could not be made: try again after `wait` (the try carries `generation`). `first` is
        /// true at the first failure, when the relay stops counting as a reader of the sensor.
        case retry(after: Duration, generation: Int, first: Bool)
    }

    public init() {}

    /// The wait before the next try, after `failures` failed ones.
    public static func delay(afterFailures failures: Int) -> Duration {
        let milliseconds = 500 << min(max(failures - 1, 0), 8)
        return min(.milliseconds(milliseconds), longestWait)
    }

    /// A device is asked for (``AccelerometerRelay/Action/create(_:)``): it is the one to make now.
    public mutating func create(_ device: AccelerometerRelay.Device) {
        wanted = device
        failures = 0
        generation += 1
    }

    /// No device is wanted any more (``AccelerometerRelay/Action/destroy``): tries still scheduled are dropped.
    public mutating func destroy() {
        wanted = nil
        failures = 0
        generation += 1
    }

    /// The try at making ``wanted`` succeeded (`true`) or failed.
    public mutating func tried(succeeded: Bool) -> Outcome {
        if succeeded {
            defer { failures = 0 }
            return failures == 0 ? .made : .recovered(failures: failures)
        }
        failures += 1
        return .retry(after: Self.delay(afterFailures: failures), generation: generation, first: failures == 1)
    }

    /// A scheduled try is due: the device to try making, or nil when the try is stale (the device was made,
    /// destroyed or replaced meanwhile).
    public func due(generation: Int) -> AccelerometerRelay.Device? {
        guard generation == self.generation, failures > 0 else { return nil }
        return wanted
    }
}
