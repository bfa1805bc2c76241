/// One accelerometer reading: the time on the sensor's clock and the acceleration on the device's three axes.
///
/// Acceleration is in m/s² with gravity included, as an accelerometer at rest reports it (about 9.81 m/s² pointing
/// away from the ground).
public struct Sample: Sendable, Hashable {
    /// Seconds on the sensor's clock. Only differences between samples matter.
    public var time: Double
    /// Acceleration in m/s², gravity included, in the device's frame.
    public var acceleration: Vector3

    public init(time: Double, acceleration: Vector3) {
        self.time = time
        self.acceleration = acceleration
    }

    public init(time: Double, x: Double, y: Double, z: Double) {
        self.init(time: time, acceleration: Vector3(x: x, y: y, z: z))
    }

    /// The largest acceleration, in m/s² on any axis, that a sample may carry: about 1,000 g, beyond the range of
    /// any accelerometer a device would shake.
    public static let plausibleLimit = 10_000.0

    /// Whether the detector can use the sample: finite time, and finite components within ``plausibleLimit``.
    @inlinable
    public var isUsable: Bool {
        // (Comparisons, which a NaN fails, rather than `isFinite`: fewer instructions on every sample.)
        abs(time) < .infinity && abs(acceleration.x) <= Self.plausibleLimit
            && abs(acceleration.y) <= Self.plausibleLimit && abs(acceleration.z) <= Self.plausibleLimit
    }

    /// Whether the time and all three components are finite numbers.
    @inlinable
    public var isFinite: Bool {
        time.isFinite && acceleration.x.isFinite && acceleration.y.isFinite && acceleration.z.isFinite
    }
}
