// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import NumberFormat
import ShakeDetection
import ShakeTrace

struct SynthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "synth",
        abstract: "Write a synthetic accelerometer trace: a shake (or another motion) inside a background.",
        discussion: """
            The shake follows the view-shaking vocabulary: a direction, a force, a duration, the seconds per \
            back-and-forth (iteration), how the strength changes (interpolation, autoreverse) and repeats. \
            It is a motion a hand can make: the device goes back and forth about where it started, from rest \
            to rest, its velocity reversing at every turning point; the first stroke, from rest, and the last, \
            back to rest where it started, go half as far as the others in the same time. The reading is the \
            second derivative of that position, plus gravity. \
            Around it, the trace has what real recordings have: a background (a device lying still, held in a \
            hand, or carried while walking), an orientation (which way gravity points), a sample rate, jitter \
            and sensor noise. The same --seed writes the same trace.

            Examples:
              shakectl synth > shake.csv
              shakectl synth --direction rotate --force 0.5 --rate 50 --out twist.csv
              shakectl synth --motion none --background walking --before 20 > walking.csv
              shakectl synth --repeat 3 --pause 2 --interpolation exp-down --autoreverse > three.csv
              shakectl synth --motion move --move up --turn 40 --duration 0.5 --force 0.5 > lift.csv
            """
    )

    @Option(help: "The motion: \(SynthesisOptions.Motion.allValueStrings.joined(separator: ", ")).")
    var motion = SynthesisOptions.Motion.shake
    @Option(help: "Shake direction: \(SynthesisOptions.Direction.allValueStrings.joined(separator: ", ")).")
    var direction = SynthesisOptions.Direction.horizontal
    @Option(help: "Where --motion move goes: \(SynthesisOptions.Move.allValueStrings.joined(separator: ", ")).")
    var move = SynthesisOptions.Move.left
    @Option(help: "Degrees the wrist turns the device during --motion move (the sign is the sense).")
    var turn = 40.0
    @Option(
        name: .customLong("back-swing"),
        help: "For --motion move: the hand first draws the device back, with this share (0...1) of the stop's peak.")
    var backSwing = 0.0
    @Option(help: "Strength, 0...1 of a vigorous shake (about 4 g at the turning points, at the mean tempo).")
    var force = 0.7
    @Option(
        help:
            "Seconds of shaking per repeat, rounded to whole strokes (half back-and-forths; at least one back-and-forth): with --iteration 0.2, --duration 0.3 is a back-and-forth and a half. For --motion move, the move's seconds."
    )
    var duration = 1.5
    @Option(help: "Seconds per back-and-forth (two strokes: there and back).")
    var iteration = 0.22
    @Option(
        help: "How the strength changes: \(SynthesisOptions.Interpolation.allValueStrings.joined(separator: ", ")).")
    var interpolation = SynthesisOptions.Interpolation.none
    @Flag(help: "Play the strength envelope forwards, then backwards.")
    var autoreverse = false
    @Option(name: .customLong("repeat"), help: "How many times the motion happens.")
    var repeatCount = 1
    @Option(help: "Seconds between repeats.")
    var pause = 2.0
    @Option(help: "Seconds of background before the motion.")
    var before = 2.0
    @Option(help: "Seconds of background after the motion.")
    var after = 2.0
    @Option(help: "Background: \(SynthesisOptions.Background.allValueStrings.joined(separator: ", ")).")
    var background = SynthesisOptions.Background.hand
    @Option(
        help:
            "Where the device is carried: \(SynthesisOptions.Placement.allValueStrings.joined(separator: ", ")) (pocket: a trouser pocket, swinging with the thigh)."
    )
    var placement = SynthesisOptions.Placement.hand
    @Option(help: "Which way gravity points: \(SynthesisOptions.Orientation.allValueStrings.joined(separator: ", ")).")
    var orientation = SynthesisOptions.Orientation.portrait
    @Option(help: "Samples per second.")
    var rate = 100.0
    @Option(help: "Random variation of the sampling interval, as a share of it (0...0.5).")
    var jitter = 0.0
    @Option(
        help:
            "The share of samples (0...0.9) that repeat the reading before them, as a phone app polling between two of the sensor's updates gets."
    )
    var repeats = 0.0
    @Option(help: "Sensor noise, m/s² RMS per axis.")
    var noise = 0.05
    @Option(help: "The sensor's full scale in g: each axis clips at ± this (0: no limit).")
    var range = 0.0
    @Option(help: "The sensor's resolution, m/s² a count (0: continuous).")
    var resolution = 0.0
    @Option(help: "Time of the first sample, in seconds.")
    var start = 0.0
    @Option(help: "Random seed: the same seed writes the same trace.")
    var seed: UInt64 = 1
    @Option(name: .shortAndLong, help: "Write to this file instead of standard output.")
    var out = "-"

    var options: SynthesisOptions {
        var options = SynthesisOptions()
        options.motion = motion
        options.direction = direction
        options.move = move
        options.turn = turn
        options.backSwing = backSwing
        options.force = force
        options.duration = duration
        options.iteration = iteration
        options.interpolation = interpolation
        options.autoreverse = autoreverse
        options.repeatCount = repeatCount
        options.pause = pause
        options.before = before
        options.after = after
        options.background = background
        options.placement = placement
        options.orientation = orientation
        options.rate = rate
        options.jitter = jitter
        options.repeats = repeats
        options.noise = noise
        options.range = range
        options.resolution = resolution
        options.start = start
        options.seed = seed
        return options
    }

    func validate() throws {
        do {
            try options.validate()
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() throws {
        let synthesizer = TraceSynthesizer(options: options)
        let intervals = synthesizer.motionIntervals.map {
            "\(DecimalText.format($0.start, decimals: 3))-\(DecimalText.format($0.end, decimals: 3))"
        }
        var comments = ["shakectl synth " + CommandLine.arguments.dropFirst(2).joined(separator: " ")]
        if options.motion != .none {
            comments.append("\(options.motion.rawValue) at \(intervals.joined(separator: ", ")) s")
        }
        do {
            try TraceFile.write(synthesizer.samples(), to: out, comments: comments)
        } catch {
            StandardStreams.printError("\(error)")
            throw ExitCode.failure
        }
    }
}
