/// What the detector reports: a shake began, then it either ended (a valid shake) or was cancelled.
///
/// The phases mirror UIKit's `motionBegan`, `motionEnded` and `motionCancelled`: nothing is reported in the
/// middle of a shake, and every `began` is followed by exactly one `ended` or `cancelled`.
public enum ShakeEvent: Sendable, Hashable {
    /// Shaking started at `time`.
    case began(time: Double)
    /// A valid shake finished.
    case ended(ShakeSummary)
    /// The shake that began at `began` turned out not to be one, lasted too long, or was interrupted.
    case cancelled(time: Double, began: Double, reason: CancelReason)

    /// Why a shake that began did not end as a valid shake.
    public enum CancelReason: String, Sendable, Hashable, CaseIterable {
        /// Shaking went on past the too-long cutoff: jogging or a bumpy ride is not a gesture.
        case tooLong = "too_long"
        /// The motion that began did not qualify: a single fling, a bump.
        case notAShake = "not_a_shake"
        /// The stream stopped: a gap, time going backwards, the source closing, shutdown.
        case interrupted
    }

    /// The phase name, as UIKit and the wire protocol spell it.
    public enum Phase: String, Sendable, Hashable, CaseIterable {
        case began, ended, cancelled
    }

    public var phase: Phase {
        switch self {
        case .began: .began
        case .ended: .ended
        case .cancelled: .cancelled
        }
    }

    /// When the event was decided, in seconds on the sensor's clock.
    public var time: Double {
        switch self {
        case .began(let time): time
        case .ended(let summary): summary.time
        case .cancelled(let time, _, _): time
        }
    }
}

/// A valid shake, as reported by ``ShakeEvent/ended(_:)``.
public struct ShakeSummary: Sendable, Hashable {
    /// When the shake was decided to be over (after the quiet time), in seconds on the sensor's clock.
    public var time: Double
    /// When the shake began (the time of its `began` event).
    public var began: Double
    /// The largest gravity-free acceleration magnitude during the shake, in m/s².
    public var peak: Double
    /// The axis of the sensor's frame along which most of the shaking happened.
    public var axis: Axis
    /// How many times the acceleration reversed direction.
    public var reversals: Int

    public init(time: Double, began: Double, peak: Double, axis: Axis, reversals: Int) {
        self.time = time
        self.began = began
        self.peak = peak
        self.axis = axis
        self.reversals = reversals
    }

    /// Seconds from `began` to `time`.
    public var duration: Double { time - began }
}

/// An axis of the sensor's frame.
public enum Axis: String, Sendable, Hashable, CaseIterable {
    case x, y, z
}
