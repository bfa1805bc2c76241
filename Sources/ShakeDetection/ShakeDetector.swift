// SPDX-License-Identifier: Apache-2.0
/// The shake state machine: feed it samples, get back events.
///
/// It estimates gravity and removes it, follows the *strokes* of the hand (excursions of the gravity-free
/// acceleration past ``DetectorSettings/threshold``), and counts the *reversals* between opposite strokes. A
/// shake is a run of quick, strong, alike, rhythmic reversals that fills its time; `docs/detection.md` explains
/// each test and the physics behind it.
///
/// It has no clock and performs no I/O: time comes from the samples, and each call returns the event, if any,
/// that the sample decided. A caller reports the end of a stream (the source closing, shutdown) with
/// ``interrupt()``.
public struct ShakeDetector: Sendable {
    /// What the detector has seen, for logs and status.
    public struct Counters: Sendable, Hashable {
        /// Samples accepted.
        public var samples = 0
        /// Samples dropped because the time or a component was not a finite number, or the acceleration was longer
        /// than ``Sample/plausibleLimit`` (no accelerometer reads that; it is corrupt data).
        public var invalid = 0
        /// Times the stream broke: time went backwards or jumped forward by more than `maxGap`.
        public var discontinuities = 0
        public var began = 0
        public var ended = 0
        public var cancelled = 0
        /// Motions decided (``lastDecision``), reported or followed silently.
        public var decided = 0

        public init() {}
    }

    private enum Mode: Sendable {
        /// Waiting for a shake to begin.
        case armed
        /// `began` was reported at the given time.
        case shaking(began: Double)
        /// A shake ended or was cancelled; no new one before the given time.
        case refractory(until: Double)
        /// Motion went on too long, or without oscillating; waiting for calm.
        case calming
    }

    /// Time constant, in seconds, of the fast average whose departures count as motion (for the quiet time).
    static let motionTimeConstant = 0.1
    /// Acceleration change, m/s², beyond the fast average that counts as motion.
    static let motionThreshold = 3.0
    /// The shortest time, in seconds, between the starts of two strokes of a hand (a reversal sooner than this
    /// is a knock ringing, not a hand).
    static let minHalfPeriod = 0.05
    /// After a shake began, strokes that stop reversing for `maxHalfPeriod` plus this are not a shake.
    static let strokeGrace = 0.4
    /// Share of the threshold above which motion counts towards the duty.
    static let dutyFraction = 0.5
    /// A good reversal counts once the stroke it starts has given the device at least this share of the
    /// impulse of the stroke before: the device swings back. In a shake consecutive strokes are alike (the
    /// first and the last, from and to rest, carry a third to a half of the others); the recoil after a move stops
    /// carries a small part of the stop.
    static let swingRatio = 1.0 / 3
    /// A chain of one back-and-forth (three strokes, two counted reversals) is a shake only if its first stroke
    /// gave the device at least this share of the speed the second then carried it the other way with (the
    /// second stroke's impulse less the first's). A hand shaking from rest swings it about where it started: the
    /// first and the last stroke each carry about half of the middle one, the speeds both ways alike (about 1).
    /// A back-swing, the move and its stop are the same three strokes, but the back-swing is small: the device
    /// goes one way slowly and the other way fast, and ends displaced. Whatever its shape, a chain with more
    /// strokes is not asked: the motion went on; nor is one whose first stroke points down (steeper than
    /// `nearlyLevel`), whose impulse counts only beyond free fall and so reads low.
    static let backSwing = 0.5
    /// A good reversal closes a stroke that came back along the line of the stroke before it: the cosine of the
    /// angle between the two strokes' peak directions is at most this (within 45 degrees of straight back). A
    /// hand shakes back and forth along a line; the device turns in the hand as it goes, but little between two
    /// strokes. The acceleration of a circle turns a quarter to a third of a turn from stroke to stroke, and
    /// the jumble of an impact (a fall, the device bouncing in a pocket) points every way (`askew`).
    static let straightBack = -0.7
    /// In the duty a sample weighs the time since the one before, but at most this many mean intervals of the
    /// stream: a sensor sampling unevenly (a phone's timer) stamps each sample when it took it, within a third of
    /// an interval or so; a sample held back 20-80 ms by a loaded system and then delivered with a burst of others,
    /// all stamped when they arrived, would weigh the time it waited, weak or strong, and the burst nothing.
    static let maxSampleWeight = 2.0
    /// After the last strong sample of a shake with more reversals than it needs (two quick back-and-forths,
    /// not one), the hand settles: up to this many seconds of weaker motion before the quiet time are not held
    /// against the duty (a short, brisk shake is mostly its own settling).
    static let settleTime = 0.1
    /// A stroke reports `began` before any reversal only when it points down, or this close to across gravity
    /// (the square of the cosine of its angle to gravity at most this: within about 51 degrees of level). The
    /// body's own jolts (steps, landings, sitting down, stairs) push up along gravity; nothing but a hand
    /// pushes the device down harder than free fall (what a downward stroke measures).
    static let acrossGravity = 0.6
    /// ...and when it gave the device `beganImpulse` within this many times the time the threshold acceleration
    /// would take: a brisk hand, not a slow push or the gravity estimate catching up with a turn.
    static let quickStrokeFactor = 1.5
    /// `began` is reported at once only on evidence that the body's own jolts do not give. A landing, a step, a
    /// stumble or sitting down pushes the device up, and the rebound that follows makes the first reversal of
    /// a jump or a stair; lying down turns the body, so that the jolt that ends it looks level to a gravity
    /// estimate that lags, but arrives more slowly than a hand's stroke. So a shake is reported at once on
    /// - a first stroke that points down, or is nearly level (one that points up within about 27 degrees of
    ///   level: the square of the cosine of its angle to up at most this), and is brisker still: it gave the
    ///   device `beganImpulse` within `briskStrokeFactor` times the time the threshold acceleration would take,
    ///   without leaning first (`maxLean`), not amid hard motion (`maxBusySquared`) and not soon after a motion
    ///   that was not a shake (`retryTime`);
    /// - or a counted reversal neither of whose strokes points up more steeply than that.
    /// Any other shake is followed silently (its decisions are the same), and reported once it would pass every
    /// test if it ended now; if it is cancelled before, nothing at all is reported.
    static let nearlyLevel = 0.2
    /// See `nearlyLevel`: 0.1 s at `medium`, and never less than three sample intervals (at 25 Hz the
    /// impulse of a stroke that has just crossed the threshold is measured on too few samples).
    static let briskStrokeFactor = 1.2
    /// ...and the acceleration did not lean first: before the stroke crossed the threshold, it had stayed above
    /// half of it for at most this many seconds. A hand starting a shake gets there in a few hundredths of a
    /// second; a body lying down turns the device steadily, the gravity estimate lags behind by about 1 g for
    /// a third of a second and more, and the jolt that ends the turn rides on that lean.
    static let maxLean = 0.25
    /// ...and the device was not already moving hard: the mean square of the gravity-free acceleration, averaged
    /// with time constant `busyTimeConstant` over the samples while armed, was at most this, m²/s⁴ (9 m/s² RMS), on
    /// the last sample before the lean. A hand sets off into a shake from holding the device (the recorded shakes:
    /// under 5 m/s² RMS in the second before, 8 for a phone already being shaken); lifting a weight or doing
    /// jumping jacks with the device in the hand or a pocket keeps it moving at 9 to 18 m/s² RMS between the
    /// strokes, and its next brisk stroke is one more of them. A stroke after such motion is followed silently, as
    /// any other, and reported once a counted reversal shows a hand.
    static let maxBusySquared = 9.0 * 9.0
    static let busyTimeConstant = 1.0
    /// ...nor within this many seconds of a motion decided not to be a shake (reported or not). Exercise repeats
    /// its one-way stroke every one to three seconds (a pull of the oars, a lift of the weight), each decided
    /// `too_few_reversals`; a hand that tries again after a motion that was not a shake is reported at its first
    /// counted reversal instead.
    static let retryTime = 2.0

