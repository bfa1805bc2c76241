// SPDX-License-Identifier: Apache-2.0
/// What the detector reports: a shake began, then it either ended (a valid shake) or was cancelled.
///
/// The phases mirror UIKit's `motionBegan`, `motionEnded` and `motionCancelled`: nothing is reported in the
/// middle of a shake, and every `began` is followed by exactly one `ended` or `cancelled`.
public enum ShakeEvent: Sendable, Hashable {
    /// Shaking started at `time`.
    case began(time: Double)
    /// A valid shake finished.
    case ended(ShakeSummary)
    /// The shake that began at `began` turned out not to be one, lasted too long, or was interrupted. With reason
    /// `not_a_shake`, `detail` names the test the motion failed.
    case cancelled(time: Double, began: Double, reason: CancelReason, detail: Rejection? = nil)

    /// Why a shake that began did not end as a valid shake.
    public enum CancelReason: String, Sendable, Hashable, CaseIterable {
        /// Shaking went on past the too-long cutoff: jogging or a bumpy ride is not a gesture.
        case tooLong = "too_long"
        /// The motion that began did not qualify: a single fling, a bump.
        case notAShake = "not_a_shake"
        /// The stream stopped: a gap, time going backwards, the source closing, shutdown.
        case interrupted
    }

    /// Which test a motion that began failed, when it is cancelled as `not_a_shake`: for the person tuning the
    /// detector (`docs/detection.md` explains each).
    public enum Rejection: String, Sendable, Hashable, CaseIterable {
        /// Fewer good reversals than `reversals`, and none was rejected: one push, one bump.
        case tooFewReversals = "too_few_reversals"
        /// Too few good reversals; the last one rejected was too weak (its stroke moved the device too little).
        case weak
        /// Too few good reversals; the last one rejected was between strokes of very different strength.
        case lopsided
        /// Too few good reversals; the last one rejected closed a stroke that did not come back along the line of
        /// the one before it: a circle, the jumble of an impact, not a back-and-forth.
        case askew
        /// Too few good reversals; the last one rejected came too soon after its stroke began (a knock ringing).
        case ringing
        /// The strokes reversed, but the device never swung back: one move and its stop (with a recoil), not
        /// an oscillation.
        case oneWay = "one_way"
        /// One back-and-forth whose first stroke was small beside the second: the device went one way slowly and
        /// the other way fast, and ended displaced. A back-swing, a move and its stop, not an oscillation.
        case displaced
        /// The motion did not fill the shake's time: spikes with lulls between them.
        case lowDuty = "low_duty"
        /// The strokes' timing was too uneven for a shake.
        case irregular
        /// The device kept moving but the strokes stopped reversing: carried, not shaken.
        case carried
        /// The device fell freely (it read nearly nothing for a tenth of a second and more): a fall, a drop or a
        /// throw, which a hand holding the device never does.
        case freeFall = "free_fall"
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
        case .cancelled(let time, _, _, _): time
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
