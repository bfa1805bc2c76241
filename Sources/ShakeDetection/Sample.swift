// SPDX-License-Identifier: Apache-2.0
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

    /// The largest acceleration, in m/s², that a sample may carry: about 1,000 g, beyond the range of any
    /// accelerometer a device would shake.
    public static let plausibleLimit = 10_000.0

    /// Whether the detector can use the sample: a finite time, and an acceleration whose length is within
    /// ``plausibleLimit`` (so finite on every axis).
    @inlinable
    public var isUsable: Bool {
        // One comparison, which a NaN fails: a time that is not finite makes `time - time` a NaN, and so the sum;
        // a component that is not finite, or too large, makes the squared length too large or a NaN. Fewer
        // instructions on every sample than testing each of the four numbers.
        acceleration.lengthSquared + (time - time) <= Self.plausibleLimit * Self.plausibleLimit
    }

    /// Whether the time and all three components are finite numbers.
    @inlinable
    public var isFinite: Bool {
        time.isFinite && acceleration.x.isFinite && acceleration.y.isFinite && acceleration.z.isFinite
    }
}
