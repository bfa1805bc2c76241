// SPDX-License-Identifier: Apache-2.0
/// Whether two consecutive scans of a buffered sensor, by their timestamps, belong to one stream.
///
/// A sensor's timestamps leap ahead across a suspend and resume (the time the kernel took to freeze and thaw,
/// and on some clocks the sleep itself), and go back or leap ahead when the clock they are on is stepped. The
/// samples on either side of such a leap are not one motion: a shake in progress must not be ended with a
/// duration that spans it, nor go on as if the hand had never stopped. The capture treats the leap as a break
/// in the stream, as it treats the sensor vanishing: the detector cancels a shake in progress (`interrupted`)
/// and starts afresh.
public enum ScanContinuity: Sendable, Hashable {
    /// The next scan follows the previous one.
    case continuous
    /// The timestamps went back by this many seconds.
    case wentBack(seconds: Double)
    /// The timestamps leapt ahead by this many seconds, more than the limit.
    case jumpedAhead(seconds: Double)

    /// Judges the step from the previous scan's time to the current one's (seconds).
    /// - Parameter limit: the longest step that is still one stream (the driver's: a few sampling intervals,
    ///   at least a second).
    public static func between(previous: Double, current: Double, limit: Double) -> ScanContinuity {
        let step = current - previous
        if step < 0 { return .wentBack(seconds: -step) }
        if step > limit { return .jumpedAhead(seconds: step) }
        return .continuous
    }

    /// Whether the stream breaks here.
    public var breaksStream: Bool { self != .continuous }

    /// The size of the step, in seconds (0 when continuous).
    public var seconds: Double {
        switch self {
        case .continuous: 0
        case .wentBack(let seconds), .jumpedAhead(let seconds): seconds
        }
    }

    /// Why the stream broke, for the log and the stream's break (nil when it did not).
    public var reason: String? {
        switch self {
        case .continuous: nil
        case .wentBack: "the timestamps went back between two scans (a clock step)"
        case .jumpedAhead:
            "the timestamps jumped ahead between two scans (a suspend and resume, a clock step or lost data)"
        }
    }
}
