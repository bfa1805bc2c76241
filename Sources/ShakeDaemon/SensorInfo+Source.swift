// SPDX-License-Identifier: Apache-2.0
public import IIOModel
import NumberFormat
public import ShakeProtocol

/// The sensor as `hello`, `status` and the bus describe it, following what the source reports: the sensor in use
/// stays while capture is off for lack of listeners (marked idle), and is forgotten only when its stream breaks.
/// No I/O: the source's loop keeps the value in the ``StatusBoard`` and sends the returned lines to systemd.
extension SensorInfo {
    /// The sensor in use, before any state.
    static func iio(_ accelerometer: Accelerometer) -> SensorInfo {
        SensorInfo(
            source: "iio", name: accelerometer.name ?? accelerometer.label, id: accelerometer.id,
            location: accelerometer.location?.rawValue)
    }

    /// Before the source has reported anything: the accelerometer the daemon found as it started, if it looked
    /// (a local sensor, found without opening it), in the state `starting`; else no sensor yet, `starting` too.
    /// So the first `status` or `hello` after a socket activation says the daemon is starting, not that there is
    /// no sensor.
    public static func starting(_ found: Accelerometer?) -> SensorInfo {
        var info = found.map(SensorInfo.iio) ?? SensorInfo(source: "none")
        info.state = "starting"
        return info
    }

    /// Capture started from `accelerometer` at `rate` Hz.
    /// - Returns: systemd's status line.
    public mutating func capturing(_ accelerometer: Accelerometer, rate: Double) -> String {
        self = .iio(accelerometer)
        self.rate = rate
        state = "capturing"
        return "capturing from \(accelerometer.displayName) at \(DecimalText.format(rate)) Hz"
    }

    /// Another program holds `accelerometer`; `advice` says who and what to do.
    /// - Returns: systemd's status line.
    public mutating func busy(_ accelerometer: Accelerometer, advice: String) -> String {
        self = .iio(accelerometer)
        state = "busy"
        reason = advice
        return advice
    }

    /// There is no sensor to read, for `reason`: the source waits for one.
    /// - Returns: systemd's status line.
    public mutating func waiting(_ reason: String) -> String {
        self = SensorInfo(source: "none", state: "waiting", reason: reason)
        return reason
    }

    /// Capture went off while nobody listens. A sensor known from an earlier capture stays; before the first,
    /// `lookUp` finds the one capture would use, without opening it. A replay is left as it is.
    public mutating func idle(lookUp: () -> Accelerometer?) {
        guard source != "replay" else { return }
        if source != "iio", let found = lookUp() { self = .iio(found) }
        guard source == "iio" else { return }
        state = "idle"
        reason = nil
    }

    /// The stream broke (the sensor vanished or failed): the sensor is forgotten; a replay stays.
    public mutating func streamBroke() {
        if source != "replay" { self = .none }
    }
}
