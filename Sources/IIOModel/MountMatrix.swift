// SPDX-License-Identifier: Apache-2.0
import NumberFormat
public import ShakeDetection

/// The rotation from the sensor's axes to the device's, from the kernel's `mount_matrix` attributes or udev's
/// `ACCEL_MOUNT_MATRIX`.
///
/// Both spell it `x1, y1, z1; x2, y2, z2; x3, y3, z3`, row by row, and the device-frame vector is the matrix
/// times the sensor-frame vector: `device.x = x1 * sensor.x + y1 * sensor.y + z1 * sensor.z`, and so on.
public struct MountMatrix: Sendable, Hashable, CustomStringConvertible {
    /// Rows of the matrix.
    public var rows: [Vector3]

    public init(rows: [Vector3]) {
        precondition(rows.count == 3)
        self.rows = rows
    }

    public static let identity = MountMatrix(rows: [
        Vector3(x: 1, y: 0, z: 0), Vector3(x: 0, y: 1, z: 0), Vector3(x: 0, y: 0, z: 1),
    ])

    /// Parses `x1, y1, z1; x2, y2, z2; x3, y3, z3` (white space free; commas may also separate rows).
    /// - Throws: ``Invalid`` when it is not nine finite numbers or a row is zero (no rotation does that).
    public init(parsing text: String) throws(Invalid) {
        let separators: Set<Character> = [",", ";", " ", "\t", "\n"]
        let fields = text.split(whereSeparator: { separators.contains($0) })
        guard fields.count == 9 else { throw Invalid(text: text, reason: "expected 9 numbers, found \(fields.count)") }
        var numbers: [Double] = []
        for field in fields {
            guard let number = Double(field), number.isFinite else {
                throw Invalid(text: text, reason: "'\(field)' is not a number")
            }
            numbers.append(number)
        }
        let rows = (0..<3).map { Vector3(x: numbers[3 * $0], y: numbers[3 * $0 + 1], z: numbers[3 * $0 + 2]) }
        guard rows.allSatisfy({ $0.lengthSquared > 0 }) else {
            throw Invalid(text: text, reason: "a row is all zeros")
        }
        self.rows = rows
    }

    /// The sensor-frame vector in the device's frame.
    @inlinable
    public func apply(_ vector: Vector3) -> Vector3 {
        Vector3(x: rows[0].dot(vector), y: rows[1].dot(vector), z: rows[2].dot(vector))
    }

    /// The transpose: the inverse of a rotation (device frame back to the sensor's).
    public var transposed: MountMatrix {
        MountMatrix(rows: [
            Vector3(x: rows[0].x, y: rows[1].x, z: rows[2].x),
            Vector3(x: rows[0].y, y: rows[1].y, z: rows[2].y),
            Vector3(x: rows[0].z, y: rows[1].z, z: rows[2].z),
        ])
    }

    public var isIdentity: Bool { self == .identity }

    /// The matrix in the kernel's spelling.
    public var description: String {
        rows.map { row in [row.x, row.y, row.z].map { DecimalText.format($0) }.joined(separator: ", ") }
            .joined(separator: "; ")
    }

    /// The sysfs names that may hold the matrix, in the order they are tried.
    public static let attributeCandidates = ["in_accel_mount_matrix", "mount_matrix", "in_mount_matrix"]

    /// A matrix that cannot be parsed.
    public struct Invalid: Error, Sendable, Hashable, CustomStringConvertible {
        public var text: String
        public var reason: String
        public var description: String { "mount matrix '\(text)': \(reason)" }
    }
}