    /// A device that reads less than 0.3 g (this, squared, in m/s²) is falling freely, or nearly: nothing holds
    /// it. A hand shaking it up and down passes through such readings only briefly, as its push turns from up
    /// to down... (Standard gravity, not the estimate: the estimate grows while the motion is one-sided.)
    static let freeFallSquared = (0.3 * 9.80665) * (0.3 * 9.80665)
    /// ...for well under this many seconds; a person falling from standing is in the air for a quarter of a
    /// second and more.
    static let freeFallTime = 0.1

    /// A device that only turns reads one g, whichever way it points. Once it rests, turned, the gravity
    /// estimate still lags behind the turn, and what it leaves looks like an acceleration of up to a g that
    /// decays as the estimate catches up: a stroke that gives the device any impulse, for as long as the
    /// estimate lags, without the device moving. So a reading between these (squared, m/s²: 0.85 and 1.15 g,
    /// room for a sensor's calibration) ...
    static let turningLow = (0.85 * 9.80665) * (0.85 * 9.80665)
    static let turningHigh = (1.15 * 9.80665) * (1.15 * 9.80665)
    /// ...within about 120 degrees of the gravity estimate (their dot product, m²/s⁴, above this: a reading of
    /// one g against the estimate is a hand pushing the device down past free fall, not a turn)...
    static let turningAgainst = -0.5 * 9.80665 * 9.80665
    /// ...and steady (changed since the previous sample by less than this jerk, m/s³, allows: a hand's stroke
    /// changes the reading faster, save for an instant at its peak) may be the device resting, turned, and does
    /// not swing it back.
    static let turningJerk = 50.0

    public private(set) var settings: DetectorSettings
    public private(set) var counters = Counters()
    /// What the detector made of the last sample it accepted, for plots and diagnostics. Worked out when asked,
    /// so that it costs nothing per sample.
    public var lastObservation: Observation {
        let linear = lastAcceleration - gravity
        return Observation(
            linear: linear,
            stroke: Self.limitingFreeFall(linear, gravity: gravity, allowance: settings.freeFallAllowance),
            reversal: lastReversalTime == lastTime ? lastReversal : nil)
    }

    /// The detector's view of one sample.
    public struct Observation: Sendable, Hashable {
        /// The acceleration with the gravity estimate removed, m/s².
        public var linear = Vector3.zero
        /// What counts towards strokes: `linear`, with its downward part limited to what exceeds free fall.
        public var stroke = Vector3.zero
        /// Whether this sample reversed the stroke, and what the detector made of the stroke it closed.
        public var reversal: Reversal?
    }

    /// A reversal, as ``Observation/reversal`` reports it.
    public enum Reversal: Sendable, Hashable {
        /// The stroke it closed passed every test; the reversal counts once the next stroke swings back.
        case accepted
        /// The stroke after a good reversal swung the device back: the reversal counts (reported on the sample
        /// where that happened).
        case confirmed
        /// The stroke it closed failed a test: `weak`, `lopsided` or `ringing`.
        case rejected(ShakeEvent.Rejection)
    }

