// SPDX-License-Identifier: Apache-2.0
/// A uinput accelerometer: `INPUT_PROP_ACCELEROMETER` with `ABS_X/Y/Z` in ``AccelerometerUnits`` (1 g = 256).
///
/// udev's input_id builtin marks it `ID_INPUT_ACCELEROMETER=1`, and iio-sensor-proxy reads it like a built-in
/// one (with `EVIOCGABS`, so the latest values written are what it sees). Destroyed on ``close()`` or deinit.
/// Not thread-safe: one owner updates it.
public final class VirtualAccelerometer {
    /// `phys` of every accelerometer shaked makes, which the udev rule matches.
    public static let phys = "shaked/accelerometer-relay"

    private let device: UInputDevice
    private var last: (x: Int32, y: Int32, z: Int32)?

    /// The device's name under /sys/devices/virtual/input (`input7`), when the kernel told it.
    public var systemName: String? { device.systemName }
    public let name: String

    /// Creates the device.
    /// - Parameters:
    ///   - name: the input device's name (the kernel keeps at most 79 bytes).
    ///   - phys: its `phys`, for udev rules to match.
    ///   - path: the uinput node.
    public init(
        name: String, phys: String = VirtualAccelerometer.phys, path: String = "/dev/uinput"
    ) throws(UInputError) {
        self.name = name
        let axes = AbsoluteAxis.allCases.map { axis in
            UInputDevice.Axis(
                axis: axis, range: AccelerometerUnits.range, resolution: AccelerometerUnits.perG, value: 0)
        }
        device = try UInputDevice(
            path: path, identity: .init(name: name, phys: phys), properties: [Self.accelerometerProperty], axes: axes)
    }

    /// `INPUT_PROP_ACCELEROMETER`.
    static let accelerometerProperty: Int32 = 0x06

    /// Reports an acceleration in m/s² (axes and signs as the IIO device gives them). Writes nothing when the
    /// units are those of the last report.
    public func update(x: Double, y: Double, z: Double) throws(UInputError) {
        try report(
            x: AccelerometerUnits.units(metresPerSecondSquared: x),
            y: AccelerometerUnits.units(metresPerSecondSquared: y),
            z: AccelerometerUnits.units(metresPerSecondSquared: z))
    }

    /// Reports values already in ``AccelerometerUnits`` (1 g = 256). Writes nothing when they are those of the
    /// last report.
    public func report(x: Int32, y: Int32, z: Int32) throws(UInputError) {
        let units = (x: x, y: y, z: z)
        if let last, last == units { return }
        try device.write(Self.events(units))
        last = units
    }

    /// The events of one report: the three axes, then `SYN_REPORT`.
    static func events(_ units: (x: Int32, y: Int32, z: Int32)) -> [InputEvent] {
        [.absolute(.x, units.x), .absolute(.y, units.y), .absolute(.z, units.z), .report]
    }

    /// Destroys the device. Idempotent.
    public func close() { device.destroy() }
}
