// SPDX-License-Identifier: Apache-2.0
public import ArgumentParser
import FoundationEssentials
public import IIOModel
import NumberFormat
import ShakeDetection
import ShakeTrace

#if canImport(Glibc)
    import Glibc
#endif

/// `shakectl simulate-device`: an IIO accelerometer that plays a trace, for umockdev-run.
struct SimulateDeviceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate-device",
        abstract: "Write an umockdev description of an IIO accelerometer that plays a trace.",
        discussion: """
            Writes DIR/device.umockdev (the sysfs of the accelerometer, its trigger and its /dev node) and, for \
            the buffered shapes, DIR/iio:deviceN.script (the trace as timed buffer reads, one scan per sample, \
            timestamps from the trace in nanoseconds). The polled shape has no buffer: DIR/iio:deviceN.raw lists \
            'milliseconds x y z' raw values for a player that rewrites the _raw attributes. Then, for example:

              umockdev-run --device DIR/device.umockdev --script /dev/iio:device0=DIR/iio:device0.script \\
                -- shaked --print-events

            (the exact command is printed). The sensor reads the trace's device-frame values; with the rotated \
            shape they are stored on the sensor's axes and the mount matrix turns them back.

            Like a real part, the sensor clips at its range: a value beyond what the shape's scan type holds \
            (s16: -32768...32767 counts, s12: -2048...2047, u16: 0...65535, times the scale) reads as full \
            scale, in the buffer and in the _raw attributes alike.

            --clock-jump AT:SECONDS moves the sensor's clock, as a suspend and resume or a clock step does: the \
            scans after trace time AT report timestamps SECONDS later (earlier when negative), while the \
            script still plays them at the trace's pace. Repeat it for several jumps; they add up. For example \
            --clock-jump 2.1:300 jumps five minutes ahead at 2.1 s, --clock-jump 2.1:-60 a minute back. Only \
            the shapes with timestamps accept it.

            Shapes:
              buffered       trigger <name>-dev0, timestamps, le:s16/16>>0, shared scale
              no-trigger     buffered without a trigger, with timestamps
              no-timestamp   buffered with a trigger (<name>-trigger), no timestamp element
              polled         _raw attributes only, no buffer
              shifted        12-bit samples in 16-bit storage: le:s12/16>>4
              big-endian     be:s16/16>>0
              scaled         per-channel and shared scales with a shared offset, unsigned le:u16/16>>0
              rotated        in_accel_mount_matrix 0, 1, 0; -1, 0, 0; 0, 0, 1
              udev-rotated   the same rotation as udev's ACCEL_MOUNT_MATRIX, over an identity \
            in_accel_mount_matrix (udev's wins)
              two            two accelerometers: iio:device0 accel-base (lying still), iio:device1 \
            accel-display (the trace)
            """
    )

    typealias Shape = SimulatedAccelerometer.Shape
    typealias ClockJump = SimulatedAccelerometer.ClockJump

    @Argument(help: "The trace to play (CSV time,x,y,z).")
    var trace: String

    @Option(name: .shortAndLong, help: "The folder to write into (created if needed).")
    var out: String

    @Option(help: "The device's shape: \(Shape.allValueStrings.joined(separator: ", ")).")
    var shape = Shape.buffered

    @Option(help: "Play the script N times faster than the trace (timestamps keep the trace's times).")
    var speed = 1.0

    @Option(help: "Buffered shapes: deliver the scans in groups of N per read, as a sensor FIFO with a watermark does.")
    var batch = 1

    @Option(help: "The device's name attribute.")
    var name = "fake-accel"

    @Option(
        name: .customLong("clock-jump"),
        help: ArgumentHelp(
            "Scans after trace time AT report timestamps SECONDS later (negative: earlier); repeatable.",
            valueName: "AT:SECONDS"))
    var clockJumps: [ClockJump] = []

    func validate() throws {
        guard speed.isFinite, speed > 0 else { throw ValidationError("--speed must be more than 0") }
        guard (1...1000).contains(batch) else { throw ValidationError("--batch must be 1...1000") }
        guard !name.isEmpty, !name.contains(where: { $0 == "\n" || $0 == "\\" || $0 == " " }) else {
            throw ValidationError("--name must be one word")
        }
        if !clockJumps.isEmpty, shape == .polled || shape == .noTimestamp {
            throw ValidationError("--clock-jump needs a shape with timestamps (not \(shape.rawValue))")
        }
    }

    func run() throws {
        let samples: [Sample]
        do {
            samples = try TraceFile.read(path: trace)
        } catch {
            StandardStreams.printError("\(error)")
            throw ExitCode.failure
        }
        guard let first = samples.first else {
            StandardStreams.printError("\(trace): no samples")
            throw ExitCode.failure
        }
        // The script counts milliseconds from the first sample in 64 bits: every time must be a number, and the
        // trace no longer than that can say (9e12 s, some 285,000 years, at --speed 1).
        let longest = Double(Int64.max >> 10) / 1000 * speed
        if let bad = samples.first(where: { !$0.time.isFinite || abs($0.time - first.time) > longest }) {
            StandardStreams.printError(
                "\(trace): a sample at time \(bad.time) cannot be played: times must be finite and within "
                    + "\(longest) s of the first")
            throw ExitCode.failure
        }
        let directory = URL(fileURLWithPath: out)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            StandardStreams.printError("\(out): cannot be created: \(error)")
            throw ExitCode.failure
        }

        var devices: [SimulatedAccelerometer] = []
        switch shape {
        case .two:
            // The base lies still, reading the trace's first sample; the display plays the trace.
            var base = SimulatedAccelerometer(number: 0, name: name, shape: .buffered)
            base.label = "accel-base"
            base.samples = samples.map { Sample(time: $0.time, acceleration: first.acceleration) }
            var display = SimulatedAccelerometer(number: 1, name: name, shape: .buffered)
            display.label = "accel-display"
            display.samples = samples
            base.clockJumps = clockJumps
            display.clockJumps = clockJumps
            devices = [base, display]
        default:
            var device = SimulatedAccelerometer(number: 0, name: name, shape: shape)
            device.samples = samples
            device.clockJumps = clockJumps
            devices = [device]
        }

        var description = ""
        var scripts: [String] = []
        for device in devices {
            description += device.umockdevDescription()
            let file = directory.appendingPathComponent(
                "iio:device\(device.number).\(device.isBuffered ? "script" : "raw")")
            let contents =
                device.isBuffered
                ? device.script(speed: speed, batch: batch) : Array(device.rawPlayback(speed: speed).utf8)
            do {
                try Data(contents).write(to: file)
            } catch {
                StandardStreams.printError("\(file.path): cannot be written: \(error)")
                throw ExitCode.failure
            }
            if device.isBuffered { scripts.append("--script /dev/iio:device\(device.number)=\(file.path)") }
        }
        let descriptionFile = directory.appendingPathComponent("device.umockdev")
        do {
            try Data(description.utf8).write(to: descriptionFile)
        } catch {
            StandardStreams.printError("\(descriptionFile.path): cannot be written: \(error)")
            throw ExitCode.failure
        }
        let command =
            (["umockdev-run", "--device", descriptionFile.path] + scripts + ["--", "shaked", "--print-events"])
            .joined(separator: " ")
        print(command)
    }
}

// The options take the simulated device's own values (public imports: the conformances of a public type are).
extension SimulatedAccelerometer.Shape: ExpressibleByArgument {}

extension SimulatedAccelerometer.ClockJump: ExpressibleByArgument {
    public init?(argument: String) {
        self.init(parsing: argument)
    }
}
