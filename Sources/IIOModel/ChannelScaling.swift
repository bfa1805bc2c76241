// SPDX-License-Identifier: Apache-2.0
public import ShakeDetection

/// Raw counts to m/s² for one axis: `(raw + offset) * scale`, as the IIO ABI defines it.
public struct AxisScaling: Sendable, Hashable {
    public var scale: Double
    public var offset: Double
    /// Where each came from (`in_accel_x_scale`, `in_accel_scale`, `scale`, or `default`), for the log.
    public var scaleSource: String
    public var offsetSource: String

    public init(
        scale: Double = 1, offset: Double = 0, scaleSource: String = "default", offsetSource: String = "default"
    ) {
        self.scale = scale
        self.offset = offset
        self.scaleSource = scaleSource
        self.offsetSource = offsetSource
    }

    @inlinable
    public func apply(_ raw: Int64) -> Double {
        (Double(raw) + offset) * scale
    }
}

/// The scaling of the three axes of an accelerometer.
public struct ChannelScaling: Sendable, Hashable {
    public var x: AxisScaling
    public var y: AxisScaling
    public var z: AxisScaling

    public init(x: AxisScaling, y: AxisScaling, z: AxisScaling) {
        self.x = x
        self.y = y
        self.z = z
    }

    public static let identity = ChannelScaling(x: AxisScaling(), y: AxisScaling(), z: AxisScaling())

    /// Raw counts on the sensor's axes to m/s² on the sensor's axes.
    @inlinable
    public func apply(x rawX: Int64, y rawY: Int64, z rawZ: Int64) -> Vector3 {
        Vector3(x: x.apply(rawX), y: y.apply(rawY), z: z.apply(rawZ))
    }

    /// The sysfs names that may hold an axis's scale, most specific first: per channel, shared by the accel
    /// channels, device-wide.
    public static func scaleCandidates(axis: String) -> [String] {
        ["in_accel_\(axis)_scale", "in_accel_scale", "scale", "in_scale"]
    }

    /// Likewise for the offset.
    public static func offsetCandidates(axis: String) -> [String] {
        ["in_accel_\(axis)_offset", "in_accel_offset", "offset", "in_offset"]
    }

    /// Looks the scaling up among a device's attributes. Every attribute is optional: a missing or unreadable
    /// scale is 1 and a missing offset 0 (reported in `problems`).
    /// - Parameters:
    ///   - attributes: the sysfs names the device has.
    ///   - read: reads one attribute's value.
    public static func lookup(
        attributes: Set<String>, read: (String) -> String?
    ) -> (scaling: ChannelScaling, problems: [String]) {
        var problems: [String] = []
        func value(_ candidates: [String], default fallback: Double, positive: Bool) -> (Double, String) {
            for name in candidates where attributes.contains(name) {
                guard let text = read(name) else {
                    problems.append("\(name) cannot be read")
                    continue
                }
                guard let number = Double(text.trimmingWhitespace()), number.isFinite, !positive || number != 0 else {
                    problems.append("\(name) is not a usable number: '\(text)'")
                    continue
                }
                return (number, name)
            }
            return (fallback, "default")
        }
        func axis(_ name: String) -> AxisScaling {
            let (scale, scaleSource) = value(scaleCandidates(axis: name), default: 1, positive: true)
            let (offset, offsetSource) = value(offsetCandidates(axis: name), default: 0, positive: false)
            return AxisScaling(scale: scale, offset: offset, scaleSource: scaleSource, offsetSource: offsetSource)
        }
        let scaling = ChannelScaling(x: axis("x"), y: axis("y"), z: axis("z"))
        return (scaling, problems)
    }

    /// A short description for the log: `scale 0.0098 (in_accel_scale)` or per axis when they differ.
    public var summary: String {
        func describe(_ axis: AxisScaling) -> String {
            var text = "scale \(axis.scale) (\(axis.scaleSource))"
            if axis.offset != 0 || axis.offsetSource != "default" {
                text += ", offset \(axis.offset) (\(axis.offsetSource))"
            }
            return text
        }
        if x == y && y == z { return describe(x) }
        return "x: \(describe(x)); y: \(describe(y)); z: \(describe(z))"
    }
}