    /// How the last motion the detector followed as a possible shake was decided: which test decided and by how
    /// much. Set only when a motion is decided (never per sample), reported or not, for the person tuning the
    /// detector (`shakectl eval --near-misses`); ``Counters/decided`` counts them.
    public private(set) var lastDecision: Decision?

    /// A test and how the motion measured against it.
    public struct Margin: Sendable, Hashable {
        public enum Test: String, Sendable, Hashable, CaseIterable {
            /// Counted reversals against `reversals`.
            case reversals
            /// A reversal's half period, s, against the shortest a hand makes (`ringing`).
            case ringing
            /// A stroke's impulse, m/s, against `min_impulse`.
            case weak
            /// The weaker of two strokes' peaks over the stronger, against `symmetry`.
            case lopsided
            /// How straight back a stroke came: minus the cosine between two strokes' peak directions, against 0.7.
            case askew
            /// The impulse, m/s, a stroke gave the device after a good reversal, against what swings it back.
            case oneWay = "one_way"
            /// The first stroke's impulse against half the speed the second carried the device back with, m/s.
            case displaced
            /// Counted reversals against the rejected ones plus one.
            case balance
            /// The share of the shake's time above half the threshold, against `min_duty`.
            case duty
            /// The coefficient of variation of the half periods, against `max_irregularity`.
            case rhythm
            /// The device fell freely: it read under 0.3 g for 0.1 s (the value) or more, where a hand allows none.
            case freeFall = "free_fall"
            /// Seconds since the last stroke began, against `max_half_period` plus 0.4 s (`carried`).
            case carried
            /// Seconds of motion, against `too_long`.
            case tooLong = "too_long"
        }
        public var test: Test
        public var value: Double
        public var limit: Double
        /// Whether the test asks for at least the limit (else at most).
        public var atLeast: Bool
        public var passes: Bool { atLeast ? value >= limit : value <= limit }
        /// How far the value is on the passing side of the limit, as a share of the limit: negative fails.
        public var relative: Double {
            let room = atLeast ? value - limit : limit - value
            return limit != 0 ? room / abs(limit) : room
        }

        public init(test: Test, value: Double, limit: Double, atLeast: Bool = true) {
            self.test = test
            self.value = value
            self.limit = limit
            self.atLeast = atLeast
        }
    }

    /// A motion decided: a shake (`ended`), or not, reported or followed silently.
    public struct Decision: Sendable, Hashable {
        public var time: Double
        /// Whether `began` was reported for it.
        public var reported: Bool
        /// Whether it was a shake.
        public var isShake: Bool
        /// For a motion that was not a shake: the test it failed (whose margin is negative). For a shake: the
        /// test it passed by the least.
        public var decisive: Margin
        /// The last reversal that was rejected (or never swung back), and by how much.
        public var lastRejected: Margin?
        /// Counted reversals.
        public var reversals: Int

        public init(
            time: Double, reported: Bool, isShake: Bool, decisive: Margin, lastRejected: Margin?, reversals: Int
        ) {
            self.time = time
            self.reported = reported
            self.isShake = isShake
            self.decisive = decisive
            self.lastRejected = lastRejected
            self.reversals = reversals
        }
    }

    // Derived from the settings.
    private var thresholdSquared = 0.0
    private var dutySquared = 0.0
    private var inverseGravityTimeConstant = 0.0
    private var quickStroke = 0.0
    private var briskStroke = 0.0

    // The stream.
    private var isStreaming = false
    private var lastAcceleration = Vector3.zero
    /// The last reversal, for ``lastObservation``, and the time of the sample that made it.
    private var lastReversal: Reversal?
    private var lastReversalTime = -Double.infinity
    private var lastTime = 0.0
    /// The stream's first sample: its time, and its number in ``Counters/samples``.
    private var streamStart = 0.0
    private var streamStartSample = 0
    private var gravity = Vector3.zero
    private var fastAverage = Vector3.zero
    private var lastMotion = 0.0

    // The current stroke.
    private var hasStroke = false
    /// The unit direction of the stroke's peak.
    private var strokeDirection = Vector3.zero
    private var strokePeakLength = 0.0
    private var strokeStart = 0.0
    /// The stroke's first sample, counted in ``Counters/samples``: see `strokeAge`.
    private var strokeStartSample = 0
    private var strokeImpulse = 0.0
    /// Impulse against the current stroke since the acceleration last pointed along it: the start of the
    /// next stroke, if it comes.
    private var opposingImpulse = 0.0
    /// Whether the previous sample's reading may have been the device resting, turned (`mayBeTurning`), and
    /// what it was.
    private var turning = false
    private var turningReading = Vector3.zero
    private var previousPeakLength = 0.0
    /// Whether the reversal that closed the chain's first stroke found it `weak` or `ringing` (see `trackStroke`).
    private var weakStart = false
    /// The unit direction of the previous stroke's peak, for `straightBack`.
    private var previousDirection = Vector3.zero
    /// Whether the reversal that started the current stroke was good and waits for the stroke to swing back.
    private var pending = false
    /// The impulse, m/s, the current stroke needs for that.
    private var pendingImpulse = 0.0

