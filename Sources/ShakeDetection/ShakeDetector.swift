/// The shake state machine: feed it samples, get back events.
///
/// It estimates gravity and removes it, follows the strokes of the hand (excursions of the gravity-free
/// acceleration past ``DetectorSettings/threshold``), and counts the reversals between opposite strokes.
/// Strokes that reverse quickly and repeatedly are a shake; see `docs/detection.md` for the reasoning.
///
/// It has no clock and performs no I/O: time comes from the samples, and each call returns the event, if any,
/// that the sample decided. A caller reports `ShakeEvent.cancelled(..., reason: .interrupted)` for a stream
/// that stops by calling ``interrupt()``.
public struct ShakeDetector: Sendable {
    /// What the detector has seen, for logs and status.
    public struct Counters: Sendable, Hashable {
        /// Samples accepted.
        public var samples = 0
        /// Samples dropped because a component or the time was not a finite number.
        public var nonFinite = 0
        /// Times the stream broke: time went backwards or jumped forward by more than `maxGap`.
        public var discontinuities = 0
        public var began = 0
        public var ended = 0
        public var cancelled = 0
    }

    private enum Mode: Sendable {
        /// Waiting for a shake to begin.
        case armed
        /// `began` was reported at the given time.
        case shaking(began: Double)
        /// A shake ended or was cancelled; no new one before the given time.
        case refractory(until: Double)
        /// Shaking went on too long; waiting for calm.
        case calming
    }

    public private(set) var settings: DetectorSettings
    public private(set) var counters = Counters()

    // Derived from the settings.
    private var thresholdSquared: Double
    private var activeSquared: Double
    private var inverseGravityTimeConstant: Double

    // The stream.
    private var isStreaming = false
    private var lastTime = 0.0
    private var armedAfter = 0.0
    private var gravity = Vector3.zero

    // The current stroke and the chain of reversals it belongs to.
    private var hasStroke = false
    private var strokePeak = Vector3.zero
    private var strokePeakLength = 0.0
    private var strokeStart = 0.0
    private var chainReversals = 0
    private var lastActive = 0.0

    // The shake in progress.
    private var mode = Mode.armed
    private var shakeReversals = 0
    private var shakePeakSquared = 0.0
    private var axisEnergy = Vector3.zero

    /// Creates a detector.
    /// - Precondition: the settings are valid (see ``DetectorSettings/validate()``).
    public init(settings: DetectorSettings = DetectorSettings()) {
        self.settings = settings
        thresholdSquared = 0
        activeSquared = 0
        inverseGravityTimeConstant = 0
        applyDerivedSettings()
    }

    /// Whether a shake has begun and not yet ended or been cancelled.
    public var isShaking: Bool {
        if case .shaking = mode { return true }
        return false
    }

    /// Changes the settings. A shake in progress keeps going and is decided under the new settings.
    public mutating func update(settings: DetectorSettings) {
        self.settings = settings
        applyDerivedSettings()
    }

    private mutating func applyDerivedSettings() {
        thresholdSquared = settings.threshold * settings.threshold
        let active = settings.threshold * Self.activeFraction
        activeSquared = active * active
        inverseGravityTimeConstant = 1 / settings.gravityTimeConstant
    }

    /// Below the threshold, motion still counts as part of a shake (delays its end) above this share of it.
    static let activeFraction = 0.5

