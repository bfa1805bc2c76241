// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Foundation
import IIOModel
import NumberFormat
import ShakeDetection
import ShakeTrace

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

    enum Shape: String, CaseIterable, ExpressibleByArgument {
        case buffered
        case noTrigger = "no-trigger"
        case noTimestamp = "no-timestamp"
        case polled
        case shifted
        case bigEndian = "big-endian"
        case scaled
        case rotated
        case udevRotated = "udev-rotated"
        case two
    }

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

    /// A step of the sensor's clock: the scans after trace time `at` report timestamps shifted by `seconds`.
    struct ClockJump: ExpressibleByArgument, Hashable {
        var at: Double
        var seconds: Double

        init(at: Double, seconds: Double) {
            self.at = at
            self.seconds = seconds
        }

        init?(argument: String) {
            let parts = argument.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, let at = Double(parts[0]), let seconds = Double(parts[1]), at.isFinite,
                seconds.isFinite, abs(seconds) < 1e9
            else { return nil }
            self.init(at: at, seconds: seconds)
        }
    }

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

/// One simulated accelerometer: its sysfs attributes, and its samples as buffer scans or raw values.
struct SimulatedAccelerometer {
    let number: Int
    let name: String
    let shape: SimulateDeviceCommand.Shape
    var label: String?
    var samples: [Sample] = []
    /// Steps of the sensor's clock: they shift the timestamps of the scans after them, not the script's pace.
    var clockJumps: [SimulateDeviceCommand.ClockJump] = []

    init(number: Int, name: String, shape: SimulateDeviceCommand.Shape) {
        self.number = number
        self.name = name
        self.shape = shape
    }

    var isBuffered: Bool { shape != .polled }
    var hasTimestamp: Bool { isBuffered && shape != .noTimestamp }
    /// The trigger's name, or nil for none.
    var triggerName: String? {
        switch shape {
        case .polled, .noTrigger: nil
        case .noTimestamp, .bigEndian: "\(name)-trigger"
        default: "\(name)-dev\(number)"
        }
    }

    /// How each axis is stored in a scan (the IIO ABI's `[be|le]:[s|u]BITS/STORAGE>>SHIFT`).
    var elementType: ScanType {
        switch shape {
        case .shifted: ScanType(bits: 12, storageBits: 16, shift: 4)
        case .bigEndian: ScanType(isBigEndian: true, bits: 16, storageBits: 16)
        case .scaled: ScanType(isSigned: false, bits: 16, storageBits: 16)
        default: ScanType(bits: 16, storageBits: 16)
        }
    }

    /// The scan as the kernel packs it: x, y, z, then the timestamp when the shape has one.
    var layout: ScanLayout {
        var enabled: [(role: ScanLayout.Role, index: Int, type: ScanType)] = [
            (.x, 0, elementType), (.y, 1, elementType), (.z, 2, elementType),
        ]
        if hasTimestamp { enabled.append((.timestamp, 3, .timestamp)) }
        return ScanLayout(enabled)
    }

    /// Per axis: the scale and the offset that turn its raw counts into m/s².
    var scales: [Double] {
        switch shape {
        case .shifted: [0.039, 0.039, 0.039]
        case .scaled: [0.0025, 0.002, 0.002441]
        default: [0.002441, 0.002441, 0.002441]
        }
    }
    var offset: Double { shape == .scaled ? -32768 : 0 }

    /// The matrix from the sensor's axes to the device's (rows), as the rotated shapes declare it.
    static let rotation = [[0.0, 1, 0], [-1.0, 0, 0], [0.0, 0, 1]]
    static var rotationText: String {
        rotation.map { $0.map { DecimalText.format($0) }.joined(separator: ", ") }.joined(separator: "; ")
    }
    var isRotated: Bool { shape == .rotated || shape == .udevRotated }

