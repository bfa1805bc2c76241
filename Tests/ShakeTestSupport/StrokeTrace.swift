// SPDX-License-Identifier: Apache-2.0
import Foundation
public import ShakeDetection

/// One stroke of a hand-made trace: a half-sine of acceleration along a direction. A stroke with zero peak is
/// a pause.
public struct Stroke: Sendable {
    public var direction: Vector3
    public var peak: Double
    public var duration: Double

    public init(_ direction: Vector3, peak: Double, duration: Double) {
        self.direction = direction
        self.peak = peak
        self.duration = duration
    }

    public static func pause(_ duration: Double) -> Stroke {
        Stroke(Vector3(x: 1, y: 0, z: 0), peak: 0, duration: duration)
    }
}

/// Builds a trace from strokes, one after the other, on a device at rest reading `gravity`, with still time
/// before and after.
public func strokeTrace(
    _ strokes: [Stroke], gravity: Vector3 = Vector3(x: 0, y: 0, z: 9.81), rate: Double = 100,
    before: Double = 1.5, after: Double = 1.5
) -> [Sample] {
    let total = before + strokes.reduce(0) { $0 + $1.duration } + after
    return (0...Int(total * rate)).map { index in
        let time = Double(index) / rate
        var offset = time - before
        var linear = Vector3.zero
        for stroke in strokes {
            if offset >= 0 && offset < stroke.duration {
                linear = stroke.direction * (stroke.peak * sin(.pi * offset / stroke.duration))
                break
            }
            offset -= stroke.duration
        }
        return Sample(time: time, acceleration: gravity + linear)
    }
}

public extension Vector3 {
    static let plusX = Vector3(x: 1, y: 0, z: 0)
    static let minusX = Vector3(x: -1, y: 0, z: 0)
    static let plusZ = Vector3(x: 0, y: 0, z: 1)
    static let minusZ = Vector3(x: 0, y: 0, z: -1)
}