    // The chain of quick reversals the stroke belongs to.
    private var halves = HalfPeriodStatistics()
    /// The time since the chain's first stroke, and the part of it that the motion was strong (the duty), each
    /// sample weighing at most `maxSampleWeight` mean intervals.
    private var dutyTime = 0.0
    private var dutyActive = 0.0
    private var lastActive = 0.0
    private var goodReversals = 0
    /// How long the gravity-free acceleration has stayed above half the threshold while armed without a
    /// stroke, and how long it had when the first stroke of the chain began (`maxLean`).
    private var lean = 0.0
    private var leanBeforeStroke = 0.0
    /// The mean square, m²/s⁴, of the gravity-free acceleration (time constant `busyTimeConstant`), what it was on
    /// the last sample under half the threshold while armed, and what that was when the chain's first stroke began
    /// (`maxBusySquared`).
    private var busy = 0.0
    private var busyBeforeLean = 0.0
    private var busyBeforeStroke = 0.0
    /// When the last motion decided not to be a shake was decided (`retryTime`).
    private var lastNotAShake = -Double.infinity
    /// Counted reversals neither of whose strokes pointed up: evidence of a hand, not of the body's jolts.
    private var levelReversals = 0
    /// Whether the stroke closed by the last good reversal pointed up.
    private var closedUpward = false
    private var rejectedReversals = 0
    private var lastRejection: ShakeEvent.Rejection?
    /// How the last rejected reversal failed (for ``lastDecision``; set only at a rejection).
    private var lastRejectedMargin: Margin?
    /// Good reversals since the shake's first stroke, and the impulses, m/s, of the strokes the first two closed
    /// (`backSwing`).
    private var acceptedReversals = 0
    private var firstImpulse = 0.0
    private var secondImpulse = 0.0
    /// Whether the first of them pointed down more steeply than `nearlyLevel`: its impulse counts only beyond free
    /// fall, so it reads low, and the back-swing test is not asked.
    private var firstDownward = false

    // The shake in progress.
    private var mode = Mode.armed
    /// Whether `began` was reported for the shake in progress, and when. Until it is, the shake is followed
    /// silently: its `cancelled` is not reported either.
    private var isReported = false
    private var reportedBegan = 0.0
    private var shakePeakSquared = 0.0
    /// Since when the device has read nearly nothing (the last sample that read more), and whether it has for
    /// `freeFallTime` since the shake began.
    private var freeFallSince = 0.0
    private var fell = false
    private var axisEnergy = Vector3.zero

    /// Creates a detector.
    /// - Precondition: the settings are valid (see ``DetectorSettings/validate()``).
    public init(settings: DetectorSettings = DetectorSettings()) {
        self.settings = settings
        applyDerivedSettings()
    }

    /// Whether a shake has begun and not yet ended or been cancelled.
    public var isShaking: Bool { inShake && isReported }

    /// Whether a hand may be at work: a stroke is under way, or a shake is in progress (reported or not). The
    /// capture reads its sensor in short steps then, so that the decisions to come (`ended`, a `began` at a
    /// reversal) are not held back by a long read.
    public var isMotionUnderWay: Bool { inShake || hasStroke }

    /// Whether a shake is in progress, reported or not.
    private var inShake: Bool {
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
        let duty = settings.threshold * Self.dutyFraction
        dutySquared = duty * duty
        inverseGravityTimeConstant = 1 / settings.gravityTimeConstant
        quickStroke = Self.quickStrokeFactor * settings.beganImpulse / settings.threshold
        briskStroke = Self.briskStrokeFactor * settings.beganImpulse / settings.threshold
    }

