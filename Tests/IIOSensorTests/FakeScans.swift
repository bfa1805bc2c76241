// SPDX-License-Identifier: Apache-2.0
import IIOModel
import ShakeDetection

/// The scans of the fake accelerometer (`FakeWorld.Device.accelerometer`: x, y and z as s16 counts of 0.01 m/s²,
/// then the timestamp), as the tests hand them to its buffer.
enum FakeScans {
    static let layout: ScanLayout = {
        let type = ScanType(bits: 16, storageBits: 16)
        return ScanLayout([(.x, 0, type), (.y, 1, type), (.z, 2, type), (.timestamp, 3, .timestamp)])
    }()

    /// Buffer reads of `samples`, 20 scans each.
    static func reads(_ samples: [Sample]) -> [[UInt8]] {
        let scans = samples.map { sample in
            layout.encode(
                x: Int64((sample.acceleration.x / 0.01).rounded()), y: Int64((sample.acceleration.y / 0.01).rounded()),
                z: Int64((sample.acceleration.z / 0.01).rounded()), timestamp: Int64((sample.time * 1e9).rounded()))
        }
        return stride(from: 0, to: scans.count, by: 20).map { Array(scans[$0..<min($0 + 20, scans.count)].joined()) }
    }
}
