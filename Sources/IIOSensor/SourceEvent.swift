// SPDX-License-Identifier: Apache-2.0
public import IIOModel
public import ShakeDetection

/// What the capture loop reports, in the order it happens: samples, and the sensor's comings and goings. One
/// value for everything that flows out of ``SensorSource/run(wakeup:lowestRate:report:)``, so that its caller
/// handles it in one place, on the capture's own thread.
public enum SourceEvent: Sendable {
    /// A sample, in m/s² on the device's axes (its mount matrix applied), time in seconds on the sensor's clock.
    case sample(Sample)
    /// Capture started from `accelerometer` at `rate` Hz.
    case capturing(Accelerometer, rate: Double)
    /// Capture from the sensor it started from ended (stopped, broken, or another sensor or driver chosen).
    case stopped
    /// The loop waits for a sensor (none present, none matching, or none readable), for `reason`; reported again
    /// only when the reason changes.
    case waiting(reason: String)
    /// The sensor is busy (EBUSY: another program holds its node, buffer or trigger): `advice` says who holds it
    /// and what to do. The loop retries with back-off.
    case busy(Accelerometer, advice: String)
    /// The stream broke (the sensor vanished or failed, or the source switched sensor or driver), for `reason`:
    /// the next sample starts a new stream. `sensorKept` when capture goes on from the same sensor (the system
    /// slept, the timestamps leapt, a silent buffer gave way to polling): the sensor is still the one in use.
    case broke(reason: String, sensorKept: Bool = false)
}