    /// Feeds one sample.
    /// - Returns: the event this sample decided, if any. At most one event comes from one sample.
    public mutating func process(_ sample: Sample) -> ShakeEvent? {
        guard sample.isUsable else {
            counters.invalid += 1
            return nil
        }
        counters.samples &+= 1
        guard isStreaming else {
            startStream(with: sample)
            return nil
        }
        let time = sample.time
        let gap = time - lastTime
        if gap < 0 || gap > settings.maxGap {
            counters.discontinuities += 1
            let event = interrupt()
            startStream(with: sample)
            return event
        }
        lastTime = time

        let acceleration = sample.acceleration
        gravity = gravity + (acceleration - gravity) * min(1, gap * inverseGravityTimeConstant)
        lastAcceleration = acceleration
        let linear = acceleration - gravity

        switch mode {
        case .armed:
            busy += (linear.lengthSquared - busy) * min(1, gap * (1 / Self.busyTimeConstant))
            // The common case, at rest or walking: no stroke under way, and nothing strong enough to start one
            // (limiting free fall never lengthens the vector).
            guard hasStroke || linear.lengthSquared > thresholdSquared else {
                // How long the device has leant (see `maxLean`).
                if linear.lengthSquared > dutySquared {
                    lean += gap
                } else {
                    lean = 0
                    busyBeforeLean = busy
                }
                return nil
            }
            let dt = step(at: time)
            let stroke = Self.limitingFreeFall(linear, gravity: gravity, allowance: settings.freeFallAllowance)
            let strokeSquared = stroke.lengthSquared
            if hasStroke { accountDuty(strokeSquared, at: time, gap: gap, step: dt) }
            trackStroke(stroke, strokeSquared, at: time, dt: dt)
            // `began` needs the first evidence of a shake: a good reversal whose next stroke swings the device
            // back, or a brisk first stroke across gravity. A bump, a step or a landing acts along gravity and
            // does not swing back.
            guard
                goodReversals > 0
                    || (hasStroke && strokeImpulse >= settings.beganImpulse
                        && strokeAge(dt) <= quickStroke && isAcrossGravity)
            else { return nil }
            mode = .shaking(began: time)
            // Motion is followed only from here on (`followMotion`): the fast average starts from this reading,
            // and the stroke is motion.
            fastAverage = acceleration
            lastMotion = time
            fell = false
            freeFallSince = time
            shakePeakSquared = linear.lengthSquared
            axisEnergy = .zero
            isReported = false
            guard
                levelReversals > 0
                    || (goodReversals == 0 && strokeAge(dt) <= max(briskStroke, 3 * dt) && isNearlyLevel
                        && leanBeforeStroke <= Self.maxLean && busyBeforeStroke <= Self.maxBusySquared
                        && time - lastNotAShake > Self.retryTime)
            else { return nil }
            return report(at: time)

        case .shaking(let began):
            let dt = step(at: time)
            followMotion(acceleration, at: time, dt: gap)
            let stroke = Self.limitingFreeFall(linear, gravity: gravity, allowance: settings.freeFallAllowance)
            let strokeSquared = stroke.lengthSquared
            accountDuty(strokeSquared, at: time, gap: gap, step: dt)
            trackStroke(stroke, strokeSquared, at: time, dt: dt)
            let linearSquared = linear.lengthSquared
            shakePeakSquared = max(shakePeakSquared, linearSquared)
            if strokeSquared > dutySquared {
                axisEnergy =
                    axisEnergy + Vector3(x: linear.x * linear.x, y: linear.y * linear.y, z: linear.z * linear.z)
                freeFallSince = time
            } else if lastAcceleration.lengthSquared < Self.freeFallSquared {
                // Falling freely adds nothing to a stroke (the free-fall rule): only a weak sample can be one.
                if time - freeFallSince >= Self.freeFallTime { fell = true }
            } else {
                freeFallSince = time
            }
            if !isReported,
                levelReversals > 0 || (goodReversals >= settings.reversals && rejection(at: time, ending: false) == nil)
            {
                // A shake followed silently reports `began` once a hand shows, or once it would be a shake if it
                // ended now (but for the back-swing test, which only a motion that stops is asked: a shake's
                // `began` is not put off for it).
                return report(at: time)
            }
            if lastMotion - began > settings.tooLong {
                return cancel(at: time, reason: .tooLong, then: .calming)
            }
            if time - lastMotion >= settings.quietTime {
                return finishShake(at: time)
            }
            if hasStroke, time - strokeStart > settings.maxHalfPeriod + Self.strokeGrace {
                // Still moving, but no longer oscillating: carried, not shaken.
                return cancel(at: time, reason: .notAShake, detail: .carried, then: .calming)
            }
            return nil

        case .refractory(let until):
            if time >= until {
                mode = .armed
                resetStrokes()
            }
            return nil

        case .calming:
            followMotion(acceleration, at: time, dt: gap)
            if time - lastMotion >= settings.calmTime {
                mode = .armed
                resetStrokes()
            }
            return nil
        }
    }

    /// Follows the fast average of the raw signal, and when it last departed from it (motion, as opposed to
    /// calm): only while a shake is in progress or the detector waits for calm, the only times it is asked.
    @inline(__always)
    private mutating func followMotion(_ acceleration: Vector3, at time: Double, dt: Double) {
        fastAverage = fastAverage + (acceleration - fastAverage) * min(1, dt * (1 / Self.motionTimeConstant))
        if (acceleration - fastAverage).lengthSquared > Self.motionThreshold * Self.motionThreshold {
            lastMotion = time
        }
    }

    /// The duty: the time since the chain's first stroke, and the part of it that the motion was strong. A sample
    /// weighs the time since the one before (a sensor that samples unevenly stamps each sample when it took it),
    /// but no more than `maxSampleWeight` mean intervals: a sample held back and then delivered in a burst, stamped
    /// when it arrived, does not weigh all the time it waited.
    @inline(__always)
    private mutating func accountDuty(_ strokeSquared: Double, at time: Double, gap: Double, step: Double) {
        let weight = min(gap, Self.maxSampleWeight * step)
        dutyTime += weight
        if strokeSquared > dutySquared {
            dutyActive += weight
            lastActive = time
        }
    }

    /// Reports `began` for the shake in progress.
    private mutating func report(at time: Double) -> ShakeEvent {
        isReported = true
        reportedBegan = time
        counters.began += 1
        return .began(time: time)
    }

    /// Whether the current stroke points up, as the body's jolts do, more steeply than `nearlyLevel`.
    private var isUpward: Bool {
        let along = strokeDirection.dot(gravity)
        return along > 0 && along * along > Self.nearlyLevel * gravity.lengthSquared
    }

    /// Whether the current stroke points down, or is nearly level (`nearlyLevel`).
    private var isNearlyLevel: Bool {
        let along = strokeDirection.dot(gravity)
        return along < 0 || along * along <= Self.nearlyLevel * gravity.lengthSquared
    }

    /// Whether the current stroke points down, or across gravity rather than along it: not a jolt of the body.
    private var isAcrossGravity: Bool {
        let along = strokeDirection.dot(gravity)
        return along < 0 || along * along <= Self.acrossGravity * gravity.lengthSquared
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
        guard case .shaking = mode, isReported else { return nil }
        counters.cancelled += 1
        return .cancelled(time: max(lastTime, reportedBegan), began: reportedBegan, reason: .interrupted)
    }

