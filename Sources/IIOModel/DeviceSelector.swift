// SPDX-License-Identifier: Apache-2.0
/// Which accelerometer to use: what `--device` asks for, and the choice among those present.
public enum DeviceRequest: Sendable, Hashable, CustomStringConvertible {
    /// The display's (lid's) sensor if there is one, else the only or first accelerometer.
    case automatic
    /// The sensor at a location (`display`, `base`).
    case location(Accelerometer.Location)
    /// A device by its id (`iio:device1`).
    case id(String)
    /// A device by its name or label (`mma8452`, `accel-display`).
    case name(String)

    /// Parses `--device`: `display`, `base`, `iio:deviceN`, or a name or label.
    public init(parsing text: String) {
        let trimmed = text.trimmingWhitespace()
        if trimmed.isEmpty || trimmed == "auto" {
            self = .automatic
        } else if trimmed == "lid" {
            self = .location(.display)
        } else if let location = Accelerometer.Location(rawValue: trimmed) {
            self = .location(location)
        } else if trimmed.hasPrefix("iio:device") {
            self = .id(trimmed)
        } else {
            self = .name(trimmed)
        }
    }

    public var description: String {
        switch self {
        case .automatic: "automatic"
        case .location(let location): location.rawValue
        case .id(let id): id
        case .name(let name): name
        }
    }
}

/// The choice of an accelerometer, with the reason for the log.
public struct DeviceSelection: Sendable, Hashable {
    public var accelerometer: Accelerometer
    public var reason: String

    /// Chooses among the accelerometers present.
    /// - Returns: nil when none matches the request (none present, or not the one asked for).
    public static func choose(from accelerometers: [Accelerometer], request: DeviceRequest) -> DeviceSelection? {
        let ordered = accelerometers.sorted { ($0.number ?? Int.max, $0.id) < ($1.number ?? Int.max, $1.id) }
        switch request {
        case .automatic:
            if let display = ordered.first(where: { $0.location == .display }) {
                let source = display.locationSource.map { " (\($0))" } ?? ""
                return DeviceSelection(accelerometer: display, reason: "the display's accelerometer\(source)")
            }
            guard let first = ordered.first else { return nil }
            let reason =
                ordered.count == 1
                ? "the only accelerometer" : "the first of \(ordered.count) accelerometers, none in the display"
            return DeviceSelection(accelerometer: first, reason: reason)
        case .location(let location):
            return ordered.first { $0.location == location }.map {
                DeviceSelection(
                    accelerometer: $0,
                    reason: "--device \(location.rawValue) (\($0.locationSource ?? location.rawValue))")
            }
        case .id(let id):
            return ordered.first { $0.id == id }.map { DeviceSelection(accelerometer: $0, reason: "--device \(id)") }
        case .name(let name):
            return ordered.first { $0.name == name || $0.label == name }.map {
                DeviceSelection(accelerometer: $0, reason: "--device \(name)")
            }
        }
    }
}

extension Accelerometer {
    /// The N of `iio:deviceN`.
    var number: Int? { IIODeviceInfo(id: id).number }
}
