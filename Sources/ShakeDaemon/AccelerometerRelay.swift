// SPDX-License-Identifier: Apache-2.0
public import IIOModel
import NumberFormat
public import ShakeDetection
import UInput

/// What the relay to iio-sensor-proxy does, decided without a device: which uinput accelerometer to make for
/// the sensor in use (its name and the udev properties it carries over), and which readings to send it, at most
/// one per ``interval`` of the sensor's clock, and only one that differs from the last sent by more than
/// ``tolerance`` on an axis: a device lying still costs no writes. The ``RelayLink`` acts on the returned actions
/// on the source's thread (it writes the readings itself, and hands the device to make or remove to the
/// ``RelayService``).
///
/// iio-sensor-proxy reading the IIO device itself sees the sensor's own axes, in m/s² (raw × scale), and
/// applies the mount matrix and location it finds as the device's udev properties. The relay gives it the same:
/// the samples, which arrive in the device's frame, are turned back into the sensor's (the matrix's transpose,
/// its inverse for a rotation), in units of 1 g = 256, and the matrix and location go with the input device.
public struct AccelerometerRelay: Sendable {
    /// The uinput accelerometer for one sensor.
    public struct Device: Sendable, Hashable {
        /// The input device's name: the IIO device's, so that a user sees which sensor it stands for.
        public var name: String
        /// udev properties for the input device: `ACCEL_MOUNT_MATRIX` always, `ACCEL_LOCATION` when known.
        public var properties: [String: String]
        /// The IIO device it stands for (`iio:device0`), for the log.
        public var source: String
    }

    public enum Action: Sendable, Hashable {
        /// Make the uinput accelerometer (after destroying any other).
        case create(Device)
        /// Report these ABS_X/Y/Z values (1 g = 256, the sensor's axes).
        case update(x: Int32, y: Int32, z: Int32)
        /// Destroy the uinput accelerometer: the sensor is no longer in use.
        case destroy
    }

    /// The least time between two readings, seconds on the sensor's clock. iio-sensor-proxy reads every 700 ms
    /// while a client claims the sensor; 5 a second keeps orientation within one of its reads.
    public let interval: Double
    /// The device made, and the matrix its readings are turned back with.
    private var current: (device: Device, matrix: MountMatrix)?
    /// The largest change on every axis, in units of 1 g = 256, that is not sent: 8 is 1/32 g, under 2 degrees of
    /// tilt, where iio-sensor-proxy's orientations are tens of degrees apart, and above a still sensor's noise.
    public let tolerance: Int32
    private var lastSent: Double?
    private var lastValues: (x: Int32, y: Int32, z: Int32)?

    public init(interval: Double = 0.2, tolerance: Int32 = 8) {
        self.interval = interval
        self.tolerance = max(0, tolerance)
    }

    /// The lowest sampling rate that serves the relay, Hz.
    public static let minimumRate = 5.0

    /// The device the relay stands for now, if any.
    public var device: Device? { current?.device }

    /// Capture started from `accelerometer`. The same sensor again (capture resumed, at another rate) keeps the
    /// device, so that iio-sensor-proxy does not see it vanish; another sensor replaces it.
    public mutating func sensorChanged(_ accelerometer: Accelerometer) -> Action? {
        lastSent = nil
        let device = Self.device(for: accelerometer)
        if let current, current.device == device, current.matrix == accelerometer.mountMatrix { return nil }
        lastValues = nil
        current = (device, accelerometer.mountMatrix)
        return .create(device)
    }

    /// There is no sensor any more (it vanished, and the source waits for one), or the relay stops.
    public mutating func sensorGone() -> Action? {
        lastSent = nil
        lastValues = nil
        guard current != nil else { return nil }
        current = nil
        return .destroy
    }

    /// A sample in the device's frame: the reading to send, if one is due.
    public mutating func sample(_ sample: Sample) -> Action? {
        guard let matrix = current?.matrix, sample.isUsable else { return nil }
        // A new stream's clock may start anywhere: a time before the last one sent starts the pacing again.
        // (A microsecond's tolerance: sample times are sums of floating-point periods.)
        if let lastSent, sample.time >= lastSent, sample.time - lastSent < interval - 1e-6 { return nil }
        let sensor = matrix.transposed.apply(sample.acceleration)
        let values = (
            x: AccelerometerUnits.units(metresPerSecondSquared: sensor.x),
            y: AccelerometerUnits.units(metresPerSecondSquared: sensor.y),
            z: AccelerometerUnits.units(metresPerSecondSquared: sensor.z)
        )
        if let last = lastValues, abs(Int64(values.x) - Int64(last.x)) <= Int64(tolerance),
            abs(Int64(values.y) - Int64(last.y)) <= Int64(tolerance),
            abs(Int64(values.z) - Int64(last.z)) <= Int64(tolerance)
        {
            return nil
        }
        lastSent = sample.time
        lastValues = values
        return .update(x: values.x, y: values.y, z: values.z)
    }

    /// The input device for an accelerometer.
    public static func device(for accelerometer: Accelerometer) -> Device {
        let base = accelerometer.name ?? accelerometer.label ?? accelerometer.id
        var properties = ["ACCEL_MOUNT_MATRIX": udevSpelling(accelerometer.mountMatrix)]
        if let location = accelerometer.location { properties["ACCEL_LOCATION"] = location.rawValue }
        return Device(name: deviceName(base), properties: properties, source: accelerometer.id)
    }

    /// The longest name uinput keeps (`UINPUT_MAX_NAME_SIZE`, 80 bytes with the terminating zero).
    static let longestName = 79
    static let nameSuffix = " (shaked relay)"

    /// `NAME (shaked relay)`: the sensor's name as the driver gave it, with every control character (a newline
    /// would reach the kernel's device name, udev's events and the logs of whoever lists input devices) made a
    /// `?`, and shortened, whole characters at a time, so that the suffix always fits in what uinput keeps.
    static func deviceName(_ base: String) -> String {
        var name = ""
        var bytes = 0
        for scalar in base.unicodeScalars {
            let shown: Unicode.Scalar =
                scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) ? "?" : scalar
            let size = String(shown).utf8.count
            guard bytes + size <= longestName - nameSuffix.utf8.count else { break }
            name.unicodeScalars.append(shown)
            bytes += size
        }
        return name + nameSuffix
    }

    /// `1,0,0;0,1,0;0,0,1`: udev's and iio-sensor-proxy's spelling, without spaces so that a udev properties
    /// file needs no quoting.
    static func udevSpelling(_ matrix: MountMatrix) -> String {
        matrix.rows.map { row in [row.x, row.y, row.z].map { DecimalText.format($0) }.joined(separator: ",") }
            .joined(separator: ";")
    }

    /// The contents of the properties file the udev rule imports for the relay's input device.
    public static func propertiesFile(_ device: Device) -> String {
        device.properties.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)\n" }.joined()
    }
}
