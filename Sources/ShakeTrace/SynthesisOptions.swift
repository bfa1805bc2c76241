// SPDX-License-Identifier: Apache-2.0
/// What `shakectl synth` writes: a motion (by default a shake) inside a background, seen by an accelerometer.
///
/// The shake vocabulary follows the view-shaking recipes (direction, force, duration, iteration,
/// interpolation, autoreverse, repeat); the rest describes what real recordings have around a gesture.
public struct SynthesisOptions: Sendable, Hashable {
    /// The gesture in the middle of the trace.
    public enum Motion: String, Sendable, CaseIterable {
        /// Back-and-forth shaking (the default).
        case shake
        /// One quick flick: a push and a stop.
        case fling
        /// A finger tapping the screen.
        case tap
        /// The device dropped a few centimetres onto a table.
        case drop
        /// Slowly turning the device over.
        case turnOver = "turn-over"
        /// Slowly tilting the device and back.
        case tilt
        /// Three jumps on the spot with the device in a pocket: push-off, flight (the reading drops to zero),
        /// a hard landing.
        case jump
        /// One deliberate move that stops (lift, push away, move left or right: ``Move``): the hand speeds the
        /// device up and brings it to rest, one acceleration and one deceleration, no oscillation, in
        /// `duration` seconds, while the wrist turns it by `turn` degrees. It ends at rest, turned.
        case move
        /// Nothing but the background.
        case none
    }

    /// The direction of the shake, in the device's frame.
    public enum Direction: String, Sendable, CaseIterable {
        /// Side to side, along the device's x axis.
        case horizontal
        /// Up and down, along the device's y axis.
        case vertical
        /// Twisting about the screen's normal, like turning a key.
        case rotate
        /// Diagonally, along x and y at once.
        case both
    }

    /// How the shake's strength changes over its duration.
    public enum Interpolation: String, Sendable, CaseIterable {
        case none
        case linearUp = "linear-up"
        case linearDown = "linear-down"
        case expUp = "exp-up"
        case expDown = "exp-down"
        /// Each stroke gets its own random strength.
        case random
    }

    /// What the device does before, during and after the motion.
    public enum Background: String, Sendable, CaseIterable {
        /// Lying on a table.
        case still
        /// Held in a hand: tremor and slow drift.
        case hand
        /// Carried in a hand by a walking person.
        case walking
        /// In the pocket of a jogger: a flight phase every stride and heel strikes of two g and more.
        case jogging
        /// Carried down stairs: a sharp heel strike on every step, ringing through the body.
        case stairs
    }

    /// Where the device is carried during the background.
    public enum Placement: String, Sendable, CaseIterable {
        /// As the background describes it (in a hand, or on the body without swinging with a limb).
        case hand
        /// In a front trouser pocket, upright along the thigh: every stride swings it about the hip (gravity
        /// turns in the device's frame, and the thigh's own swing accelerates it), and heel strikes reach it
        /// harder than at the waist.
        case pocket
    }

    /// Where a deliberate move (``Motion/move``) takes the device, as the person holding it sees it (the device
    /// held as `orientation` says, its screen towards them).
    public enum Move: String, Sendable, CaseIterable {
        case left, right, up, down
        /// Pushed away from the person, along the screen's normal.
        case away
        /// Pulled towards the person.
        case toward
    }

    /// Which way gravity points, as the device is held.
    public enum Orientation: String, Sendable, CaseIterable {
        case faceUp = "face-up"
        case faceDown = "face-down"
        case portrait
        case portraitUpsideDown = "portrait-upside-down"
        case landscapeLeft = "landscape-left"
        case landscapeRight = "landscape-right"
    }

