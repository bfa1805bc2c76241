// SPDX-License-Identifier: Apache-2.0
/// An accelerometer found among a context's IIO devices, with everything needed to read it.
public struct Accelerometer: Sendable, Hashable {
    /// Where in a device the sensor sits, for 2-in-1s and laptops that have two.
    public enum Location: String, Sendable, Hashable, CaseIterable {
        /// In the lid or screen: the one whose motion a user sees.
        case display
        /// In the keyboard base.
        case base
    }

    /// `iio:device0`.
    public var id: String
    /// The driver or part name (`mma8452`).
    public var name: String?
    /// The kernel's `label` (`accel-display`).
    public var label: String?
    public var location: Location?
    /// How the location was known: `label accel-display`, `udev ACCEL_LOCATION=base`.
    public var locationSource: String?

    /// Whether the device has the three `in_accel_{x,y,z}_raw` attributes and so can be polled.
    public var hasRawAttributes: Bool

    /// The accel scan elements (x, y, z), when the device can buffer; and its timestamp element.
    public var scanElements: [IIOScanElement]
    public var timestampElement: IIOScanElement?
    /// The trigger to use for buffered capture (its id, `trigger0`), if one belongs to the device.
    public var triggerID: String?
    public var triggerName: String?

    public var scaling: ChannelScaling
    public var mountMatrix: MountMatrix
    /// Where the matrix came from (`in_accel_mount_matrix`, `udev ACCEL_MOUNT_MATRIX`, or `none`).
    public var mountMatrixSource: String

    /// `sampling_frequency` or `in_accel_sampling_frequency`, when the device has one.
    public var frequencyAttribute: String?
    /// The matching `*_available` attribute, when there is one.
    public var availableFrequenciesAttribute: String?

    public init(
        id: String, name: String? = nil, label: String? = nil, location: Location? = nil,
        locationSource: String? = nil, hasRawAttributes: Bool = true, scanElements: [IIOScanElement] = [],
        timestampElement: IIOScanElement? = nil, triggerID: String? = nil, triggerName: String? = nil,
        scaling: ChannelScaling = .identity, mountMatrix: MountMatrix = .identity, mountMatrixSource: String = "none",
        frequencyAttribute: String? = nil, availableFrequenciesAttribute: String? = nil
    ) {
        self.id = id
        self.name = name
        self.label = label
        self.location = location
        self.locationSource = locationSource
        self.hasRawAttributes = hasRawAttributes
        self.scanElements = scanElements
        self.timestampElement = timestampElement
        self.triggerID = triggerID
        self.triggerName = triggerName
        self.scaling = scaling
        self.mountMatrix = mountMatrix
        self.mountMatrixSource = mountMatrixSource
        self.frequencyAttribute = frequencyAttribute
        self.availableFrequenciesAttribute = availableFrequenciesAttribute
    }

    /// Whether all three axes can be captured in a buffer.
    public var canBuffer: Bool { scanElements.count == 3 }

    /// `iio:device0 (mma8452, accel-display)`, for the log.
    public var displayName: String {
        let details = [name, label].compactMap { $0 }.filter { !$0.isEmpty }
        return details.isEmpty ? id : "\(id) (\(details.joined(separator: ", ")))"
    }

    /// The scan layout of a buffer with the accel elements and, when enabled, the timestamp.
    public func scanLayout(withTimestamp: Bool) -> ScanLayout {
        var enabled: [(role: ScanLayout.Role, index: Int, type: ScanType)] = scanElements.map { element in
            let role: ScanLayout.Role = element.channel.hasSuffix("_x") ? .x : element.channel.hasSuffix("_y") ? .y : .z
            return (role, element.index, element.type)
        }
        if withTimestamp, let timestampElement {
            enabled.append((.timestamp, timestampElement.index, timestampElement.type))
        }
        return ScanLayout(enabled)
    }
}