    /// Feeds one sample.
    /// - Returns: the event this sample decided, if any. At most one event comes from one sample.
    public mutating func process(_ sample: Sample) -> ShakeEvent? {
        guard sample.isFinite else {
            counters.nonFinite += 1
            return nil
        }
        counters.samples += 1
        let time = sample.time
        guard isStreaming else {
            startStream(with: sample)
            return nil
        }
        let dt = time - lastTime
        if dt < 0 || dt > settings.maxGap {
            counters.discontinuities += 1
            let event = interrupt()
            startStream(with: sample)
            return event
        }
        lastTime = time

        let alpha = min(1, dt * inverseGravityTimeConstant)
        let acceleration = sample.acceleration
        gravity = gravity + (acceleration - gravity) * alpha
        let linear = acceleration - gravity
        let magnitudeSquared = linear.lengthSquared

        if magnitudeSquared > activeSquared {
            lastActive = time
        }

        switch mode {
        case .armed:
            guard time >= armedAfter else { return nil }
            guard trackStroke(linear, magnitudeSquared, at: time), chainReversals >= settings.beganReversals else {
                return nil
            }
            mode = .shaking(began: time)
            shakeReversals = chainReversals
            shakePeakSquared = strokePeakLength * strokePeakLength
            axisEnergy = .zero
            counters.began += 1
            return .began(time: time)

        case .shaking(let began):
            if trackStroke(linear, magnitudeSquared, at: time) {
                shakeReversals += 1
            }
            if magnitudeSquared > activeSquared {
                axisEnergy = axisEnergy + Vector3(
                    x: linear.x * linear.x, y: linear.y * linear.y, z: linear.z * linear.z)
            }
            shakePeakSquared = max(shakePeakSquared, magnitudeSquared)
            if time - began > settings.tooLong {
                mode = .calming
                resetStrokes()
                counters.cancelled += 1
                return .cancelled(time: time, began: began, reason: .tooLong)
            }
            if time - lastActive >= settings.quietTime {
                return finishShake(began: began, at: time)
            }
            return nil

        case .refractory(let until):
            if time >= until {
                mode = .armed
            }
            return nil

        case .calming:
            if time - lastActive >= settings.calmTime {
                mode = .armed
            }
            return nil
        }
    }

    /// Reports the end of the stream (a gap, the source closing, shutdown).
    ///
    /// - Returns: `cancelled` with reason `interrupted` if a shake was in progress. The next sample starts a new
    ///   stream: gravity is estimated afresh.
    public mutating func interrupt() -> ShakeEvent? {
        defer {
            isStreaming = false
            mode = .armed
            resetStrokes()
        }
        guard case .shaking(let began) = mode else { return nil }
        counters.cancelled += 1
        return .cancelled(time: max(lastTime, began), began: began, reason: .interrupted)
    }

    private mutating func startStream(with sample: Sample) {
        isStreaming = true
        lastTime = sample.time
        armedAfter = sample.time + settings.gravityTimeConstant
        gravity = sample.acceleration
        lastActive = sample.time
        mode = .armed
        resetStrokes()
    }

    private mutating func resetStrokes() {
        hasStroke = false
        chainReversals = 0
    }

    /// Follows the strokes of the hand.
    /// - Returns: whether this sample reversed the direction of the stroke (started an opposite stroke).
    private mutating func trackStroke(_ linear: Vector3, _ magnitudeSquared: Double, at time: Double) -> Bool {
        guard magnitudeSquared > thresholdSquared else {
            if hasStroke, time - strokeStart > settings.maxHalfPeriod, !isShaking {
                resetStrokes()
            }
            return false
        }
        guard hasStroke else {
            startStroke(linear, magnitudeSquared, at: time)
            chainReversals = 0
            return false
        }
        let along = linear.dot(strokePeak)
        if along < -settings.threshold * strokePeakLength {
            let quick = time - strokeStart <= settings.maxHalfPeriod
            chainReversals = quick ? chainReversals + 1 : 0
            startStroke(linear, magnitudeSquared, at: time)
            return quick
        }
        if along > 0, magnitudeSquared > strokePeakLength * strokePeakLength {
            strokePeak = linear
            strokePeakLength = magnitudeSquared.squareRoot()
        }
        return false
    }

    private mutating func startStroke(_ linear: Vector3, _ magnitudeSquared: Double, at time: Double) {
        hasStroke = true
        strokePeak = linear
        strokePeakLength = magnitudeSquared.squareRoot()
        strokeStart = time
    }

    private mutating func finishShake(began: Double, at time: Double) -> ShakeEvent {
        mode = .refractory(until: time + settings.refractory)
        let reversals = shakeReversals
        resetStrokes()
        guard reversals >= settings.reversals else {
            counters.cancelled += 1
            return .cancelled(time: time, began: began, reason: .notAShake)
        }
        counters.ended += 1
        let axis: Axis =
            axisEnergy.x >= axisEnergy.y && axisEnergy.x >= axisEnergy.z ? .x
            : axisEnergy.y >= axisEnergy.z ? .y : .z
        return .ended(
            ShakeSummary(
                time: time, began: began, peak: shakePeakSquared.squareRoot(), axis: axis, reversals: reversals))
    }
}
