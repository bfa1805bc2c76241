import Foundation
import Logging
import ServiceLifecycle
import UInput

/// The relay's decisions, made on the source's thread and carried to the ``RelayService``: the
/// ``AccelerometerRelay`` while the relay is on (nil once its device could not be made), and its actions.
final class RelayLink: Sendable {
    private let relay = Locked<AccelerometerRelay?>(AccelerometerRelay())
    private let stream = AsyncStream.makeStream(of: AccelerometerRelay.Action.self)
    private let capture: CaptureSwitch

    init(capture: CaptureSwitch) {
        self.capture = capture
    }

    var actions: AsyncStream<AccelerometerRelay.Action> { stream.stream }

    /// Runs a step of the relay (while it is on) and hands its action to the relay service.
    func act(_ step: (inout AccelerometerRelay) -> AccelerometerRelay.Action?) {
        let action = relay.withLock { relay -> AccelerometerRelay.Action? in
            guard relay != nil else { return nil }
            return step(&relay!)
        }
        if let action { stream.continuation.yield(action) }
    }

    /// The relay's device cannot be made: the relay stops, and with it capture for its sake.
    func failed() {
        relay.withLock { $0 = nil }
        capture.update { $0.relayChanged(false) }
    }

    /// No more actions: the service's loop ends.
    func finish() {
        stream.continuation.finish()
    }
}

/// The relay to iio-sensor-proxy: performs what ``AccelerometerRelay`` decided on the source's thread — makes
/// the uinput accelerometer (after writing the udev properties it carries over), reports readings to it, and
/// destroys it when the sensor goes or the daemon stops.
struct RelayService: Service {
    let link: RelayLink
    /// Where the udev rule (81-shaked-iio-sensor-proxy.rules) imports the input device's properties from.
    let propertiesPath: String
    let uinputPath: String
    let logger: Logger

    /// The path the shipped udev rule reads.
    static let defaultPropertiesPath = "/run/shaked/accelerometer-relay.properties"

    func run() async {
        var device: VirtualAccelerometer?
        var failures = 0
        for await action in link.actions.cancelOnGracefulShutdown() {
            switch action {
            case .create(let relay):
                device?.close()
                device = nil
                writeProperties(relay)
                do {
                    let made = try VirtualAccelerometer(name: relay.name, path: uinputPath)
                    device = made
                    logger.info(
                        "relaying the accelerometer to iio-sensor-proxy",
                        metadata: [
                            "device": "\(relay.source)", "input": "\(made.systemName ?? "unknown")",
                            "name": "\(relay.name)",
                            "mount_matrix": "\(relay.properties["ACCEL_MOUNT_MATRIX"] ?? "")",
                            "location": "\(relay.properties["ACCEL_LOCATION"] ?? "unknown")",
                        ])
                } catch {
                    logger.error(
                        "cannot make the relay's uinput accelerometer; iio-sensor-proxy gets no readings",
                        metadata: ["error": "\(error)", "path": "\(uinputPath)"])
                    // The relay cannot work (no /dev/uinput, or no right to it): capture stops for its sake.
                    link.failed()
                }
            case .update(let x, let y, let z):
                guard let current = device else { continue }
                do {
                    try current.report(x: x, y: y, z: z)
                    failures = 0
                } catch {
                    failures += 1
                    if failures == 1 {
                        logger.warning(
                            "cannot write to the relay's uinput accelerometer", metadata: ["error": "\(error)"])
                    }
                }
            case .destroy:
                if device != nil { logger.info("the relay's uinput accelerometer is removed") }
                device?.close()
                device = nil
            }
        }
        device?.close()
        try? FileManager.default.removeItem(atPath: propertiesPath)
    }

    /// Writes the properties before the device exists, so that udev finds them when it adds it. A file that
    /// cannot be written costs the matrix and location only: iio-sensor-proxy then assumes identity and display.
    private func writeProperties(_ relay: AccelerometerRelay.Device) {
        let text = AccelerometerRelay.propertiesFile(relay)
        do {
            try text.write(toFile: propertiesPath, atomically: true, encoding: .utf8)
        } catch {
            logger.warning(
                "cannot write the relay's udev properties; iio-sensor-proxy will assume no mount matrix",
                metadata: ["path": "\(propertiesPath)", "error": "\(error)"])
        }
    }
}
