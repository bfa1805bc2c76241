// SPDX-License-Identifier: Apache-2.0
import NumberFormat
public import ShakeDetection

/// One simulated accelerometer: its sysfs attributes, and its samples as buffer scans or raw values.
public struct SimulatedAccelerometer: Sendable, Hashable {
    /// The shapes of device it can be: how it is read (buffered with or without a trigger and a timestamp,
    /// polled), how its scans are stored, and where its mount matrix comes from.
    public enum Shape: String, Sendable, Hashable, CaseIterable {
        case buffered
        case noTrigger = "no-trigger"
        case noTimestamp = "no-timestamp"
        case polled
        case shifted
        case bigEndian = "big-endian"
        case scaled
        case rotated
        case udevRotated = "udev-rotated"
        /// Two accelerometers (base and display): a buffered device each.
        case two
    }

    /// A step of the sensor's clock: the scans after trace time `at` report timestamps shifted by `seconds`.
    public struct ClockJump: Sendable, Hashable {
        public var at: Double
        public var seconds: Double

        public init(at: Double, seconds: Double) {
            self.at = at
            self.seconds = seconds
        }

        /// `AT:SECONDS`, both finite, the jump shorter than 10⁹ s; nil otherwise.
        public init?(parsing text: String) {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, let at = Double(parts[0]), let seconds = Double(parts[1]), at.isFinite,
                seconds.isFinite, abs(seconds) < 1e9
            else { return nil }
            self.init(at: at, seconds: seconds)
        }
    }

    /// N of `iio:deviceN`.
    public let number: Int
    /// The `name` attribute.
    public let name: String
    public let shape: Shape
    /// The `label` attribute, or nil for none.
    public var label: String?
    /// What it plays, in the device's frame.
    public var samples: [Sample] = []
    /// Steps of the sensor's clock: they shift the timestamps of the scans after them, not the script's pace.
    public var clockJumps: [ClockJump] = []

    public init(number: Int, name: String, shape: Shape) {
        self.number = number
        self.name = name
        self.shape = shape
    }

    public var isBuffered: Bool { shape != .polled }
    public var hasTimestamp: Bool { isBuffered && shape != .noTimestamp }
    /// The trigger's name, or nil for none.
    public var triggerName: String? {
        switch shape {
        case .polled, .noTrigger: nil
        case .noTimestamp, .bigEndian: "\(name)-trigger"
        default: "\(name)-dev\(number)"
        }
    }

    /// How each axis is stored in a scan (the IIO ABI's `[be|le]:[s|u]BITS/STORAGE>>SHIFT`).
    public var elementType: ScanType {
        switch shape {
        case .shifted: ScanType(bits: 12, storageBits: 16, shift: 4)
        case .bigEndian: ScanType(isBigEndian: true, bits: 16, storageBits: 16)
        case .scaled: ScanType(isSigned: false, bits: 16, storageBits: 16)
        default: ScanType(bits: 16, storageBits: 16)
        }
    }

    /// The scan as the kernel packs it: x, y, z, then the timestamp when the shape has one.
    public var layout: ScanLayout {
        var enabled: [(role: ScanLayout.Role, index: Int, type: ScanType)] = [
            (.x, 0, elementType), (.y, 1, elementType), (.z, 2, elementType),
        ]
        if hasTimestamp { enabled.append((.timestamp, 3, .timestamp)) }
        return ScanLayout(enabled)
    }

    /// Per axis: the scale and the offset that turn its raw counts into m/s².
    public var scales: [Double] {
        switch shape {
        case .shifted: [0.039, 0.039, 0.039]
        case .scaled: [0.0025, 0.002, 0.002441]
        default: [0.002441, 0.002441, 0.002441]
        }
    }
    public var offset: Double { shape == .scaled ? -32768 : 0 }

    /// The matrix from the sensor's axes to the device's (rows), as the rotated shapes declare it.
    public static let rotation = [[0.0, 1, 0], [-1.0, 0, 0], [0.0, 0, 1]]
    public static var rotationText: String {
        rotation.map { $0.map { DecimalText.format($0) }.joined(separator: ", ") }.joined(separator: "; ")
    }
    public var isRotated: Bool { shape == .rotated || shape == .udevRotated }

    /// The raw counts the sensor reports for a device-frame reading, clipped to what its scan type holds (the
    /// `_raw` attributes of a real part clip at the same full scale as its buffer).
    public func raw(_ acceleration: Vector3) -> [Int64] {
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
    public func timestamp(at time: Double) -> Double {
        clockJumps.reduce(time) { $0 + (time > $1.at ? $1.seconds : 0) }
    }

    /// The device's sysfs attributes, in the umockdev format (each `A:` value ends in `\n`).
    public func umockdevDescription() -> String {
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
    public func scan(_ sample: Sample) -> [UInt8] {
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
    public func script(speed: Double, batch: Int = 1) -> [UInt8] {
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
    public func rawPlayback(speed: Double) -> String {
        let start = samples.first?.time ?? 0
        var text = "# milliseconds in_accel_x_raw in_accel_y_raw in_accel_z_raw\n"
        for sample in samples {
            let values = raw(sample.acceleration)
            text += "\(Int(((sample.time - start) / speed * 1000).rounded())) \(values[0]) \(values[1]) \(values[2])\n"
        }
        return text
    }

    /// Escapes a value for an `A:` line (backslashes and newlines).
    public static func escape(_ value: String) -> String {
        value.replacing("\\", with: "\\\\").replacing("\n", with: "\\n")
    }
}
