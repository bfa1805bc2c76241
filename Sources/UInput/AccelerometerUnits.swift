// SPDX-License-Identifier: Apache-2.0
/// Acceleration in the units an evdev accelerometer reports, as iio-sensor-proxy reads them: 1 g (9.81 m/s²) is
/// 256, axes and signs as the IIO device gives them (iio-sensor-proxy applies the mount matrix itself, from the
/// input device's `ACCEL_MOUNT_MATRIX`). Pure.
public enum AccelerometerUnits {
    /// Units per g.
    public static let perG: Int32 = 256
    /// The g iio-sensor-proxy divides by (its drivers use 9.81, not the standard 9.80665).
    public static let standardGravity = 9.81
    /// The axes' range: ±16 g, more than any phone's accelerometer, so a hard shake is not clipped.
    public static let range: ClosedRange<Int32> = -16 * perG...16 * perG

    /// m/s² → units, rounded to the nearest and clamped to ``range``; a NaN reads as 0.
    public static func units(metresPerSecondSquared value: Double) -> Int32 {
        guard !value.isNaN else { return 0 }
        let scaled = (value * Double(perG) / standardGravity).rounded()
        return Int32(min(max(scaled, Double(range.lowerBound)), Double(range.upperBound)))
    }

    /// Units → m/s², the inverse (what iio-sensor-proxy computes from an `EVIOCGABS` value).
    public static func metresPerSecondSquared(units: Int32) -> Double {
        Double(units) * standardGravity / Double(perG)
    }
}
