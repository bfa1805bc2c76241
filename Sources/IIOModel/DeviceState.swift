// SPDX-License-Identifier: Apache-2.0
/// How an IIO device was set up before shaked touched it — buffer, trigger, scan elements, rate — so that
/// shaked can leave it as it found it and a program that used it before (iio-sensor-proxy) resumes. Pure: the
/// backend reads it from sysfs and performs ``restoration`` in order.
public struct DeviceState: Sendable, Hashable {
    /// `trigger/current_trigger`: the trigger's name, empty for none; nil when the device has no trigger file.
    public var trigger: String?
    /// `buffer/enable`.
    public var bufferEnabled: Bool?
    /// `buffer/length`, `buffer/watermark`, as the kernel spelled them.
    public var length: String?
    public var watermark: String?
    /// `scan_elements/*_en` by file name (`in_accel_x_en`), as 0 or 1.
    public var scanEnables: [String: Bool]
    /// `sampling_frequency` or `in_accel_sampling_frequency`, by attribute name, and its value.
    public var samplingFrequency: (attribute: String, value: String)?

    public init(
        trigger: String? = nil, bufferEnabled: Bool? = nil, length: String? = nil, watermark: String? = nil,
        scanEnables: [String: Bool] = [:], samplingFrequency: (attribute: String, value: String)? = nil
    ) {
        self.trigger = trigger
        self.bufferEnabled = bufferEnabled
        self.length = length
        self.watermark = watermark
        self.scanEnables = scanEnables
        self.samplingFrequency = samplingFrequency
    }

    public static func == (lhs: DeviceState, rhs: DeviceState) -> Bool {
        lhs.trigger == rhs.trigger && lhs.bufferEnabled == rhs.bufferEnabled && lhs.length == rhs.length
            && lhs.watermark == rhs.watermark && lhs.scanEnables == rhs.scanEnables
            && lhs.samplingFrequency?.attribute == rhs.samplingFrequency?.attribute
            && lhs.samplingFrequency?.value == rhs.samplingFrequency?.value
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(trigger)
        hasher.combine(bufferEnabled)
        hasher.combine(length)
    }

    /// One sysfs write, relative to the device's directory.
    public struct Write: Sendable, Hashable, CustomStringConvertible {
        public var file: String
        public var value: String
        public var description: String { "\(file)=\(value)" }
    }

    /// The writes that put the device back as this state says, given how shaked left it (`now`), in the order the
    /// kernel takes them: the buffer off first (the rest is refused with EBUSY while it runs), then the trigger,
    /// length, watermark, rate and scan elements that differ, and the buffer on again last if it was.
    public func restoration(from now: DeviceState) -> [Write] {
        var changes: [Write] = []
        if let trigger, trigger != now.trigger {
            changes.append(Write(file: "trigger/current_trigger", value: trigger))
        }
        if let length, length != now.length { changes.append(Write(file: "buffer/length", value: length)) }
        if let watermark, watermark != now.watermark {
            changes.append(Write(file: "buffer/watermark", value: watermark))
        }
        if let samplingFrequency, samplingFrequency.value != now.samplingFrequency?.value {
            changes.append(Write(file: samplingFrequency.attribute, value: samplingFrequency.value))
        }
        for (file, enabled) in scanEnables.sorted(by: { $0.key < $1.key }) where now.scanEnables[file] != enabled {
            changes.append(Write(file: "scan_elements/\(file)", value: enabled ? "1" : "0"))
        }
        guard !changes.isEmpty else {
            // Only the buffer's state may differ.
            guard let bufferEnabled, bufferEnabled != now.bufferEnabled else { return [] }
            return [Write(file: "buffer/enable", value: bufferEnabled ? "1" : "0")]
        }
        var writes: [Write] = []
        if now.bufferEnabled == true { writes.append(Write(file: "buffer/enable", value: "0")) }
        writes += changes
        if bufferEnabled == true { writes.append(Write(file: "buffer/enable", value: "1")) }
        return writes
    }
}

/// Waits between attempts on a busy device: 1 s, doubling to at most a minute; back to 1 s after a success.
public struct RetryBackoff: Sendable, Hashable {
    public let first: Double
    public let maximum: Double
    public private(set) var attempts = 0

    public init(first: Double = 1, maximum: Double = 60) {
        self.first = first
        self.maximum = maximum
    }

    /// The wait before the next attempt, seconds.
    public mutating func next() -> Double {
        defer { attempts += 1 }
        return min(maximum, first * Double(1 << min(attempts, 30)))
    }

    public mutating func reset() { attempts = 0 }
}
