// SPDX-License-Identifier: Apache-2.0
import ShakeDetection
import ShakeProtocol
import SystemdSupport

/// The values of the shake object's properties on D-Bus, taken from the daemon's state, and which of them
/// changed since they were last announced. No I/O: the daemon sends `PropertiesChanged` for the names returned.
struct BusProperties: Sendable, Equatable {
    var hasAccelerometer = false
    var shaking = false
    var sensor = ""
    var sensitivity = ""

    init() {}

    init(sensor state: SensorState, shaking: Bool, sensitivity: DetectorSettings.Sensitivity) {
        hasAccelerometer = state.isKnown
        self.shaking = shaking
        sensor = state.isKnown ? Self.describe(state.info) : ""
        self.sensitivity = sensitivity.rawValue
    }

    /// `accel_3d (iio:device0)`, or the trace file of a replay.
    static func describe(_ info: SensorInfo) -> String {
        switch (info.name, info.id) {
        case (let name?, let id?) where name != id: return "\(name) (\(id))"
        case (let name?, _): return name
        case (nil, let id?): return id
        case (nil, nil): return info.source
        }
    }

    /// The property names whose value differs from `old`, in the interface's order.
    func changes(from old: BusProperties) -> [String] {
        var names: [String] = []
        if hasAccelerometer != old.hasAccelerometer { names.append("HasAccelerometer") }
        if shaking != old.shaking { names.append("Shaking") }
        if sensor != old.sensor { names.append("Sensor") }
        if sensitivity != old.sensitivity { names.append("Sensitivity") }
        return names
    }

    func bool(_ name: String) -> Bool? {
        switch name {
        case "HasAccelerometer": hasAccelerometer
        case "Shaking": shaking
        default: nil
        }
    }

    func string(_ name: String) -> String? {
        switch name {
        case "Sensor": sensor
        case "Sensitivity": sensitivity
        default: nil
        }
    }
}

extension BusObject.Shake {
    /// The `Shake` signal of a detector event and the sequence number subscribers of the socket saw it under.
    init(_ event: ShakeEvent, seq: UInt64) {
        switch event {
        case .began(let time):
            self.init(phase: "began", seq: seq, time: time)
        case .ended(let summary):
            self.init(
                phase: "ended", seq: seq, time: summary.time, duration: summary.duration, peak: summary.peak,
                axis: summary.axis.rawValue, reversals: UInt32(clamping: summary.reversals))
        case .cancelled(let time, let began, let reason, let detail):
            self.init(
                phase: "cancelled", seq: seq, time: time, duration: time - began, reason: reason.rawValue,
                detail: detail?.rawValue ?? "")
        }
    }
}
