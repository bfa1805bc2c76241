// SPDX-License-Identifier: Apache-2.0
import IIOModel
import Logging

/// Sets an accelerometer's measuring range (`in_accel_scale`) for a capture as `sensor.range` asks, from what
/// `in_accel_scale_available` offers, and puts the scale back when the capture ends. The choice is
/// ``SensorRange/choose(_:available:current:bits:)``'s; this shell reads, writes and logs.
enum RangeSetting {
    static let scaleAttribute = "in_accel_scale"
    static let availableAttribute = "in_accel_scale_available"

    /// Sets the range before capture starts (the kernel refuses a new scale while the buffer runs), and the
    /// accelerometer's scaling to the new scale.
    /// - Returns: the scale as found, to ``restore(_:of:context:logger:)`` when the capture ends; nil when nothing
    ///   was written.
    static func apply(
        _ request: SensorRange, to accelerometer: inout Accelerometer, context: any IIOContextHandle, logger: Logger
    ) -> String? {
        let device = accelerometer.id
        guard request != .keep else { return nil }
        // Only a scale shared by the three axes is chosen; a per-axis one would be left over the written one.
        let scaling = accelerometer.scaling
        guard [scaling.x, scaling.y, scaling.z].allSatisfy({ $0.scaleSource == scaleAttribute }) else {
            logger.debug(
                "leaving the sensor's range", metadata: ["device": "\(device)", "reason": "no in_accel_scale shared"])
            return nil
        }
        let found = try? context.read(device: device, attribute: scaleAttribute)
        let available = try? context.read(device: device, attribute: availableAttribute)
        let decision = SensorRange.choose(
            request, available: available, current: found, bits: accelerometer.scanElements.first?.type.bits)
        switch decision {
        case .leave(let reason, let range):
            // A sensor with one range (most HID sensors) is not worth a line at every capture.
            logger.log(
                level: available == nil ? .debug : .info,
                "leaving the sensor's range",
                metadata: [
                    "device": "\(device)", "range": "\(range.map { "±\(SensorRange.format($0)) g" } ?? "unknown")",
                    "reason": "\(reason)",
                ])
            return nil
        case .set(let scale, let range, let from, let widest):
            do {
                try context.write(device: device, attribute: scaleAttribute, value: scale.text)
            } catch {
                logger.warning(
                    "cannot set the sensor's range",
                    metadata: [
                        "device": "\(device)", "range": "±\(SensorRange.format(range)) g", "scale": "\(scale.text)",
                        "error": "\(error)",
                    ])
                return nil
            }
            // The scale as the kernel now says, which the samples are converted with.
            let now =
                (try? context.read(device: device, attribute: scaleAttribute)).flatMap {
                    Double($0.trimmingWhitespace())
                }.flatMap { $0.isFinite && $0 > 0 ? $0 : nil } ?? scale.value
            accelerometer.scaling.x.scale = now
            accelerometer.scaling.y.scale = now
            accelerometer.scaling.z.scale = now
            logger.info(
                "set the sensor's range",
                metadata: [
                    "device": "\(device)", "range": "±\(SensorRange.format(range)) g",
                    "was": "±\(SensorRange.format(from)) g", "scale": "\(scale.text)",
                    "asked": "\(request)\(widest ? " (the widest the sensor offers)" : "")",
                ])
            return found?.trimmingWhitespace()
        }
    }

    /// Puts back the scale found before the capture (after its buffer has stopped).
    static func restore(_ scale: String, of accelerometer: Accelerometer, context: any IIOContextHandle, logger: Logger)
    {
        do {
            try context.write(device: accelerometer.id, attribute: scaleAttribute, value: scale)
            logger.info(
                "restored the sensor's range", metadata: ["device": "\(accelerometer.id)", "scale": "\(scale)"])
        } catch {
            logger.warning(
                "cannot restore the sensor's range",
                metadata: ["device": "\(accelerometer.id)", "scale": "\(scale)", "error": "\(error)"])
        }
    }
}
