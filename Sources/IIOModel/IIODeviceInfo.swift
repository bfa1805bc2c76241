// SPDX-License-Identifier: Apache-2.0
/// One IIO device (or trigger), as a context lists it.
public struct IIODeviceInfo: Sendable, Hashable {
    /// The kernel's id: `iio:device0`, `trigger0`.
    public var id: String
    /// The `name` attribute: the driver or part (`mma8452`, `accel_3d`), or a trigger's name.
    public var name: String?
    /// The `label` attribute (`accel-display`, `accel-base`), when the kernel has one.
    public var label: String?
    public var isTrigger: Bool
    /// The sysfs names of the device's readable attributes, its channels' included.
    public var attributes: Set<String>
    /// The channels that can be captured in a buffer.
    public var scanElements: [IIOScanElement]
    /// The names of the buffer's attributes (`length`, `watermark`, `enable`).
    public var bufferAttributes: Set<String>

    public init(
        id: String, name: String? = nil, label: String? = nil, isTrigger: Bool = false,
        attributes: Set<String> = [], scanElements: [IIOScanElement] = [], bufferAttributes: Set<String> = []
    ) {
        self.id = id
        self.name = name
        self.label = label
        self.isTrigger = isTrigger
        self.attributes = attributes
        self.scanElements = scanElements
        self.bufferAttributes = bufferAttributes
    }

    /// The N of `iio:deviceN` or `triggerN`, when the id has one.
    public var number: Int? {
        let digits = id.reversed().prefix { $0.isNumber }
        return digits.isEmpty ? nil : Int(String(digits.reversed()))
    }
}

/// A channel that can be captured in a buffer (`scan_elements/in_<id>_{index,type,en}`).
public struct IIOScanElement: Sendable, Hashable {
    /// The channel's id: `accel_x`, `timestamp`.
    public var channel: String
    /// The position in a scan (`_index`).
    public var index: Int
    /// How it is stored (`_type`).
    public var type: ScanType

    public init(channel: String, index: Int, type: ScanType) {
        self.channel = channel
        self.index = index
        self.type = type
    }
}
