// SPDX-License-Identifier: Apache-2.0
/// A vector in the device's frame.
public struct Vector3: Sendable, Hashable {
    public var x: Double
    public var y: Double
    public var z: Double

    @inlinable
    public init(x: Double, y: Double, z: Double) {
        self.x = x
        self.y = y
        self.z = z
    }

    public static let zero = Vector3(x: 0, y: 0, z: 0)

    @inlinable
    public static func + (lhs: Vector3, rhs: Vector3) -> Vector3 {
        Vector3(x: lhs.x + rhs.x, y: lhs.y + rhs.y, z: lhs.z + rhs.z)
    }

    @inlinable
    public static func - (lhs: Vector3, rhs: Vector3) -> Vector3 {
        Vector3(x: lhs.x - rhs.x, y: lhs.y - rhs.y, z: lhs.z - rhs.z)
    }

    @inlinable
    public static func * (lhs: Vector3, rhs: Double) -> Vector3 {
        Vector3(x: lhs.x * rhs, y: lhs.y * rhs, z: lhs.z * rhs)
    }

    /// The dot product.
    @inlinable
    public func dot(_ other: Vector3) -> Double {
        x * other.x + y * other.y + z * other.z
    }

    /// The squared length, which avoids a square root where only comparisons are needed.
    @inlinable
    public var lengthSquared: Double { dot(self) }

    @inlinable
    public var length: Double { lengthSquared.squareRoot() }
}
