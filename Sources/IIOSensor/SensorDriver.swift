// SPDX-License-Identifier: Apache-2.0
public import BlockingWork
import NumberFormat
public import ShakeDetection

/// A way of reading an accelerometer: from a buffer, or by polling its attributes. The capture loop
/// (``SensorSource``) drives one at a time; adding a kind of sensor means adding one driver.
public protocol SensorDriver: AnyObject {
    /// A short description for the log: `buffered, trigger fake-dev0, timestamps`.
    var summary: String { get }

    /// Waits for the next samples.
    /// - Returns: samples in m/s² on the *sensor's* axes (the source applies the mount matrix), with times in
    ///   seconds on the sensor's clock.
    /// - Throws: ``SensorFailure``.
    func next(wakeup: Wakeup) throws(SensorFailure) -> DriverRead

    /// Stops the capture (disables the buffer). Idempotent.
    func stop()
}

/// What a driver's wait produced.
public enum DriverRead: Sendable, Hashable {
    case samples([Sample])
    /// Samples with a break in the stream between them (the timestamps leapt: a suspend and resume, a clock
    /// step): the capture reports the break after the samples before it, then goes on with the rest.
    case broken(before: [Sample], reason: String, after: [Sample])
    /// Nothing yet; the driver is still waiting within its limits.
    case nothing
    /// The wakeup was signalled.
    case stopped
}

/// Why a driver cannot go on.
public enum SensorFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The device vanished or failed.
    case failed(IIOError)
    /// The buffer delivered nothing for this many seconds.
    case silent(seconds: Double)

    public var description: String {
        switch self {
        case .failed(let error): "\(error)"
        case .silent(let seconds): "no data for \(DecimalText.format((seconds * 10).rounded() / 10)) s"
        }
    }
}
