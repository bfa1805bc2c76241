// SPDX-License-Identifier: Apache-2.0
public import IIOModel
public import Logging

/// Finds the accelerometers among a context's devices and reads what is needed to use them: scaling, mount
/// matrix, location, rate attributes, scan elements and trigger.
public enum AccelerometerDiscovery {
    /// Whether a device is an accelerometer: three `in_accel_{x,y,z}_raw` attributes or three accel scan
    /// elements.
    public static func isAccelerometer(_ device: IIODeviceInfo) -> Bool {
        guard !device.isTrigger else { return false }
        return hasRawAttributes(device) || accelScanElements(device).count == 3
    }

    static func hasRawAttributes(_ device: IIODeviceInfo) -> Bool {
        ["x", "y", "z"].allSatisfy { device.attributes.contains("in_accel_\($0)_raw") }
    }

    static func accelScanElements(_ device: IIODeviceInfo) -> [IIOScanElement] {
        ["x", "y", "z"].compactMap { axis in device.scanElements.first { $0.channel == "accel_\(axis)" } }
    }

    /// The trigger that belongs to a device: one named `<name>-dev<N>`, else `<name>-trigger`.
    public static func trigger(for device: IIODeviceInfo, among devices: [IIODeviceInfo]) -> IIODeviceInfo? {
        guard let name = device.name, !name.isEmpty else { return nil }
        let triggers = devices.filter(\.isTrigger)
        if let number = device.number, let match = triggers.first(where: { $0.name == "\(name)-dev\(number)" }) {
            return match
        }
        return triggers.first { $0.name == "\(name)-trigger" }
    }

    /// The location a label or udev property names.
    public static func location(label: String?, udev: [String: String]) -> (Accelerometer.Location, String)? {
        if let label = label?.lowercased() {
            if label == "accel-display" || label.contains("display") || label.contains("lid") {
                return (.display, "label \(label)")
            }
            if label == "accel-base" || label.contains("base") {
                return (.base, "label \(label)")
            }
        }
        if let value = udev["ACCEL_LOCATION"]?.lowercased() {
            if value == "display" || value == "lid" { return (.display, "udev ACCEL_LOCATION=\(value)") }
            if value == "base" { return (.base, "udev ACCEL_LOCATION=\(value)") }
        }
        return nil
    }

    /// Describes every accelerometer in the context, in device order.
    public static func discover(in context: any IIOContextHandle, logger: Logger) -> [Accelerometer] {
        let devices = context.devices
        return devices.filter(isAccelerometer).map { describe($0, among: devices, context: context, logger: logger) }
    }

    /// Describes one accelerometer. Unreadable or malformed attributes are logged and replaced by defaults.
    public static func describe(
        _ device: IIODeviceInfo, among devices: [IIODeviceInfo], context: any IIOContextHandle, logger: Logger
    ) -> Accelerometer {
        func read(_ attribute: String) -> String? {
            do {
                return try context.read(device: device.id, attribute: attribute)
            } catch {
                logger.debug("cannot read attribute", metadata: ["device": "\(device.id)", "error": "\(error)"])
                return nil
            }
        }
        var accelerometer = Accelerometer(id: device.id, name: device.name, label: device.label)
        accelerometer.hasRawAttributes = hasRawAttributes(device)
        let elements = accelScanElements(device)
        accelerometer.scanElements = elements.count == 3 ? elements : []
        accelerometer.timestampElement = device.scanElements.first { $0.channel == "timestamp" }
        if accelerometer.canBuffer, let trigger = trigger(for: device, among: devices) {
            accelerometer.triggerID = trigger.id
            accelerometer.triggerName = trigger.name
        }

        let (scaling, problems) = ChannelScaling.lookup(attributes: device.attributes, read: read)
        accelerometer.scaling = scaling
        for problem in problems {
            logger.warning(
                "ignoring a scaling attribute", metadata: ["device": "\(device.id)", "problem": "\(problem)"])
        }

        let udev = context.udevProperties(device: device.id)
        var matrixFound = false
        if let text = udev["ACCEL_MOUNT_MATRIX"] {
            do {
                accelerometer.mountMatrix = try MountMatrix(parsing: text)
                accelerometer.mountMatrixSource = "udev ACCEL_MOUNT_MATRIX"
                matrixFound = true
            } catch {
                logger.warning(
                    "ignoring udev's mount matrix", metadata: ["device": "\(device.id)", "error": "\(error)"])
            }
        }
        for name in MountMatrix.attributeCandidates where !matrixFound && device.attributes.contains(name) {
            guard let text = read(name) else { continue }
            do {
                accelerometer.mountMatrix = try MountMatrix(parsing: text)
                accelerometer.mountMatrixSource = name
                matrixFound = true
            } catch {
                logger.warning("ignoring a mount matrix", metadata: ["device": "\(device.id)", "error": "\(error)"])
            }
        }

        if let (location, source) = location(label: device.label, udev: udev) {
            accelerometer.location = location
            accelerometer.locationSource = source
        }

        for name in ["in_accel_sampling_frequency", "sampling_frequency"] where device.attributes.contains(name) {
            accelerometer.frequencyAttribute = name
            if device.attributes.contains(name + "_available") {
                accelerometer.availableFrequenciesAttribute = name + "_available"
            }
            break
        }
        return accelerometer
    }
}
