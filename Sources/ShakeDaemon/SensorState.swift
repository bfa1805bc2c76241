// SPDX-License-Identifier: Apache-2.0
import IIOModel
import NumberFormat
import ShakeProtocol

/// The daemon's sensor as it follows what the source reports: the sensor in use stays while capture is off for
/// lack of listeners (idle), and is forgotten only when it vanishes or fails (a break in the stream within a
/// capture that goes on, such as a sleep, keeps it). A value of its own, decided on by
/// case, not by comparing the wire's strings; ``info`` is what `hello`, `status` and the bus say of it. No I/O:
/// the source's loop keeps it in the ``StatusBoard`` and sends the returned lines to systemd.
enum SensorState: Sendable, Equatable {
    /// No sensor known (before the source reported one, or after it vanished or failed).
    case none
    /// Before the source has reported anything: the accelerometer found as the daemon started, if it looked (a
    /// local sensor, found without opening it). So the first `status` or `hello` after a socket activation says
    /// the daemon is starting, not that there is no sensor.
    case starting(Accelerometer?)
    /// Capturing from the accelerometer at `rate` Hz.
    case capturing(Accelerometer, rate: Double)
    /// Capture is off while nobody listens; the sensor (and its rate, when it captured) is kept.
    case idle(Accelerometer, rate: Double?)
    /// Another program holds the accelerometer; `advice` says who and what to do.
    case busy(Accelerometer, advice: String)
    /// There is no sensor to read, for `reason`: the source waits for one.
    case waiting(reason: String)
    /// A trace file played as the source, at `rate` samples a second once it is read.
    case replaying(path: String, rate: Double?)

    /// The accelerometer in use or found, if any.
    var accelerometer: Accelerometer? {
        switch self {
        case .starting(let found): found
        case .capturing(let accelerometer, _), .idle(let accelerometer, _), .busy(let accelerometer, _):
            accelerometer
        case .none, .waiting, .replaying: nil
        }
    }

    /// Whether there is a sensor to name (a trace counts).
    var isKnown: Bool {
        if case .replaying = self { return true }
        return accelerometer != nil
    }

    /// The sensor as the log names it: its IIO id, or the trace file.
    var logName: String? {
        if case .replaying(let path, _) = self { return path }
        return accelerometer.map { $0.id }
    }

    /// Capture started from `accelerometer` at `rate` Hz.
    /// - Returns: systemd's status line.
    mutating func capturing(_ accelerometer: Accelerometer, rate: Double) -> String {
        self = .capturing(accelerometer, rate: rate)
        return "capturing from \(accelerometer.displayName) at \(DecimalText.format(rate)) Hz"
    }

    /// Another program holds `accelerometer`; `advice` says who and what to do.
    /// - Returns: systemd's status line.
    mutating func busy(_ accelerometer: Accelerometer, advice: String) -> String {
        self = .busy(accelerometer, advice: advice)
        return advice
    }

    /// There is no sensor to read, for `reason`: the source waits for one.
    /// - Returns: systemd's status line.
    mutating func waiting(_ reason: String) -> String {
        self = .waiting(reason: reason)
        return reason
    }

    /// Capture went off while nobody listens. A sensor known from an earlier capture stays; before the first,
    /// `lookUp` finds the one capture would use, without opening it. A replay is left as it is.
    mutating func idle(lookUp: () -> Accelerometer?) {
        switch self {
        case .replaying:
            return
        case .capturing(let accelerometer, let rate), .idle(let accelerometer, let rate?):
            self = .idle(accelerometer, rate: rate)
        case .idle(let accelerometer, nil), .busy(let accelerometer, _), .starting(let accelerometer?):
            self = .idle(accelerometer, rate: nil)
        case .none, .starting(nil), .waiting:
            if let found = lookUp() { self = .idle(found, rate: nil) }
        }
    }

    /// The stream broke (the sensor vanished or failed): the sensor is forgotten; a replay stays.
    mutating func streamBroke() {
        if case .replaying = self { return }
        self = .none
    }

    /// What `hello`, `status` and the bus say of the sensor.
    var info: SensorInfo {
        switch self {
        case .none: SensorInfo(source: "none")
        case .starting(nil): SensorInfo(source: "none", state: "starting")
        case .starting(let found?): Self.iio(found, state: "starting")
        case .capturing(let accelerometer, let rate): Self.iio(accelerometer, rate: rate, state: "capturing")
        case .idle(let accelerometer, let rate): Self.iio(accelerometer, rate: rate, state: "idle")
        case .busy(let accelerometer, let advice): Self.iio(accelerometer, state: "busy", reason: advice)
        case .waiting(let reason): SensorInfo(source: "none", state: "waiting", reason: reason)
        case .replaying(let path, let rate): SensorInfo(source: "replay", name: path, rate: rate, state: "replaying")
        }
    }

    private static func iio(
        _ accelerometer: Accelerometer, rate: Double? = nil, state: String, reason: String? = nil
    ) -> SensorInfo {
        SensorInfo(
            source: "iio", name: accelerometer.name ?? accelerometer.label, id: accelerometer.id,
            location: accelerometer.location?.rawValue, rate: rate, state: state, reason: reason)
    }
}