    /// The raw counts the sensor reports for a device-frame reading, clipped to what its scan type holds (the
    /// `_raw` attributes of a real part clip at the same full scale as its buffer).
    func raw(_ acceleration: Vector3) -> [Int64] {
        var sensor = [acceleration.x, acceleration.y, acceleration.z]
        if isRotated {
            // device = M * sensor, so sensor = Mᵀ * device.
            let m = Self.rotation
            sensor = (0..<3).map { column in (0..<3).reduce(0) { $0 + m[$1][column] * sensor[$1] } }
        }
        let type = elementType
        return (0..<3).map { axis in
            type.clip(sensor[axis] / scales[axis] - offset)
        }
    }

    /// The time the sensor's clock reports for a sample at trace time `time`: the trace's time, moved by the
    /// clock jumps before it.
    func timestamp(at time: Double) -> Double {
        clockJumps.reduce(time) { $0 + (time > $1.at ? $1.seconds : 0) }
    }

    /// The device's sysfs attributes, in the umockdev format (each `A:` value ends in `\n`).
    func umockdevDescription() -> String {
        let id = "iio:device\(number)"
        var lines = [
            "P: /devices/platform/\(name).\(number)/\(id)",
            "N: \(id)",
            "E: DEVNAME=/dev/\(id)",
            "E: DEVTYPE=iio_device",
            "E: MAJOR=241",
            "E: MINOR=\(number)",
            "E: SUBSYSTEM=iio",
        ]
        if shape == .udevRotated { lines.append("E: ACCEL_MOUNT_MATRIX=\(Self.rotationText)") }
        var attributes: [(String, String)] = [("name", name), ("dev", "241:\(number)")]
        if let label { attributes.append(("label", label)) }
        let first = raw(samples.first?.acceleration ?? .zero)
        for (axis, value) in zip(["x", "y", "z"], first) {
            attributes.append(("in_accel_\(axis)_raw", String(value)))
        }
        switch shape {
        case .scaled:
            attributes.append(("in_accel_x_scale", DecimalText.format(scales[0])))
            attributes.append(("in_accel_y_scale", DecimalText.format(scales[1])))
            attributes.append(("in_accel_scale", DecimalText.format(scales[2])))
            attributes.append(("in_accel_offset", DecimalText.format(offset)))
        default:
            attributes.append(("in_accel_scale", DecimalText.format(scales[0])))
        }
        if shape == .rotated {
            attributes.append(("in_accel_mount_matrix", Self.rotationText))
        } else if shape == .udevRotated {
            attributes.append(("in_accel_mount_matrix", "1, 0, 0; 0, 1, 0; 0, 0, 1"))
        }
        attributes.append(("sampling_frequency", "0"))
        attributes.append(("sampling_frequency_available", "12.5 25 50 100 200 400"))
        if isBuffered {
            for (index, axis) in ["x", "y", "z"].enumerated() {
                attributes.append(("scan_elements/in_accel_\(axis)_en", "0"))
                attributes.append(("scan_elements/in_accel_\(axis)_index", String(index)))
                attributes.append(("scan_elements/in_accel_\(axis)_type", elementType.description))
            }
            if hasTimestamp {
                attributes.append(("scan_elements/in_timestamp_en", "0"))
                attributes.append(("scan_elements/in_timestamp_index", "3"))
                attributes.append(("scan_elements/in_timestamp_type", ScanType.timestamp.description))
            }
            attributes.append(("buffer/enable", "0"))
            attributes.append(("buffer/length", "0"))
            attributes.append(("buffer/watermark", "1"))
            attributes.append(("trigger/current_trigger", ""))
        }
        lines += attributes.map { "A: \($0.0)=\(Self.escape($0.1))\\n" }
        var text = lines.joined(separator: "\n") + "\n\n"
        if let triggerName {
            text +=
                [
                    "P: /devices/iio_sysfs_trigger/trigger\(number)",
                    "E: SUBSYSTEM=iio",
                    "A: name=\(Self.escape(triggerName))\\n",
                ].joined(separator: "\n") + "\n\n"
        }
        return text
    }