    /// The gravity-free acceleration with its downward part limited to what exceeds free fall.
    ///
    /// A body falling, jumping or running reads at most zero, so the linear acceleration points down by at most
    /// one g; only a hand pushing the device down makes it read past zero. Counting only that part keeps the
    /// flight phase of a jump or a stride from looking like the downward stroke of a shake.
    @inline(__always)
    static func limitingFreeFall(_ linear: Vector3, gravity: Vector3, allowance: Double) -> Vector3 {
        let along = linear.dot(gravity)
        guard along < 0 else { return linear }
        let gravityLength = gravity.length
        guard gravityLength > 0 else { return linear }
        let down = along / gravityLength  // negative: how far the acceleration points down
        let beyondFreeFall = min(0, down + gravityLength * allowance)
        return linear + gravity * ((beyondFreeFall - down) / gravityLength)
    }

    private mutating func startStream(with sample: Sample) {
        isStreaming = true
        lastTime = sample.time
        streamStart = sample.time
        streamStartSample = counters.samples
        gravity = sample.acceleration
        busy = 0
        busyBeforeLean = 0
        lastNotAShake = -.infinity
        fastAverage = sample.acceleration
        lastAcceleration = sample.acceleration
        lastMotion = sample.time
        // The gravity estimate settles first.
        mode = .refractory(until: sample.time + settings.gravityTimeConstant)
        resetStrokes()
    }

    /// Forgets the strokes: the next one starts a new chain (and, unless a shake is in progress, a new count of
    /// reversals).
    private mutating func resetStrokes() {
        hasStroke = false
        lean = 0
        previousPeakLength = 0
        halves = HalfPeriodStatistics()
        dutyTime = 0
        dutyActive = 0
        pending = false
        if !inShake {
            goodReversals = 0
            levelReversals = 0
            rejectedReversals = 0
            lastRejection = nil
            lastRejectedMargin = nil
            acceptedReversals = 0
        }
    }

    /// The stroke after a good reversal has given the device the impulse that swings it back: the reversal
    /// counts, unless the reading may be the device resting, turned, behind a lagging gravity estimate (then the
    /// stroke is the estimate's lag, not the hand). Out of line: it runs once a reversal.
    @inline(__always)
    private mutating func swingBack(at time: Double, dt: Double) {
        if mayBeTurning(dt: dt) {
            turning = true
            turningReading = lastAcceleration
            return
        }
        pending = false
        goodReversals += 1
        if !closedUpward && !isUpward { levelReversals += 1 }
        mark(.confirmed, at: time)
    }

    /// Whether the reading (``lastAcceleration``) may be the device resting, turned, with the gravity estimate
    /// lagging behind the turn: about one g (`turningLow`, `turningHigh`), not against the estimate
    /// (`turningAgainst`), and, if the previous sample's may have been too, steady since (`turningJerk`). A
    /// first such reading waits for the next sample to tell. Asked only when a stroke has given the impulse that
    /// would swing the device back, so that it costs nothing on other samples.
    private func mayBeTurning(dt: Double) -> Bool {
        let reading = lastAcceleration.lengthSquared
        guard reading > Self.turningLow, reading < Self.turningHigh, lastAcceleration.dot(gravity) > Self.turningAgainst
        else { return false }
        guard turning else { return true }
        let steady = Self.turningJerk * dt
        return (lastAcceleration - turningReading).lengthSquared < steady * steady
    }

    /// Follows the strokes of the hand, and judges each stroke at the reversal that closes it: good (quick, long
    /// enough, with enough impulse, alike its predecessor) or not, and whether it swung the device back.
    @inline(__always)
    private mutating func trackStroke(_ stroke: Vector3, _ strokeSquared: Double, at time: Double, dt: Double) {
        var along = 0.0
        if hasStroke {
            // The impulse of each stroke counts from where the acceleration turned towards it, not from where
            // it crossed the threshold, so that a fast stroke is credited with its whole half-wave.
            along = stroke.dot(strokeDirection)
            if along > 0 {
                strokeImpulse += along * dt
                opposingImpulse = 0
                if pending, strokeImpulse >= pendingImpulse { swingBack(at: time, dt: dt) }
            } else {
                opposingImpulse -= along * dt
            }
        }
        guard strokeSquared > thresholdSquared else {
            if hasStroke, !inShake, time - strokeStart > settings.maxHalfPeriod {
                resetStrokes()
            }
            return
        }
        let length = strokeSquared.squareRoot()
        guard hasStroke else {
            let leaning = lean
            resetStrokes()
            startStroke(stroke, length, at: time)
            leanBeforeStroke = leaning
            busyBeforeStroke = busyBeforeLean
            return
        }
        guard along < -settings.threshold else {
            if along > 0, length > strokePeakLength {
                strokeDirection = stroke * (1 / length)
                strokePeakLength = length
            }
            return
        }
        // The stroke reversed.
        let half = strokeAge(dt)
        guard half <= settings.maxHalfPeriod else {
            // Too slow to be part of the same shake: this stroke starts a new chain.
            resetStrokes()
            startStroke(stroke, length, at: time)
            return
        }
        if pending {
            // The stroke that is ending never swung the device back: its reversal does not count.
            lastRejection = .oneWay
            lastRejectedMargin = Margin(test: .oneWay, value: strokeImpulse, limit: pendingImpulse)
        }
        let isFirst = previousPeakLength == 0
        var rejection: ShakeEvent.Rejection?
        if half <= Self.minHalfPeriod {
            rejection = .ringing
        } else if strokeImpulse < settings.minImpulse {
            rejection = .weak
        } else if !isFirst, !weakStart,
            min(strokePeakLength, previousPeakLength) < settings.symmetry * max(strokePeakLength, previousPeakLength)
        {
            rejection = .lopsided
        } else if !isFirst, previousDirection.dot(strokeDirection) > Self.straightBack {
            rejection = .askew
        }
        // A chain whose first stroke is too weak or too brief to be a shake's: the hand setting off from rest
        // carries about a third of a middle stroke's velocity change, and is over the threshold only near its
        // peak. That stroke does not count, but is not held against the chain either: its reversal is not counted
        // as rejected, and the next stroke is not asked to be alike it in strength (it is still asked to come back
        // along its line).
        let startsWeak = isFirst && (rejection == .weak || rejection == .ringing)
        weakStart = startsWeak
        if let rejection {
            lastRejection = rejection
            lastRejectedMargin = margin(of: rejection, half: half)
            if !startsWeak { rejectedReversals += 1 }
            mark(.rejected(rejection), at: time)
        } else {
            mark(.accepted, at: time)
        }
        let closing = strokeImpulse
        previousDirection = strokeDirection
        closedUpward = isUpward
        let vertical = strokeDirection.dot(gravity)
        let closedDownward = vertical < 0 && vertical * vertical > Self.nearlyLevel * gravity.lengthSquared
        previousPeakLength = strokePeakLength
        halves.add(half)
        startStroke(stroke, length, at: time, impulse: opposingImpulse)
        if rejection == nil {
            acceptedReversals += 1
            if acceptedReversals == 1 {
                firstImpulse = closing
                firstDownward = closedDownward
            } else if acceptedReversals == 2 {
                secondImpulse = closing
            }
            pending = true
            turning = false
            pendingImpulse = max(settings.minImpulse, Self.swingRatio * closing)
            if strokeImpulse >= pendingImpulse { swingBack(at: time, dt: dt) }
        }
    }

