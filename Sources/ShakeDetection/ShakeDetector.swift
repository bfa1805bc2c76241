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
    /// A brisk shake of one and a half back-and-forths from rest is four strokes: one from rest, two at the turning
    /// points, one to rest. The first and the last carry about 0.4 of the turning strokes' acceleration (under the
    /// threshold but for the most vigorous) and a third of their impulse, so only the turning strokes are strokes
    /// and one reversal counts. The two are still told from a move and its stop (which are two strong strokes too)
    /// by what the device did at either end: a shake's turning strokes turn the device round, so it was moving
    /// into the first (the acceleration gave it, against the first, at least this share of the first's impulse,
    /// above half the threshold, just before it) and still moving after the second (the acceleration then gave
    /// it, against the second, `swingRatio` of its impulse and `min_impulse`: the stroke to rest). A move starts
    /// from rest and stops at rest: hardly any impulse before its first stroke, and what follows its stop is a
    /// small recoil. A back-swing before a move does give a lead-in, but a smaller one than a shake's stroke from
    /// rest (which carries a third of the turning stroke's impulse, and reads a little less, counted above half
    /// the threshold): a back-swing of 0.45 of the stop reads 0.21 to 0.30 of the move. Asked once, when the motion
    /// has stopped, and only for a chain of one counted reversal; and, for a stroke from rest brisk enough to pass
    /// the threshold, where the stroke after it fails `symmetry` (`setsOff`).
    static let fromRest = 0.3
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
    ///   without leaning first (`maxLean`, `maxLeanAmidMotion`), not after motion mostly along gravity
    ///   (`maxAlongGravity`), not amid hard motion (`maxBusySquared`) and not
    ///   soon after a motion that was not a shake (`retryTime`) nor at a rep's pace (`repPace`);
    /// - or a counted reversal neither of whose strokes points up more steeply than that, in a motion that did not
    ///   set off amid hard motion (`showsHand`).
    /// Any other shake is followed silently (its decisions are the same), and reported once it would pass every
    /// test if it ended now on reversals in one run (`isOneRun`); if it is cancelled before, nothing at all is reported.
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
    /// any other, and reported once it would pass (`showsHand`: nor does a level reversal show a hand then).
    static let maxBusySquared = 9.0 * 9.0
    static let busyTimeConstant = 1.0
    /// ...and, when the device was already moving (that mean square over this, m²/s⁴: 5 m/s² RMS, above every
    /// recorded shake that set off from holding the device), the stroke leant for at most `maxLeanAmidMotion`
    /// seconds, not `maxLean`. A hand's stroke rises from half the threshold to the threshold in well under
    /// 0.1 s (a sine of two back-and-forths a second at the threshold's own height takes 0.08 s; a phone already
    /// being shaken leant 0.07 s); at rest the stroke from rest of a vigorous shake, pointing the other way,
    /// leans too, and the longer bound stays. A rep of lifting with the device in the hand (now and then a pull of
    /// rowing) grows out of the motion before, leaning 0.15 to 0.3 s, and is followed silently like any other
    /// stroke.
    static let movingSquared = 5.0 * 5.0
    static let maxLeanAmidMotion = 0.1
    /// ...and, amid that motion, the motion was not mostly along gravity: of the energy of the samples over half the
    /// threshold while no stroke was under way (the motion between the strokes, followed while the device moves), the
    /// older weighing less
    /// (`alongGravityMemory`), at most this share lay along gravity. Lifting a weight, jumping or running moves the
    /// body, and the device with it, up and down: dev2's lifting reps that reported `began` at once came after
    /// motion with 0.62 to 0.77 of its mean square along gravity. A hand that moves or shakes a device already moving
    /// does so across gravity as readily as along it (a phone already being shaken: 0.35; a motion with no preferred
    /// direction gives a third); rowing, the pull along the floor, 0.27 to 0.41.
    static let maxAlongGravity = 0.5
    /// A gap of this many seconds between two such samples weighs the older ones down by a half (by 1 / (1 + gap / this)
    /// for any gap): a memory of about a second, as the mean square's.
    static let alongGravityMemory = 1.0
    /// ...nor within this many seconds of a motion decided not to be a shake (reported or not). Exercise repeats
    /// its one-way stroke every one to three seconds (a pull of the oars, a lift of the weight), each decided
    /// `too_few_reversals`; a hand that tries again after a motion that was not a shake is reported at its first
    /// counted reversal instead.
    static let retryTime = 2.0
    /// ...nor when the last stroke that did not reverse (a chain with no counted reversal, followed as a possible
    /// shake or not) set off between `2 * maxHalfPeriod` and this many seconds before: a one-way stroke repeated at a
    /// rep's pace. Rowing pulls the handle every 1.6 to 2.8 s, and a pull decided not a shake more than `retryTime`
    /// before the next is still one of them. A hand whose shake strokes one way only (the other way under the
    /// threshold, as a phone shaken gently) strokes again within its own rhythm, `2 * maxHalfPeriod` at the slowest.
    static let repPace = 3.0

    /// A phone held in the hand and shaken gently on and on swings along a line tilted from level, the wrist
    /// turning it as it goes, at 2.4 to 3.8 g at the turning points: the stroke that points partly down loses its
    /// downward part to the free-fall rule, and what is left neither passes the threshold against the stroke
    /// before nor comes back along its line. So the gravity-free acceleration itself is followed as well (the
    /// *sway*), and the shake is taken once it has reversed `swayReversals` times in a row, each at this share of
    /// the threshold against the stroke before and straight back along its line (`straightBack`), each within
    /// `maxHalfPeriod`, closing a stroke alike the one before (`symmetry`) that moved the device (its peak over its
    /// time as a half-sine gives `minImpulse`: a vibration rings fast and moves it little), in a steady rhythm
    /// (`maxIrregularity`)...
    static let swayFraction = 0.75
    static let swayReversals = 4
    /// ...along a line that is not steeper than this (the square of the cosine of its angle to gravity at most
    /// this: within about 53 degrees of level). What the free-fall rule is there for, the body's flight in a
    /// stride, a jump or a stair, and the impact that ends it, is along gravity: running with the device in a hand
    /// swings it along lines 45 to 81 degrees from level (the tenth to the ninetieth percentile of its reversals in
    /// dev2's recordings, four in five steeper than this), a phone shaken gently in the hand across gravity or
    /// aslant (4 to 44 degrees in itt23's)...
    static let swaySteepest = 0.8 * 0.8
    /// ...and while the device read at least half a g (this, squared, in m/s²) all along: a hand holds it. The
    /// flight of a stride or a jumping jack reads under that, however the arm swings the device.
    static let heldSquared = (0.5 * 9.80665) * (0.5 * 9.80665)

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
        let linear = stream.lastAcceleration - gravity
        return Observation(
            linear: linear,
            stroke: Self.limitingFreeFall(linear, gravity: gravity, allowance: settings.freeFallAllowance),
            reversal: lastMark.time == stream.lastTime ? lastMark.reversal : nil)
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
            /// Good reversals in a row of the gravity-free acceleration itself, against 4: a held device swung along
            /// a tilted line (it takes the shake; docs/detection.md, step 5).
            case sway
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

    /// Thresholds worked out once from the settings, so that a sample compares squares and multiplies.
    private struct Derived: Sendable {
        var thresholdSquared = 0.0
        var dutySquared = 0.0
        var inverseGravityTimeConstant = 0.0
        /// The longest a first stroke may take to give the device `beganImpulse` and begin a shake
        /// (`quickStrokeFactor`), and to report it at once (`briskStrokeFactor`), seconds.
        var quickStroke = 0.0
        var briskStroke = 0.0
        /// The sway's threshold (`swayFraction`), m/s², and its square.
        var sway = 0.0
        var swaySquared = 0.0
    }

    /// The stream of samples: whether one is under way, where it started and its last accepted sample.
    private struct Stream: Sendable {
        var isStreaming = false
        var lastTime = 0.0
        var lastAcceleration = Vector3.zero
        /// The stream's first sample: its time, and its number in ``Counters/samples`` (the mean interval, `step`).
        var start = 0.0
        var startSample = 0
    }

    /// The last reversal, for ``lastObservation``, and the time of the sample that made it.
    private struct ReversalMark: Sendable {
        var reversal: Reversal?
        var time = -Double.infinity
    }

    /// The fast average of the raw signal that tells motion from calm, and the last sample that departed from it:
    /// followed only while a shake is in progress or the detector waits for calm.
    private struct MotionWatch: Sendable {
        var fastAverage = Vector3.zero
        var last = 0.0
    }

    /// The stroke under way: its peak, its start and the impulse it has given the device, and whether it must
    /// still swing the device back for the reversal that started it to count.
    private struct Stroke: Sendable {
        var isUnderWay = false
        /// The unit direction of the stroke's peak.
        var direction = Vector3.zero
        var peakLength = 0.0
        var start = 0.0
        /// The stroke's first sample, counted in ``Counters/samples``: see `strokeAge`.
        var startSample = 0
        var impulse = 0.0
        /// Impulse against the stroke since the acceleration last pointed along it: the start of the next stroke,
        /// if it comes.
        var opposingImpulse = 0.0
        /// The most impulse against the stroke that the acceleration gave in one go since the stroke started,
        /// under the threshold or not: the stroke to rest, if the motion ends (`fromRest`).
        var restImpulse = 0.0
        /// Whether the reversal that started the stroke was good and waits for the stroke to swing back.
        var pending = false
        /// The impulse, m/s, the stroke needs for that.
        var pendingImpulse = 0.0
    }

    /// Whether the previous sample's reading may have been the device resting, turned (`mayBeTurning`), and what
    /// it was.
    private struct TurningWatch: Sendable {
        var suspected = false
        var reading = Vector3.zero
    }

    /// The chain of quick reversals the stroke belongs to: the stroke before the current one (for the symmetry,
    /// straight-back and began tests) and the half periods between them (the rhythm).
    private struct Chain: Sendable {
        var halves = HalfPeriodStatistics()
        var previousPeakLength = 0.0
        /// The unit direction of the previous stroke's peak, for `straightBack`.
        var previousDirection = Vector3.zero
        /// Whether the stroke closed by the last good reversal pointed up.
        var closedUpward = false
        /// Whether the reversal that closed the chain's first stroke found it `weak` or `ringing` (see `trackStroke`).
        var weakStart = false
        /// The impulse, m/s, the acceleration gave against the chain's first stroke just before it: the stroke
        /// from rest, if it stayed under the threshold (`fromRest`).
        var leadIn = 0.0
        /// The reversals of this chain that counted (the tally counts the whole shake's): a shake followed silently
        /// is reported once it would pass only if they alone are as many as it needs (`isOneRun`).
        var counted = 0
        /// Whether the chain's first stroke, closed by a good reversal, pointed up (more steeply than `nearlyLevel`)
        /// and the device was already moving into it, held: a lead-in of `fromRest` of its impulse, and no reading
        /// under 0.3 g for `freeFallTime` within `maxHalfPeriod` before it. A hand that shakes a device along
        /// gravity sets off from rest with a stroke of its own (a third of a turning stroke's impulse, under the
        /// threshold), so its first strong stroke turns the device round; a landing or a step from rest comes out
        /// of stillness, and a jump's from a fall that nothing held. Once that stroke's reversal counts, it shows a
        /// hand (`showsHand`) as a level one does: `began` a back-and-forth sooner than once the shake would pass.
        var upFromRest = false
        /// The impulse, m/s, of the chain's first stroke above half the threshold before it crossed it (its own
        /// rise), and, once a good reversal closed that stroke, its whole impulse (that rise and what it gave over
        /// the threshold) until the next reversal (`setsOff`); zero otherwise.
        var rise = 0.0
        var firstStroke = 0.0
        /// Whether the last reversal closed the stroke after a first stroke the hand set off with (`setsOff`): it
        /// counts, but shows no hand (`levelReversals`), since a move's push and its harder stop look the same up
        /// to there.
        var setOff = false
        /// The gravity estimate when the chain's first stroke started, and whether the chain set off from rest: the
        /// device not moving before it, and the reversal that closed its first stroke spared that stroke as too weak
        /// or too brief, or counted it after a lead-in of `fromRest` of its impulse (`stopsWhereItStarted`).
        var gravityBefore = Vector3.zero
        var setOffFromRest = false
    }

    /// The reversals of the shake (or, while armed, of the chain): counted, rejected and how, and the first two
    /// good ones' strokes for the back-swing test. Kept while a shake is in progress across its chains.
    private struct Tally: Sendable {
        var goodReversals = 0
        /// Counted reversals neither of whose strokes pointed up, the swing back along the line of the stroke it
        /// reversed: evidence of a hand, not of the body's jolts. Only whether there is one matters (`showsHand`), so
        /// it is counted up to one.
        var levelReversals = 0
        var rejectedReversals = 0
        var lastRejection: ShakeEvent.Rejection?
        /// How the last rejected reversal failed (for ``lastDecision``; set only at a rejection).
        var lastRejectedMargin: Margin?
        /// Good reversals since the shake's first stroke, and the impulses, m/s, of the strokes the first two closed
        /// (`backSwing`).
        var acceptedReversals = 0
        var firstImpulse = 0.0
        var secondImpulse = 0.0
        /// Whether the first of them pointed down more steeply than `nearlyLevel`: its impulse counts only beyond
        /// free fall, so it reads low, and the back-swing test is not asked.
        var firstDownward = false
    }

    /// The duty: the time since the chain's first stroke, and the part of it that the motion was strong, each
    /// sample weighing at most `maxSampleWeight` mean intervals; and the last strong sample (the settling).
    private struct DutyAccount: Sendable {
        var time = 0.0
        var active = 0.0
        var lastActive = 0.0
    }

    /// How long the gravity-free acceleration has stayed above half the threshold while armed without a stroke,
    /// and how long it had when the first stroke of the chain began (`maxLean`).
    private struct Lean: Sendable {
        var now = 0.0
        var beforeStroke = 0.0
        /// The impulse, m/s, of the excursion above half the threshold under way, and of the one before and when
        /// it ended: the lead-in to a chain's first stroke (`fromRest`).
        var excursion = Vector3.zero
        var lastExcursion = Vector3.zero
        var lastExcursionEnd = -Double.infinity
        /// How long the device has read under 0.3 g in the lean under way, and when it last had for `freeFallTime`
        /// (`upFromRest`).
        var weightless = 0.0
        var fell = -Double.infinity
    }

    /// How busy the device was before a chain's first stroke (`maxBusySquared`), and when a motion was last decided
    /// not to be a shake (`retryTime`).
    private struct Activity: Sendable {
        /// The mean square, m²/s⁴, of the gravity-free acceleration while armed (time constant `busyTimeConstant`),
        /// what it was on the last sample under half the threshold, and what that was when the chain's first stroke
        /// began.
        var meanSquare = 0.0
        var beforeLean = 0.0
        var beforeStroke = 0.0
        var lastNotAShake = -Double.infinity
        /// When the chain in progress set off, and when the last chain with no counted reversal did (`repPace`).
        var chainStart = -Double.infinity
        var lastOneWay = -Double.infinity
        /// The motion between the strokes (`maxAlongGravity`): the sum of the squares, m²/s⁴, of the samples over half
        /// the threshold while armed, no stroke under way and `meanSquare` over `movingSquared`, and of their parts along gravity (times the gravity
        /// estimate's square), each weighed down as it ages; and the time of the last one.
        var strong = 0.0
        var alongGravity = 0.0
        var lastStrong = -Double.infinity
    }

    /// The sway (`swayFraction`): the strokes of the gravity-free acceleration itself, no share of it limited by the
    /// free-fall rule, and the run of good reversals between them. Followed while armed and in a shake; it needs no
    /// reset between shakes, since a stroke left from before can never reverse within `maxHalfPeriod`.
    private struct Sway: Sendable {
        var isUnderWay = false
        /// The unit direction of the stroke's peak, its length (and the stroke before's: `symmetry`) and its first
        /// sample (counted as `strokeAge` counts).
        var direction = Vector3.zero
        var peakLength = 0.0
        var previousPeak = 0.0
        var startSample = 0
        /// When the run's first stroke started, the half periods of its good reversals in a row (their count, and
        /// the rhythm), and the time of the last one.
        var runStart = 0.0
        var halves = Moments()
        var lastReversal = -Double.infinity
        /// The last reading under half a g (`heldSquared`).
        var weightless = -Double.infinity
        /// The longest run the shake in progress has had that took it (0: none).
        var taken = 0
    }

    /// The shake in progress, reported or followed silently: whether and when `began` was reported (until it is,
    /// its `cancelled` is not reported either), and what its `ended` reports.
    private struct Shake: Sendable {
        var isReported = false
        var reportedBegan = 0.0
        var peakSquared = 0.0
        var axisEnergy = Vector3.zero
    }

    /// Since when the device has read nearly nothing (the last sample that read more), and whether it has for
    /// `freeFallTime` since the shake began.
    private struct FreeFallWatch: Sendable {
        var since = 0.0
        var fell = false
    }

    private var derived = Derived()
    private var stream = Stream()
    private var lastMark = ReversalMark()
    /// The gravity estimate: an exponential average of the raw vector (`gravityTimeConstant`).
    private var gravity = Vector3.zero
    private var motion = MotionWatch()
    private var current = Stroke()
    private var turning = TurningWatch()
    private var chain = Chain()
    private var tally = Tally()
    private var account = DutyAccount()
    private var lean = Lean()
    private var activity = Activity()
    /// Armed, in a shake, refractory or waiting for calm.
    private var mode = Mode.armed
    private var shake = Shake()
    private var freeFall = FreeFallWatch()
    private var sway = Sway()
    /// What the square of an armed sample's gravity-free acceleration must exceed for more than the lean's end to be
    /// asked of it: half the threshold's square (`dutySquared`, under the sway's and the stroke's thresholds) while
    /// neither a stroke nor a stroke of the sway is under way, -1 (every sample) while one is (`updateQuiet`).
    private var quietSquared = 0.0

    /// Creates a detector.
    /// - Precondition: the settings are valid (see ``DetectorSettings/validate()``).
    public init(settings: DetectorSettings = DetectorSettings()) {
        self.settings = settings
        applyDerivedSettings()
    }

    /// Whether a shake has begun and not yet ended or been cancelled.
    public var isShaking: Bool { inShake && shake.isReported }

    /// Whether a hand may be at work: a stroke is under way, or a shake is in progress (reported or not). The
    /// capture reads its sensor in short steps then, so that the decisions to come (`ended`, a `began` at a
    /// reversal) are not held back by a long read.
    public var isMotionUnderWay: Bool { inShake || current.isUnderWay }

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
        derived.thresholdSquared = settings.threshold * settings.threshold
        let duty = settings.threshold * Self.dutyFraction
        derived.dutySquared = duty * duty
        derived.inverseGravityTimeConstant = 1 / settings.gravityTimeConstant
        derived.quickStroke = Self.quickStrokeFactor * settings.beganImpulse / settings.threshold
        derived.briskStroke = Self.briskStrokeFactor * settings.beganImpulse / settings.threshold
        derived.sway = Self.swayFraction * settings.threshold
        derived.swaySquared = derived.sway * derived.sway
        updateQuiet()
    }

    /// Keeps `quietSquared` true to the strokes under way: asked wherever a stroke or a stroke of the sway starts or
    /// ends.
    private mutating func updateQuiet() {
        quietSquared = current.isUnderWay || sway.isUnderWay ? -1 : derived.dutySquared
    }

    /// Feeds one sample.
    /// - Returns: the event this sample decided, if any. At most one event comes from one sample.
    public mutating func process(_ sample: Sample) -> ShakeEvent? {
        guard sample.isUsable else {
            counters.invalid += 1
            return nil
        }
        counters.samples &+= 1
        guard stream.isStreaming else {
            startStream(with: sample)
            return nil
        }
        let time = sample.time
        let gap = time - stream.lastTime
        if gap < 0 || gap > settings.maxGap {
            counters.discontinuities += 1
            let event = interrupt()
            startStream(with: sample)
            return event
        }
        stream.lastTime = time

        let acceleration = sample.acceleration
        gravity = gravity + (acceleration - gravity) * min(1, gap * derived.inverseGravityTimeConstant)
        stream.lastAcceleration = acceleration
        let linear = acceleration - gravity

        switch mode {
        case .armed:
            activity.meanSquare +=
                (linear.lengthSquared - activity.meanSquare) * min(1, gap * (1 / Self.busyTimeConstant))
            // The common case, at rest or walking: nothing under way, and nothing over half the threshold.
            guard linear.lengthSquared > quietSquared else {
                endLean(at: time)
                return nil
            }
            // No stroke under way, and nothing strong enough to start one (limiting free fall never lengthens the
            // vector): only the lean and the sway follow the sample.
            guard current.isUnderWay || linear.lengthSquared > derived.thresholdSquared else {
                // How long the device has leant (see `maxLean`).
                if linear.lengthSquared > derived.dutySquared {
                    // An excursion ends where the acceleration turns round, whether or not it dips under half the
                    // threshold between two samples.
                    if linear.dot(lean.excursion) < 0 { endExcursion(at: time) }
                    lean.now += gap
                    lean.excursion = lean.excursion + linear * gap
                    // Whether anything held the device (`upFromRest`): only a sample that leans can read this little.
                    if acceleration.lengthSquared < Self.freeFallSquared {
                        lean.weightless += gap
                        if lean.weightless >= Self.freeFallTime { lean.fell = time }
                    } else {
                        lean.weightless = 0
                    }
                    if activity.meanSquare > Self.movingSquared { followAlongGravity(linear, at: time) }
                } else {
                    endLean(at: time)
                }
                guard sway.isUnderWay || linear.lengthSquared > derived.swaySquared else { return nil }
                return swayWhileArmed(linear, acceleration, at: time)
            }
            // The sway is asked only past its threshold or with a stroke of it under way; otherwise only the reading
            // it watches (`heldSquared`) is kept, as it would keep it.
            if sway.isUnderWay || linear.lengthSquared > derived.swaySquared {
                if let event = swayWhileArmed(linear, acceleration, at: time) { return event }
            } else {
                keepWeightless(acceleration, at: time)
            }
            let dt = step(at: time)
            let stroke = Self.limitingFreeFall(linear, gravity: gravity, allowance: settings.freeFallAllowance)
            let strokeSquared = stroke.lengthSquared
            if current.isUnderWay { accountDuty(strokeSquared, at: time, gap: gap, step: dt) }
            trackStroke(stroke, strokeSquared, at: time, dt: dt)
            // `began` needs the first evidence of a shake: a good reversal whose next stroke swings the device
            // back, or a brisk first stroke across gravity. A bump, a step or a landing acts along gravity and
            // does not swing back.
            guard
                tally.goodReversals > 0
                    || (current.isUnderWay && current.impulse >= settings.beganImpulse
                        && strokeAge(dt) <= derived.quickStroke && isAcrossGravity)
            else { return nil }
            startShake(at: time, acceleration: acceleration, linear: linear)
            guard
                showsHand
                    || (tally.goodReversals == 0 && strokeAge(dt) <= max(derived.briskStroke, 3 * dt) && isNearlyLevel
                        && lean.beforeStroke <= Self.maxLean && activity.beforeStroke <= Self.maxBusySquared
                        && (activity.beforeStroke <= Self.movingSquared
                            || (lean.beforeStroke <= Self.maxLeanAmidMotion && !isMostlyAlongGravity))
                        && time - activity.lastNotAShake > Self.retryTime
                        && !isAtRepPace(at: time))
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
            // Comparisons, not `max`, which would blend the two with masks on every sample (the same value: neither
            // is ever a NaN or a negative zero).
            if linearSquared > shake.peakSquared { shake.peakSquared = linearSquared }
            if strokeSquared > derived.dutySquared {
                shake.axisEnergy =
                    shake.axisEnergy + Vector3(x: linear.x * linear.x, y: linear.y * linear.y, z: linear.z * linear.z)
                freeFall.since = time
            } else if acceleration.lengthSquared < Self.freeFallSquared {
                // Falling freely adds nothing to a stroke (the free-fall rule): only a weak sample can be one.
                if time - freeFall.since >= Self.freeFallTime { freeFall.fell = true }
            } else {
                freeFall.since = time
            }
            if !shake.isReported || tally.goodReversals < settings.reversals,
                sway.isUnderWay || linear.lengthSquared > derived.swaySquared,
                followSway(linear, acceleration, at: time)
            {
                sway.taken = max(sway.taken, sway.halves.count)
                if !shake.isReported { return report(at: time) }
            }
            if !shake.isReported,
                showsHand
                    || (tally.goodReversals >= settings.reversals && isOneRun
                        && rejection(at: time, ending: false) == nil)
            {
                // A shake followed silently reports `began` once a hand shows, or once it would be a shake if it
                // ended now (but for the back-swing test, which only a motion that stops is asked: a shake's
                // `began` is not put off for it).
                return report(at: time)
            }
            if motion.last - began > settings.tooLong {
                return cancel(at: time, reason: .tooLong, then: .calming)
            }
            if time - motion.last >= settings.quietTime {
                return finishShake(at: time)
            }
            if current.isUnderWay, time - current.start > settings.maxHalfPeriod + Self.strokeGrace,
                sway.taken == 0 || time - sway.lastReversal > settings.maxHalfPeriod + Self.strokeGrace
            {
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
            if time - motion.last >= settings.calmTime {
                mode = .armed
                resetStrokes()
            }
            return nil
        }
    }

    /// A shake starts (reported or not): motion is followed only from here on (`followMotion`): the fast average
    /// starts from this reading, and the stroke is motion.
    private mutating func startShake(at time: Double, acceleration: Vector3, linear: Vector3) {
        mode = .shaking(began: time)
        motion.fastAverage = acceleration
        motion.last = time
        freeFall.fell = false
        freeFall.since = time
        shake.peakSquared = linear.lengthSquared
        shake.axisEnergy = .zero
        shake.isReported = false
        sway.taken = 0
    }

    /// Follows the sway while armed: a held device swung to and fro along a tilted line is a shake, whatever the
    /// strokes made of it. Out of line, so that the samples that do not ask it keep their registers.
    @inline(never)
    private mutating func swayWhileArmed(_ linear: Vector3, _ acceleration: Vector3, at time: Double) -> ShakeEvent? {
        guard followSway(linear, acceleration, at: time) else { return nil }
        startShake(at: time, acceleration: acceleration, linear: linear)
        sway.taken = sway.halves.count
        return report(at: time)
    }

    /// Follows the sway (`swayFraction`) and says whether this sample completed the run that takes a shake. Asked on
    /// a sample past the sway's threshold or while a stroke of it is under way, so that a device at rest costs it
    /// nothing (`quietSquared`); a run is made of strokes under way one after the other, so that every reading of it
    /// is seen.
    @inline(never)
    private mutating func followSway(_ linear: Vector3, _ acceleration: Vector3, at time: Double) -> Bool {
        keepWeightless(acceleration, at: time)
        let lengthSquared = linear.lengthSquared
        guard sway.isUnderWay else {
            guard lengthSquared > derived.swaySquared else { return false }
            sway.isUnderWay = true
            updateQuiet()
            sway.peakLength = 0
            startSwayStroke(linear, lengthSquared.squareRoot(), at: time)
            sway.runStart = time
            sway.halves = Moments()
            return false
        }
        let along = linear.dot(sway.direction)
        guard lengthSquared > derived.swaySquared, along < -derived.sway else {
            if along > 0, lengthSquared > sway.peakLength * sway.peakLength {
                sway.peakLength = lengthSquared.squareRoot()
                sway.direction = linear * (1 / sway.peakLength)
            } else if lengthSquared <= derived.swaySquared,
                Double(counters.samples &- sway.startSample) * step(at: time) > settings.maxHalfPeriod
            {
                sway.isUnderWay = false
                updateQuiet()
            }
            return false
        }
        let age = Double(counters.samples &- sway.startSample) * step(at: time)
        // The sway reversed: a good reversal comes quick, straight back, along a line not steeper than
        // `swaySteepest`.
        let length = lengthSquared.squareRoot()
        let direction = linear * (1 / length)
        let line = sway.direction - direction
        let vertical = line.dot(gravity)
        if age > Self.minHalfPeriod, age <= settings.maxHalfPeriod,
            sway.peakLength * age * (2 / Double.pi) >= settings.minImpulse,
            sway.direction.dot(direction) <= Self.straightBack,
            min(sway.peakLength, sway.previousPeak) >= settings.symmetry * max(sway.peakLength, sway.previousPeak)
                || sway.previousPeak == 0,
            vertical * vertical <= Self.swaySteepest * line.lengthSquared * gravity.lengthSquared
        {
            sway.halves.add(age)
            sway.lastReversal = time
        } else {
            sway.runStart = time
            sway.halves = Moments()
        }
        startSwayStroke(linear, length, at: time)
        guard sway.halves.count >= Self.swayReversals, sway.weightless < sway.runStart else { return false }
        return sway.halves.deviation <= settings.maxIrregularity * sway.halves.mean
    }

    /// Keeps the last reading under half a g (`heldSquared`): a run of the sway that started before it is not taken.
    @inline(__always)
    private mutating func keepWeightless(_ acceleration: Vector3, at time: Double) {
        if acceleration.lengthSquared < Self.heldSquared { sway.weightless = time }
    }

    private mutating func startSwayStroke(_ linear: Vector3, _ length: Double, at time: Double) {
        sway.previousPeak = sway.peakLength
        sway.direction = linear * (1 / length)
        sway.peakLength = length
        sway.startSample = counters.samples
    }

    /// Follows the fast average of the raw signal, and when it last departed from it (motion, as opposed to
    /// calm): only while a shake is in progress or the detector waits for calm, the only times it is asked.
    @inline(__always)
    private mutating func followMotion(_ acceleration: Vector3, at time: Double, dt: Double) {
        motion.fastAverage =
            motion.fastAverage + (acceleration - motion.fastAverage) * min(1, dt * (1 / Self.motionTimeConstant))
        if (acceleration - motion.fastAverage).lengthSquared > Self.motionThreshold * Self.motionThreshold {
            motion.last = time
        }
    }

    /// The duty: the time since the chain's first stroke, and the part of it that the motion was strong. A sample
    /// weighs the time since the one before (a sensor that samples unevenly stamps each sample when it took it),
    /// but no more than `maxSampleWeight` mean intervals: a sample held back and then delivered in a burst, stamped
    /// when it arrived, does not weigh all the time it waited.
    @inline(__always)
    private mutating func accountDuty(_ strokeSquared: Double, at time: Double, gap: Double, step: Double) {
        let weight = min(gap, Self.maxSampleWeight * step)
        account.time += weight
        if strokeSquared > derived.dutySquared {
            account.active += weight
            account.lastActive = time
        }
    }

    /// A sample under half the threshold while armed without a stroke: the device no longer leans.
    @inline(__always)
    private mutating func endLean(at time: Double) {
        activity.beforeLean = activity.meanSquare
        // A sum of intervals, never negative nor a negative zero: over 0 exactly when its bits are not all 0, which
        // is one integer test instead of a floating-point one against a zero made first.
        if lean.now.bitPattern != 0 {
            lean.now = 0
            lean.weightless = 0
            endExcursion(at: time)
        }
    }

    /// The excursion above half the threshold under way is over: it may be the lead-in to a stroke.
    private mutating func endExcursion(at time: Double) {
        lean.lastExcursion = lean.excursion
        lean.lastExcursionEnd = time
        lean.excursion = .zero
    }

    /// Adds a sample over half the threshold, while armed, no stroke under way and the device moving (the mean square
    /// over `movingSquared`, the only time the share is asked), to the motion between the strokes (`maxAlongGravity`),
    /// the older samples weighed down by 1 / (1 + gap / `alongGravityMemory`). Asked only on such samples, so that a
    /// device at rest, or walking, costs nothing.
    private mutating func followAlongGravity(_ linear: Vector3, at time: Double) {
        let fading = 1 / (1 + (time - activity.lastStrong) * (1 / Self.alongGravityMemory))
        let along = linear.dot(gravity)
        activity.strong = activity.strong * fading + linear.lengthSquared
        activity.alongGravity = activity.alongGravity * fading + along * along
        activity.lastStrong = time
    }

    /// Whether the motion between the strokes before this one lay mostly along gravity (`maxAlongGravity`): the
    /// body's own up and down.
    private var isMostlyAlongGravity: Bool {
        activity.alongGravity > Self.maxAlongGravity * activity.strong * gravity.lengthSquared
    }

    /// Whether a chain's first stroke repeats a one-way stroke at a rep's pace (`repPace`): the last chain with no
    /// counted reversal set off more than a hand's slowest rhythm and at most `repPace` before.
    private func isAtRepPace(at time: Double) -> Bool {
        let since = time - activity.lastOneWay
        return since > 2 * settings.maxHalfPeriod && since <= Self.repPace
    }

    /// Reports `began` for the shake in progress.
    private mutating func report(at time: Double) -> ShakeEvent {
        shake.isReported = true
        shake.reportedBegan = time
        counters.began += 1
        return .began(time: time)
    }

    /// Whether a counted level reversal, or a counted reversal of a chain whose first stroke pointed up out of a
    /// stroke from rest (`upFromRest`), shows a hand (`began` at once): only if the chain did not set off amid hard
    /// motion (`maxBusySquared`). Jumping jacks or lifting with the device in the hand swing it back and forth at
    /// 9 m/s² RMS and more between their strokes, and one level reversal is one more of them; a shake from such
    /// motion is reported once it would pass if it ended now.
    private var showsHand: Bool {
        (tally.levelReversals > 0 || (chain.upFromRest && chain.counted > 0))
            && activity.beforeStroke <= Self.maxBusySquared
    }

    /// Whether the reversals a shake needs came in one run, each stroke within `maxHalfPeriod` of the one before (the
    /// chain in progress counted them all). A hand's shake is such a run. The body's rhythm with the device in the hand
    /// or a pocket gives one back-and-forth a rep (a jump, a stride, a lift) and the next a second or more later, in a
    /// chain of its own; a shake is still decided on all its reversals, and one of such reps, should it pass, is
    /// reported when it ends.
    private var isOneRun: Bool { chain.counted >= settings.reversals }

    /// Whether the current stroke points off the line of the stroke before it, past `straightBack`: a hand swings a
    /// device back along its line (the askew test at a reversal; and no sign of a hand in a swing back, `swingBack`).
    private var isOffTheLine: Bool { chain.previousDirection.dot(current.direction) > Self.straightBack }

    /// Whether the current stroke points up, as the body's jolts do, more steeply than `nearlyLevel`.
    private var isUpward: Bool {
        let along = current.direction.dot(gravity)
        return along > 0 && along * along > Self.nearlyLevel * gravity.lengthSquared
    }

    /// Whether the current stroke points down, or is nearly level (`nearlyLevel`).
    private var isNearlyLevel: Bool {
        let along = current.direction.dot(gravity)
        return along < 0 || along * along <= Self.nearlyLevel * gravity.lengthSquared
    }

    /// Whether the current stroke points down, or across gravity rather than along it: not a jolt of the body.
    private var isAcrossGravity: Bool {
        let along = current.direction.dot(gravity)
        return along < 0 || along * along <= Self.acrossGravity * gravity.lengthSquared
    }

    /// Reports the end of the stream (a gap, the source closing, shutdown).
    ///
    /// - Returns: `cancelled` with reason `interrupted` if a shake was in progress. The next sample starts a new
    ///   stream: gravity is estimated afresh.
    public mutating func interrupt() -> ShakeEvent? {
        defer {
            stream.isStreaming = false
            mode = .armed
            resetStrokes()
        }
        guard case .shaking = mode, shake.isReported else { return nil }
        counters.cancelled += 1
        return .cancelled(
            time: max(stream.lastTime, shake.reportedBegan), began: shake.reportedBegan, reason: .interrupted)
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
        stream.isStreaming = true
        stream.lastTime = sample.time
        stream.start = sample.time
        stream.startSample = counters.samples
        gravity = sample.acceleration
        activity = Activity()
        sway = Sway()
        motion.fastAverage = sample.acceleration
        stream.lastAcceleration = sample.acceleration
        motion.last = sample.time
        // The gravity estimate settles first.
        mode = .refractory(until: sample.time + settings.gravityTimeConstant)
        resetStrokes()
    }

    /// Forgets the strokes: the next one starts a new chain (and, unless a shake is in progress, a new count of
    /// reversals).
    private mutating func resetStrokes() {
        if chain.counted == 0 { activity.lastOneWay = max(activity.lastOneWay, activity.chainStart) }
        activity.chainStart = -Double.infinity
        current.isUnderWay = false
        updateQuiet()
        lean.now = 0
        lean.excursion = .zero
        lean.lastExcursion = .zero
        chain.previousPeakLength = 0
        chain.halves = HalfPeriodStatistics()
        chain.counted = 0
        chain.upFromRest = false
        account.time = 0
        account.active = 0
        current.pending = false
        if !inShake {
            tally.goodReversals = 0
            tally.levelReversals = 0
            tally.rejectedReversals = 0
            tally.lastRejection = nil
            tally.lastRejectedMargin = nil
            tally.acceptedReversals = 0
        }
    }

    /// The stroke after a good reversal has given the device the impulse that swings it back: the reversal
    /// counts, unless the reading may be the device resting, turned, behind a lagging gravity estimate (then the
    /// stroke is the estimate's lag, not the hand). Out of line: it runs once a reversal.
    @inline(never)
    private mutating func swingBack(at time: Double, dt: Double) {
        if mayBeTurning(dt: dt) {
            turning.suspected = true
            turning.reading = stream.lastAcceleration
            return
        }
        current.pending = false
        tally.goodReversals += 1
        chain.counted += 1
        // Whether the reversal shows a hand (`showsHand`), asked until one has: a level reversal, or one of a chain
        // set off upward from rest (`upFromRest`), when the stroke swung the device back along the line of the
        // stroke it reverses. A swing back off that line (`isOffTheLine`: the body turning on a stair, an arm's
        // throw or a fall) is a reversal, but a hand swings a device back along its line.
        if tally.levelReversals == 0 {
            let level = !chain.closedUpward && !chain.setOff && !isUpward
            if level || chain.upFromRest {
                if isOffTheLine {
                    chain.upFromRest = false
                } else if level {
                    tally.levelReversals = 1
                }
            }
        }
        mark(.confirmed, at: time)
    }

    /// Whether the reading (the stream's last acceleration) may be the device resting, turned, with the gravity estimate
    /// lagging behind the turn: about one g (`turningLow`, `turningHigh`), not against the estimate
    /// (`turningAgainst`), and, if the previous sample's may have been too, steady since (`turningJerk`). A
    /// first such reading waits for the next sample to tell. Asked only when a stroke has given the impulse that
    /// would swing the device back, so that it costs nothing on other samples.
    private func mayBeTurning(dt: Double) -> Bool {
        let reading = stream.lastAcceleration.lengthSquared
        guard reading > Self.turningLow, reading < Self.turningHigh,
            stream.lastAcceleration.dot(gravity) > Self.turningAgainst
        else { return false }
        guard turning.suspected else { return true }
        let steady = Self.turningJerk * dt
        return (stream.lastAcceleration - turning.reading).lengthSquared < steady * steady
    }

    /// Follows the strokes of the hand, and judges each stroke at the reversal that closes it: good (quick, long
    /// enough, with enough impulse, alike its predecessor) or not, and whether it swung the device back.
    @inline(__always)
    private mutating func trackStroke(_ stroke: Vector3, _ strokeSquared: Double, at time: Double, dt: Double) {
        var along = 0.0
        if current.isUnderWay {
            // The impulse of each stroke counts from where the acceleration turned towards it, not from where
            // it crossed the threshold, so that a fast stroke is credited with its whole half-wave.
            along = stroke.dot(current.direction)
            if along > 0 {
                current.impulse += along * dt
                current.opposingImpulse = 0
                if current.pending, current.impulse >= current.pendingImpulse { swingBack(at: time, dt: dt) }
            } else {
                current.opposingImpulse -= along * dt
                if current.opposingImpulse > current.restImpulse { current.restImpulse = current.opposingImpulse }
            }
        }
        guard strokeSquared > derived.thresholdSquared else {
            if current.isUnderWay, !inShake, time - current.start > settings.maxHalfPeriod {
                resetStrokes()
            }
            return
        }
        let length = strokeSquared.squareRoot()
        guard current.isUnderWay else {
            startChain(stroke, length, at: time)
            return
        }
        guard along < -settings.threshold else {
            if along > 0, length > current.peakLength {
                current.direction = stroke * (1 / length)
                current.peakLength = length
            }
            return
        }
        reverse(stroke, length, at: time, dt: dt)
    }

    /// A stroke starts a chain: the first strong stroke since the strokes were forgotten. Out of line, as `reverse`.
    @inline(never)
    private mutating func startChain(_ stroke: Vector3, _ length: Double, at time: Double) {
        let leaning = lean.now
        // The lead-in: the excursion before this one (this one is the stroke's own rise), or this one if the
        // acceleration turned round between two samples without dipping under half the threshold.
        let before = time - lean.lastExcursionEnd <= settings.maxHalfPeriod ? lean.lastExcursion : .zero
        let rising = lean.excursion
        resetStrokes()
        startStroke(stroke, length, at: time)
        activity.chainStart = time
        lean.beforeStroke = leaning
        activity.beforeStroke = activity.beforeLean
        chain.leadIn = max(0, -before.dot(current.direction), -rising.dot(current.direction))
        chain.rise = max(0, rising.dot(current.direction))
        chain.gravityBefore = gravity
        chain.setOffFromRest = false
    }

    /// The stroke reversed: judges the stroke it closes (see `trackStroke`). Out of line: it runs once a reversal.
    @inline(never)
    private mutating func reverse(_ stroke: Vector3, _ length: Double, at time: Double, dt: Double) {
        let half = strokeAge(dt)
        guard half <= settings.maxHalfPeriod else {
            // Too slow to be part of the same shake: this stroke starts a new chain.
            resetStrokes()
            startStroke(stroke, length, at: time)
            chain.rise = 0
            return
        }
        if current.pending {
            // The stroke that is ending never swung the device back: its reversal does not count.
            tally.lastRejection = .oneWay
            tally.lastRejectedMargin = Margin(test: .oneWay, value: current.impulse, limit: current.pendingImpulse)
        }
        let isFirst = chain.previousPeakLength == 0
        var rejection: ShakeEvent.Rejection?
        var setOff = false
        if half <= Self.minHalfPeriod {
            rejection = .ringing
        } else if current.impulse < settings.minImpulse {
            rejection = .weak
        } else if !isFirst, !chain.weakStart,
            min(current.peakLength, chain.previousPeakLength) < settings.symmetry
                * max(current.peakLength, chain.previousPeakLength)
        {
            setOff = setsOff
            if !setOff { rejection = .lopsided }
        }
        if rejection == nil, !isFirst, isOffTheLine {
            rejection = .askew
        }
        if setOff, rejection == nil {
            // The chain's first stroke was the hand setting off (`setsOff`): its reversal no longer counts, and this
            // stroke is the shake's first, as after a weak start.
            tally.goodReversals -= 1
            tally.acceptedReversals -= 1
            chain.counted -= 1
        }
        chain.firstStroke = 0
        chain.setOff = setOff && rejection == nil
        // A chain whose first stroke is too weak or too brief to be a shake's: the hand setting off from rest
        // carries about a third of a middle stroke's velocity change, and is over the threshold only near its
        // peak. That stroke does not count, but is not held against the chain either: its reversal is not counted
        // as rejected, and the next stroke is not asked to be alike it in strength (it is still asked to come back
        // along its line).
        let startsWeak = isFirst && (rejection == .weak || rejection == .ringing)
        chain.weakStart = startsWeak
        if isFirst {
            chain.setOffFromRest =
                (startsWeak || (rejection == nil && chain.leadIn >= Self.fromRest * current.impulse))
                && activity.beforeStroke <= Self.movingSquared
        }
        if let rejection {
            tally.lastRejection = rejection
            tally.lastRejectedMargin = margin(of: rejection, half: half)
            if !startsWeak { tally.rejectedReversals += 1 }
            mark(.rejected(rejection), at: time)
        } else {
            mark(.accepted, at: time)
        }
        let closing = current.impulse
        chain.previousDirection = current.direction
        chain.closedUpward = isUpward
        if isFirst, rejection == nil, chain.closedUpward, !chain.weakStart {
            chain.upFromRest =
                chain.leadIn >= Self.fromRest * current.impulse && current.start - lean.fell > settings.maxHalfPeriod
        }
        let vertical = current.direction.dot(gravity)
        let closedDownward = vertical < 0 && vertical * vertical > Self.nearlyLevel * gravity.lengthSquared
        chain.previousPeakLength = current.peakLength
        chain.halves.add(half)
        startStroke(stroke, length, at: time, impulse: current.opposingImpulse)
        if rejection == nil {
            tally.acceptedReversals += 1
            if isFirst { chain.firstStroke = chain.rise + closing }
            if tally.acceptedReversals == 1 {
                tally.firstImpulse = closing
                tally.firstDownward = closedDownward
            } else if tally.acceptedReversals == 2 {
                tally.secondImpulse = closing
            }
            current.pending = true
            turning.suspected = false
            current.pendingImpulse = max(settings.minImpulse, Self.swingRatio * closing)
            if current.impulse >= current.pendingImpulse { swingBack(at: time, dt: dt) }
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
        (time - stream.start) / Double(counters.samples &- stream.startSample)
    }

    /// The time since the current stroke started, counted in samples at the stream's mean interval (`step`, the
    /// `dt` of ``process(_:)``). Samples delivered in bursts (held back, then stamped microseconds apart) keep their
    /// order and their number but not their times: a reversal stamped late would make one half period long and the
    /// next short, and a shake irregular; a stroke's first sample stamped early would make a brisk stroke look slow.
    @inline(__always)
    private func strokeAge(_ step: Double) -> Double {
        Double(counters.samples &- current.startSample) * step
    }

    private mutating func mark(_ reversal: Reversal, at time: Double) {
        lastMark.reversal = reversal
        lastMark.time = time
    }

    private mutating func startStroke(_ stroke: Vector3, _ length: Double, at time: Double, impulse: Double = 0) {
        current.isUnderWay = true
        updateQuiet()
        current.direction = stroke * (1 / length)
        current.peakLength = length
        current.start = time
        current.startSample = counters.samples
        current.impulse = impulse
        current.opposingImpulse = 0
        current.restImpulse = 0
    }

    /// Ends the shake in progress without a shake; nothing is reported if its `began` was not.
    private mutating func cancel(
        at time: Double, reason: ShakeEvent.CancelReason, detail: ShakeEvent.Rejection? = nil, then next: Mode
    ) -> ShakeEvent? {
        if case .shaking(let began) = mode {
            // Not a shake, whatever the reason (`retryTime`).
            activity.lastNotAShake = time
            if reason == .tooLong {
                decide(
                    at: time, isShake: false,
                    failed: Margin(test: .tooLong, value: motion.last - began, limit: settings.tooLong, atLeast: false))
            } else if detail == .carried {
                decide(
                    at: time, isShake: false,
                    failed: Margin(
                        test: .carried, value: time - current.start, limit: settings.maxHalfPeriod + Self.strokeGrace,
                        atLeast: false))
            }
        }
        mode = next
        resetStrokes()
        guard shake.isReported else { return nil }
        counters.cancelled += 1
        return .cancelled(time: time, began: shake.reportedBegan, reason: reason, detail: detail)
    }

    /// Whether the stroke closing now, the chain's second, is stronger than its first by more than `symmetry` because
    /// the first was the hand setting off from rest: a stroke from rest carries about 0.4 of a turning point's
    /// acceleration, and a brisk one passes the threshold and counts. The first closed the shake's first counted
    /// reversal, and gave the device at least `fromRest` of this stroke's impulse (its rise above half the threshold
    /// counted; the bound of the stroke from rest that stays under it): the device was set moving into this stroke. A
    /// back-swing before a move gives it less, and stays `lopsided`. Then the first stroke is spared, as a weak start
    /// is, and its reversal no longer counts: a move's push that its harder stop makes lopsided is only what the stop
    /// undoes, and the move is left its stop and recoil, one reversal, which shows no hand (`Chain.setOff`). Asked
    /// only when the symmetry test fails.
    private var setsOff: Bool {
        chain.firstStroke > 0 && chain.counted == 1 && tally.goodReversals == 1 && tally.acceptedReversals == 1
            && current.peakLength > chain.previousPeakLength && chain.firstStroke >= Self.fromRest * current.impulse
    }

    /// Whether a chain of one counted reversal between its only two strong strokes was a brisk shake of one and a
    /// half back-and-forths from rest to rest (`fromRest`): the device was moving into the first, and the
    /// acceleration after the second gave it the stroke to rest. Asked once, when the motion has stopped.
    private var endsAtRest: Bool {
        current.isUnderWay && !current.pending && tally.goodReversals == 1 && settings.reversals == 2
            && tally.acceptedReversals == 1 && tally.rejectedReversals == 0 && !chain.weakStart
            && chain.leadIn >= Self.fromRest * tally.firstImpulse
            && current.restImpulse >= max(settings.minImpulse, Self.swingRatio * current.impulse)
    }

    /// Whether a chain of one counted reversal that set off from rest (the device not moving before it, its first
    /// stroke spared as too weak or too brief or led into with `fromRest` of its impulse) ended with a stroke to rest
    /// strong enough to pass the threshold, whose reversal still waits to swing the device back: it gave the device
    /// at least `fromRest` of the turning stroke's impulse, as the stroke from rest does (even short of
    /// `min_impulse`), and the device now rests as it rested before the chain: its reading differs from the gravity
    /// estimate of then by less than the threshold. A hand that stops the device where it started brings it back to
    /// rest the way up it was; a device left resting turned reads one g another way (the turn test, `mayBeTurning`,
    /// which holds such a stroke back while the motion goes on). Asked once, when the motion has stopped.
    private var stopsWhereItStarted: Bool {
        current.isUnderWay && current.pending && settings.reversals == 2 && tally.goodReversals == 1
            && chain.counted == 1 && tally.acceptedReversals == 2 && tally.rejectedReversals == 0
            && chain.setOffFromRest
            && current.impulse >= Self.fromRest * tally.secondImpulse
            && (stream.lastAcceleration - chain.gravityBefore).lengthSquared < derived.thresholdSquared
    }

    /// Why the shake that just went quiet is not one, or nil if it is; with `ending` false, while it goes on (the
    /// back-swing test is not asked then).
    private func rejection(at time: Double, ending: Bool = true) -> ShakeEvent.Rejection? {
        // A hand holding the device never lets it fall freely: a trip or a slip that ends in a fall, a drop.
        if freeFall.fell { return .freeFall }
        // A held device swung to and fro along a tilted line (`swayFraction`).
        if sway.taken > 0 { return nil }
        if tally.goodReversals < settings.reversals {
            // A last stroke that never swung back is the most recent failure.
            return current.pending ? .oneWay : tally.lastRejection ?? .tooFewReversals
        }
        // One back-and-forth that goes one way slowly and the other fast: a back-swing, a move and its stop.
        if ending, tally.goodReversals == 2, !tally.firstDownward,
            tally.firstImpulse < Self.backSwing * (tally.secondImpulse - tally.firstImpulse)
        {
            return .displaced
        }
        // A shake's half-cycles are alike: most of its reversals pass. Steps and stumbles mix counted reversals
        // with as many rejected ones.
        if tally.rejectedReversals >= tally.goodReversals { return tally.lastRejection ?? .irregular }
        if duty(at: time) < settings.minDuty { return .lowDuty }
        if chain.halves.irregularity > settings.maxIrregularity { return .irregular }
        return nil
    }

    /// The share of the shake's time that the motion was strong. The quiet time that ended the shake is not part
    /// of it, nor the hand settling before it.
    private func duty(at time: Double) -> Double {
        let quiet = max(0, time - motion.last)
        let settling =
            tally.goodReversals > settings.reversals
            ? min(Self.settleTime, max(0, motion.last - account.lastActive)) : 0
        let shakingTime = account.time - quiet - settling
        return shakingTime > 0 ? min(1, account.active / shakingTime) : 0
    }

    /// How a rejected reversal's stroke measured against the test it failed. Asked only at a rejection.
    private func margin(of rejection: ShakeEvent.Rejection, half: Double) -> Margin? {
        switch rejection {
        case .ringing: return Margin(test: .ringing, value: half, limit: Self.minHalfPeriod)
        case .weak: return Margin(test: .weak, value: current.impulse, limit: settings.minImpulse)
        case .lopsided:
            return Margin(
                test: .lopsided,
                value: min(current.peakLength, chain.previousPeakLength)
                    / max(current.peakLength, chain.previousPeakLength),
                limit: settings.symmetry)
        case .askew:
            return Margin(
                test: .askew, value: -chain.previousDirection.dot(current.direction), limit: -Self.straightBack)
        default: return nil
        }
    }

    /// Records how the motion that is ending was decided (``lastDecision``): the test that failed, in the order
    /// ``rejection(at:ending:)`` asks them, or for a shake the one it passed by the least. Asked once a motion.
    private mutating func decide(at time: Double, isShake: Bool, failed: Margin? = nil) {
        var decisive = failed
        if decisive == nil {
            if freeFall.fell {
                // It read under 0.3 g for at least `freeFallTime` (how much longer is not kept).
                decisive = Margin(test: .freeFall, value: Self.freeFallTime, limit: 0, atLeast: false)
            } else if sway.taken > 0 {
                decisive = Margin(test: .sway, value: Double(sway.taken), limit: Double(Self.swayReversals))
            } else if tally.goodReversals < settings.reversals, current.pending {
                // Too few reversals: the last stroke never swung back...
                decisive = Margin(test: .oneWay, value: current.impulse, limit: current.pendingImpulse)
            } else if tally.goodReversals < settings.reversals, let lastRejectedMargin = tally.lastRejectedMargin {
                // ...or the last reversal rejected decided.
                decisive = lastRejectedMargin
            } else {
                decisive = decisiveTest(at: time)
            }
        }
        guard let decisive else { return }
        counters.decided += 1
        lastDecision = Decision(
            time: time, reported: shake.isReported, isShake: isShake, decisive: decisive,
            lastRejected: tally.lastRejectedMargin,
            reversals: tally.goodReversals)
    }

    /// Of the tests every motion that gets that far is asked, in the order ``rejection(at:ending:)`` asks them (the
    /// reversals, the back-swing for one back-and-forth, the balance, the duty, the rhythm): the first that failed, or
    /// for a shake the one it passed by the least (the first of equals). Test by test, with no list of them to build:
    /// deciding allocates nothing.
    private func decisiveTest(at time: Double) -> Margin {
        var least = Margin(test: .reversals, value: Double(tally.goodReversals), limit: Double(settings.reversals))
        guard least.passes else { return least }
        if tally.goodReversals == 2, !tally.firstDownward {
            let displaced = Margin(
                test: .displaced, value: tally.firstImpulse,
                limit: Self.backSwing * (tally.secondImpulse - tally.firstImpulse))
            guard displaced.passes else { return displaced }
            if displaced.relative < least.relative { least = displaced }
        }
        let balance = Margin(
            test: .balance, value: Double(tally.goodReversals), limit: Double(tally.rejectedReversals + 1))
        guard balance.passes else { return balance }
        if balance.relative < least.relative { least = balance }
        let strong = Margin(test: .duty, value: duty(at: time), limit: settings.minDuty)
        guard strong.passes else { return strong }
        if strong.relative < least.relative { least = strong }
        let rhythm = Margin(
            test: .rhythm, value: chain.halves.irregularity, limit: settings.maxIrregularity, atLeast: false)
        guard rhythm.passes else { return rhythm }
        return rhythm.relative < least.relative ? rhythm : least
    }

    private mutating func finishShake(at time: Double) -> ShakeEvent? {
        if stopsWhereItStarted {
            // The stroke to rest swung the device back where it started: its reversal counts.
            current.pending = false
            tally.goodReversals += 1
        }
        if endsAtRest {
            // The stroke to rest (`fromRest`) closes the last strong stroke: a reversal that counts.
            tally.acceptedReversals += 1
            tally.secondImpulse = current.impulse
            tally.goodReversals += 1
        }
        let failed = rejection(at: time)
        decide(at: time, isShake: failed == nil)
        if let rejection = failed {
            return cancel(
                at: time, reason: .notAShake, detail: rejection, then: .refractory(until: time + settings.refractory))
        }
        // Passing every test, the shake reported `began` on an earlier sample at the latest (`process` asks the
        // same question first). Should it not have, `began` now and `ended` with the next sample: never an
        // `ended` without its `began`.
        if !shake.isReported { return report(at: time) }
        let reversals = max(tally.goodReversals, sway.taken)
        mode = .refractory(until: time + settings.refractory)
        resetStrokes()
        counters.ended += 1
        let axis: Axis =
            shake.axisEnergy.x >= shake.axisEnergy.y && shake.axisEnergy.x >= shake.axisEnergy.z
            ? .x
            : shake.axisEnergy.y >= shake.axisEnergy.z ? .y : .z
        return .ended(
            ShakeSummary(
                time: time, began: shake.reportedBegan, peak: shake.peakSquared.squareRoot(), axis: axis,
                reversals: reversals))
    }
}

/// The times between reversals of one chain of strokes, for the rhythm test.
///
/// The first interval is kept apart: a shake often starts with a slower wind-up stroke. It counts only when
/// there are too few others to judge by.
struct HalfPeriodStatistics: Sendable {
    private var first = 0.0
    private var rest = Moments()

    mutating func add(_ half: Double) {
        if rest.count == 0 && first == 0 {
            first = half
            return
        }
        rest.add(half)
    }

    /// The coefficient of variation (deviation over mean) of the intervals; 0 with fewer than two.
    var irregularity: Double {
        var all = rest
        if all.count < 2, first > 0 { all.add(first) }
        guard all.count >= 2, all.sum > 0 else { return 0 }
        return all.deviation / all.mean
    }
}

/// The count, sum and sum of squares of a run of values, and their mean and standard deviation (with a mean over
/// no values not a number: ask with a count).
struct Moments: Sendable {
    private(set) var count = 0
    private(set) var sum = 0.0
    private var squares = 0.0

    mutating func add(_ value: Double) {
        count += 1
        sum += value
        squares += value * value
    }

    var mean: Double { sum / Double(count) }

    var deviation: Double {
        let mean = mean
        return (max(0, squares / Double(count) - mean * mean)).squareRoot()
    }
}