    /// One scan as the kernel packs it: x, y, z at their storage size, then the timestamp aligned to 8 bytes,
    /// the scan padded to a multiple of its largest element.
    func scan(_ sample: Sample) -> [UInt8] {
        let raw = raw(sample.acceleration)
        let nanoseconds = hasTimestamp ? ScanType.timestamp.clip(timestamp(at: sample.time) * 1e9) : 0
        return layout.encode(x: raw[0], y: raw[1], z: raw[2], timestamp: nanoseconds)
    }

    /// The umockdev script for `/dev/iio:deviceN`: one `r <ms> <bytes>` line per sample, bytes below 32 written
    /// as `^` + (byte + 64) and `^` as ``^` ``.
    ///
    /// umockdev skips spaces at the start of a line's data and has no escape for a space, so a scan that starts
    /// with a space byte goes on the line before it (arriving one sample early; its timestamp is unchanged), and
    /// the first scan, if it starts with one, has its x value nudged by the smallest step that avoids it.
    func script(speed: Double, batch: Int = 1) -> [UInt8] {
        let start = samples.first?.time ?? 0
        var lines: [(delay: Int, bytes: [UInt8])] = []
        var previous = 0
        for (index, sample) in samples.enumerated() {
            let due = Int(((sample.time - start) / speed * 1000).rounded())
            let delay = max(0, due - previous)
            previous += delay
            var bytes = scan(sample)
            if index == 0, bytes.first == 32 {
                bytes = nudged(sample)
            }
            if bytes.first == 32, !lines.isEmpty {
                lines[lines.count - 1].bytes += bytes
                previous -= delay
            } else {
                lines.append((delay, bytes))
            }
        }
        if batch > 1 {
            // The hardware's FIFO hands scans over in groups (the buffer's watermark): one read per group.
            lines = stride(from: 0, to: lines.count, by: batch).map { start in
                let group = lines[start..<min(start + batch, lines.count)]
                return (group.reduce(0) { $0 + $1.delay }, group.flatMap(\.bytes))
            }
        }
        var output = Array(
            "# \(samples.count) scans of the trace, \(scan(samples.first ?? Sample(time: 0, x: 0, y: 0, z: 0)).count) bytes each\n"
                .utf8)
        for line in lines {
            output += Array("r \(line.delay) ".utf8)
            for byte in line.bytes {
                if byte < 32 {
                    output += [UInt8(ascii: "^"), byte + 64]
                } else if byte == UInt8(ascii: "^") {
                    output += [UInt8(ascii: "^"), UInt8(ascii: "`")]
                } else {
                    output.append(byte)
                }
            }
            output.append(UInt8(ascii: "\n"))
        }
        return output
    }

    /// The scan of a sample whose x value is changed by the smallest step that keeps the scan's first byte off
    /// a space.
    private func nudged(_ sample: Sample) -> [UInt8] {
        let sensorScale = scales[0]
        for steps in [1.0, -1, 16, -16, 256, -256, 4096, -4096] {
            var moved = sample
            // A step of raw counts along the sensor's x, expressed in the device's frame.
            let delta = steps * sensorScale
            if isRotated {
                moved.acceleration.y -= delta  // sensor x = -device y for the rotated shape
            } else {
                moved.acceleration.x += delta
            }
            let bytes = scan(moved)
            if bytes.first != 32 { return bytes }
        }
        return scan(sample)
    }

    /// For the polled shape: `milliseconds x y z` per sample, the raw values to write at each time.
    func rawPlayback(speed: Double) -> String {
        let start = samples.first?.time ?? 0
        var text = "# milliseconds in_accel_x_raw in_accel_y_raw in_accel_z_raw\n"
        for sample in samples {
            let values = raw(sample.acceleration)
            text += "\(Int(((sample.time - start) / speed * 1000).rounded())) \(values[0]) \(values[1]) \(values[2])\n"
        }
        return text
    }

    /// Escapes a value for an `A:` line (backslashes and newlines).
    static func escape(_ value: String) -> String {
        value.replacing("\\", with: "\\\\").replacing("\n", with: "\\n")
    }
}