    /// The time a sample stands for while strokes are followed: the stream's mean interval, not the time since the
    /// sample before. A sensor without timestamps, or a loaded system, stamps samples when they arrive, late by up
    /// to a few intervals and now and then in a burst microseconds apart; a sample stamped late would weigh as many
    /// samples in a stroke's impulse, the one after it as none, a brisk stroke's first sample stamped early would
    /// make it look slow, and the steadiness of a reading (`turningJerk`) would be judged over a time the device
    /// did not take. The samples keep their order and their number. (The gravity estimate, the lean, the duty and the
    /// wait for calm, sums and averages over a third of a second and more, in which one sample's lateness is taken
    /// back by the next, keep the samples' own times; but in the duty no sample weighs more than
    /// `maxSampleWeight` intervals.) Worked out only while a stroke may be under way.
    @inline(__always)
    private func step(at time: Double) -> Double {
        (time - streamStart) / Double(counters.samples &- streamStartSample)
    }

    /// The time since the current stroke started, counted in samples at the stream's mean interval (`step`, the
    /// `dt` of ``process(_:)``). Samples delivered in bursts (held back, then stamped microseconds apart) keep their
    /// order and their number but not their times: a reversal stamped late would make one half period long and the
    /// next short, and a shake irregular; a stroke's first sample stamped early would make a brisk stroke look slow.
    @inline(__always)
    private func strokeAge(_ step: Double) -> Double {
        Double(counters.samples &- strokeStartSample) * step
    }

    private mutating func mark(_ reversal: Reversal, at time: Double) {
        lastReversal = reversal
        lastReversalTime = time
    }

    private mutating func startStroke(_ stroke: Vector3, _ length: Double, at time: Double, impulse: Double = 0) {
        hasStroke = true
        strokeDirection = stroke * (1 / length)
        strokePeakLength = length
        strokeStart = time
        strokeStartSample = counters.samples
        strokeImpulse = impulse
        opposingImpulse = 0
    }

    /// Ends the shake in progress without a shake; nothing is reported if its `began` was not.
    private mutating func cancel(
        at time: Double, reason: ShakeEvent.CancelReason, detail: ShakeEvent.Rejection? = nil, then next: Mode
    ) -> ShakeEvent? {
        if case .shaking(let began) = mode {
            // Not a shake, whatever the reason (`retryTime`).
            lastNotAShake = time
            if reason == .tooLong {
                decide(
                    at: time, isShake: false,
                    failed: Margin(test: .tooLong, value: lastMotion - began, limit: settings.tooLong, atLeast: false))
            } else if detail == .carried {
                decide(
                    at: time, isShake: false,
                    failed: Margin(
                        test: .carried, value: time - strokeStart, limit: settings.maxHalfPeriod + Self.strokeGrace,
                        atLeast: false))
            }
        }
        mode = next
        resetStrokes()
        guard isReported else { return nil }
        counters.cancelled += 1
        return .cancelled(time: time, began: reportedBegan, reason: reason, detail: detail)
    }

    /// Why the shake that just went quiet is not one, or nil if it is; with `ending` false, while it goes on (the
    /// back-swing test is not asked then).
    private func rejection(at time: Double, ending: Bool = true) -> ShakeEvent.Rejection? {
        // A hand holding the device never lets it fall freely: a trip or a slip that ends in a fall, a drop.
        if fell { return .freeFall }
        if goodReversals < settings.reversals {
            // A last stroke that never swung back is the most recent failure.
            return pending ? .oneWay : lastRejection ?? .tooFewReversals
        }
        // One back-and-forth that goes one way slowly and the other fast: a back-swing, a move and its stop.
        if ending, goodReversals == 2, !firstDownward, firstImpulse < Self.backSwing * (secondImpulse - firstImpulse) {
            return .displaced
        }
        // A shake's half-cycles are alike: most of its reversals pass. Steps and stumbles mix counted reversals
        // with as many rejected ones.
        if rejectedReversals >= goodReversals { return lastRejection ?? .irregular }
        if duty(at: time) < settings.minDuty { return .lowDuty }
        if halves.irregularity > settings.maxIrregularity { return .irregular }
        return nil
    }