    public var motion = Motion.shake
    /// Where ``Motion/move`` goes.
    public var move = Move.left
    /// How far, in degrees, the wrist turns the device during ``Motion/move`` (the sign is the sense): about
    /// the forearm (pointing away from the person) for a move left or right, about the left-right axis for the
    /// others (the wrist bends).
    public var turn = 40.0
    /// For ``Motion/move``: how far the hand first draws the device back, against the move, as a share (0...1)
    /// of the move's stop: the back-swing's peak acceleration is this share of the stop's, and it takes the first
    /// 30% of `duration`. 0 (the default) is no back-swing. The move then both brings the back-swing to rest and
    /// speeds the device up, and its stop brings it to rest: three strokes, two reversals, still no oscillation.
    public var backSwing = 0.0
    public var direction = Direction.horizontal
    /// The shake's strength, 0...1 of a vigorous shake (about 4 g at the turning points).
    public var force = 0.7
    /// Seconds of shaking (of the move, for ``Motion/move``), per repeat. A shake is a whole number of strokes (half
    /// back-and-forths, ``shakeStrokes``): the duration is rounded to the nearest one.
    public var duration = 1.5
    /// Seconds per back-and-forth: the device's way there and back, two strokes.
    public var iteration = 0.22
    public var interpolation = Interpolation.none
    /// Plays the strength envelope forwards, then backwards.
    public var autoreverse = false
    /// How many times the motion happens.
    public var repeatCount = 1
    /// Seconds between repeats.
    public var pause = 2.0
    /// Seconds of background before the first motion.
    public var before = 2.0
    /// Seconds of background after the last motion.
    public var after = 2.0
    public var background = Background.hand
    public var placement = Placement.hand
    public var orientation = Orientation.portrait
    /// Samples per second.
    public var rate = 100.0
    /// Random variation of the sampling interval, as a share of it (0...0.5).
    public var jitter = 0.0
    /// The share (0...0.9) of samples that repeat the reading before them, as a phone's app that polls the sensor
    /// between two of its updates gets the last one again, with a new time.
    public var repeats = 0.0
    /// Sensor noise, m/s² RMS per axis.
    public var noise = 0.05
    /// The sensor's full scale, in g: each axis clips at ± this (many phones and controllers read ±2 g). 0: no
    /// limit.
    public var range = 0.0
    /// The sensor's resolution, m/s² a count: each axis reads a whole number of counts (an 8-bit reading of ±2 g
    /// is 0.153). 0: continuous.
    public var resolution = 0.0
    /// The time of the first sample, in seconds.
    public var start = 0.0
    public var seed: UInt64 = 1

    public init() {}

    /// A problem with the options, naming the option.
    public struct Invalid: Error, Sendable, CustomStringConvertible {
        public var option: String
        public var message: String
        public var description: String { "--\(option): \(message)" }
    }

    /// Checks every option's range.
    public func validate() throws(Invalid) {
        func check(_ ok: Bool, _ option: String, _ message: String) throws(Invalid) {
            if !ok { throw Invalid(option: option, message: message) }
        }
        try check(force.isFinite && (0...1).contains(force), "force", "must be in 0...1")
        try check(turn.isFinite && (-180...180).contains(turn), "turn", "must be in -180...180 degrees")
        try check(backSwing.isFinite && (0...1).contains(backSwing), "back-swing", "must be in 0...1")
        try check(duration.isFinite && (0.05...600).contains(duration), "duration", "must be in 0.05...600 seconds")
        try check(iteration.isFinite && (0.04...5).contains(iteration), "iteration", "must be in 0.04...5 seconds")
        try check((1...1000).contains(repeatCount), "repeat", "must be in 1...1000")
        try check(pause.isFinite && (0...600).contains(pause), "pause", "must be in 0...600 seconds")
        try check(before.isFinite && (0...3600).contains(before), "before", "must be in 0...3600 seconds")
        try check(after.isFinite && (0...3600).contains(after), "after", "must be in 0...3600 seconds")
        try check(rate.isFinite && (1...4000).contains(rate), "rate", "must be in 1...4000 samples per second")
        try check(jitter.isFinite && (0...0.5).contains(jitter), "jitter", "must be in 0...0.5")
        try check(repeats.isFinite && (0...0.9).contains(repeats), "repeats", "must be in 0...0.9")
        try check(noise.isFinite && (0...10).contains(noise), "noise", "must be in 0...10 m/s²")
        try check(
            range == 0 || (range.isFinite && (0.5...1000).contains(range)), "range", "must be 0 or in 0.5...1000 g")
        try check(resolution.isFinite && (0...10).contains(resolution), "resolution", "must be in 0...10 m/s²")
        try check(start.isFinite, "start", "must be a finite number")
        let total = before + after + Double(repeatCount) * motionLength + Double(repeatCount - 1) * pause
        try check(total * rate <= 50_000_000, "duration", "the trace would exceed 50 million samples")
    }

    /// How many strokes (half back-and-forths) a shake has: `duration` in half `iteration`s, rounded to the nearest,
    /// at least two (one back-and-forth: there and back). Three is a back-and-forth and a half: from rest one way,
    /// the other way past the start, and back to rest where it started.
    public var shakeStrokes: Int {
        let halves = (duration / (iteration / 2)).rounded()
        return halves.isFinite ? max(2, Int(min(halves, 1_000_000))) : 2
    }

    /// Seconds that one motion lasts.
    public var motionLength: Double {
        switch motion {
        case .shake: Double(shakeStrokes) * iteration / 2
        case .fling: 0.4
        case .tap: 0.15
        case .drop: 0.6
        case .turnOver: 2.0
        case .tilt: 2.5
        case .jump: 2.4
        case .move: duration
        case .none: 0
        }
    }
}