    /// The share of the shake's time that the motion was strong. The quiet time that ended the shake is not part
    /// of it, nor the hand settling before it.
    private func duty(at time: Double) -> Double {
        let quiet = max(0, time - lastMotion)
        let settling =
            goodReversals > settings.reversals ? min(Self.settleTime, max(0, lastMotion - lastActive)) : 0
        let shakingTime = dutyTime - quiet - settling
        return shakingTime > 0 ? min(1, dutyActive / shakingTime) : 0
    }

    /// How a rejected reversal's stroke measured against the test it failed. Asked only at a rejection.
    private func margin(of rejection: ShakeEvent.Rejection, half: Double) -> Margin? {
        switch rejection {
        case .ringing: return Margin(test: .ringing, value: half, limit: Self.minHalfPeriod)
        case .weak: return Margin(test: .weak, value: strokeImpulse, limit: settings.minImpulse)
        case .lopsided:
            return Margin(
                test: .lopsided,
                value: min(strokePeakLength, previousPeakLength) / max(strokePeakLength, previousPeakLength),
                limit: settings.symmetry)
        case .askew:
            return Margin(test: .askew, value: -previousDirection.dot(strokeDirection), limit: -Self.straightBack)
        default: return nil
        }
    }

    /// Records how the motion that is ending was decided (``lastDecision``): the test that failed, in the order
    /// ``rejection(at:ending:)`` asks them, or for a shake the one it passed by the least. Asked once a motion.
    private mutating func decide(at time: Double, isShake: Bool, failed: Margin? = nil) {
        var decisive = failed
        if decisive == nil {
            var tests = [Margin?](repeating: nil, count: 5)
            tests[0] = Margin(test: .reversals, value: Double(goodReversals), limit: Double(settings.reversals))
            if goodReversals == 2, !firstDownward {
                tests[1] = Margin(
                    test: .displaced, value: firstImpulse, limit: Self.backSwing * (secondImpulse - firstImpulse))
            }
            tests[2] = Margin(test: .balance, value: Double(goodReversals), limit: Double(rejectedReversals + 1))
            tests[3] = Margin(test: .duty, value: duty(at: time), limit: settings.minDuty)
            tests[4] = Margin(
                test: .rhythm, value: halves.irregularity, limit: settings.maxIrregularity, atLeast: false)
            if fell {
                // It read under 0.3 g for at least `freeFallTime` (how much longer is not kept).
                decisive = Margin(test: .freeFall, value: Self.freeFallTime, limit: 0, atLeast: false)
            } else if goodReversals < settings.reversals, pending {
                // Too few reversals: the last stroke never swung back...
                decisive = Margin(test: .oneWay, value: strokeImpulse, limit: pendingImpulse)
            } else if goodReversals < settings.reversals, let lastRejectedMargin {
                // ...or the last reversal rejected decided.
                decisive = lastRejectedMargin
            } else if let first = tests.first(where: { $0.map { !$0.passes } ?? false }) {
                decisive = first
            } else {
                decisive = tests.compactMap { $0 }.min { $0.relative < $1.relative }
            }
        }
        guard let decisive else { return }
        counters.decided += 1
        lastDecision = Decision(
            time: time, reported: isReported, isShake: isShake, decisive: decisive, lastRejected: lastRejectedMargin,
            reversals: goodReversals)
    }

    private mutating func finishShake(at time: Double) -> ShakeEvent? {
        let failed = rejection(at: time)
        decide(at: time, isShake: failed == nil)
        if let rejection = failed {
            return cancel(
                at: time, reason: .notAShake, detail: rejection, then: .refractory(until: time + settings.refractory))
        }
        // Passing every test, the shake reported `began` on an earlier sample at the latest (`process` asks the
        // same question first). Should it not have, `began` now and `ended` with the next sample: never an
        // `ended` without its `began`.
        if !isReported { return report(at: time) }
        let reversals = goodReversals
        mode = .refractory(until: time + settings.refractory)
        resetStrokes()
        counters.ended += 1
        let axis: Axis =
            axisEnergy.x >= axisEnergy.y && axisEnergy.x >= axisEnergy.z
            ? .x
            : axisEnergy.y >= axisEnergy.z ? .y : .z
        return .ended(
            ShakeSummary(
                time: time, began: reportedBegan, peak: shakePeakSquared.squareRoot(), axis: axis,
                reversals: reversals))
    }
}

/// The times between reversals of one chain of strokes, for the rhythm test.
///
/// The first interval is kept apart: a shake often starts with a slower wind-up stroke. It counts only when
/// there are too few others to judge by.
struct HalfPeriodStatistics: Sendable {
    private var first = 0.0
    private var count = 0
    private var sum = 0.0
    private var sumOfSquares = 0.0

    mutating func add(_ half: Double) {
        if count == 0 && first == 0 {
            first = half
            return
        }
        count += 1
        sum += half
        sumOfSquares += half * half
    }

    /// The coefficient of variation (deviation over mean) of the intervals; 0 with fewer than two.
    var irregularity: Double {
        var n = Double(count)
        var total = sum
        var squares = sumOfSquares
        if count < 2, first > 0 {
            n += 1
            total += first
            squares += first * first
        }
        guard n >= 2, total > 0 else { return 0 }
        let mean = total / n
        return (max(0, squares / n - mean * mean)).squareRoot() / mean
    }
}
