// SPDX-License-Identifier: Apache-2.0
/// Where each enabled element sits in a scan, as the kernel packs them: in index order, each aligned to its
/// own size, the scan padded to a multiple of its largest element.
public struct ScanLayout: Sendable, Hashable {
    /// What an element of the scan carries.
    public enum Role: Sendable, Hashable {
        case x, y, z
        /// The kernel's timestamp, nanoseconds.
        case timestamp
        /// An element the daemon does not use (it still takes its place in the scan).
        case other
    }

    public struct Element: Sendable, Hashable {
        public var role: Role
        public var index: Int
        public var type: ScanType
        /// Bytes from the start of the scan.
        public var offset: Int
    }

    /// The enabled elements in scan order, with their offsets.
    public let elements: [Element]
    /// Bytes per scan.
    public let scanBytes: Int

    /// Lays out the enabled elements.
    /// - Parameter enabled: role, index and type of each enabled element, in any order.
    public init(_ enabled: [(role: Role, index: Int, type: ScanType)]) {
        var offset = 0
        var largest = 1
        var elements: [Element] = []
        for item in enabled.sorted(by: { $0.index < $1.index }) {
            let length = item.type.totalBytes
            offset = Self.align(offset, to: length)
            elements.append(Element(role: item.role, index: item.index, type: item.type, offset: offset))
            offset += length
            largest = max(largest, length)
        }
        self.elements = elements
        self.scanBytes = Self.align(offset, to: largest)
    }

    /// Rounds up to a multiple of `alignment` (the kernel's ALIGN, which assumes powers of two; any positive
    /// alignment works here).
    static func align(_ value: Int, to alignment: Int) -> Int {
        guard alignment > 1 else { return value }
        return (value + alignment - 1) / alignment * alignment
    }

    public var hasTimestamp: Bool { elements.contains { $0.role == .timestamp } }

    /// Encodes one scan (for simulated devices and tests): each role's value at its offset, padding zero.
    public func encode(x: Int64, y: Int64, z: Int64, timestamp: Int64 = 0) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: scanBytes)
        for element in elements {
            let value: Int64
            switch element.role {
            case .x: value = x
            case .y: value = y
            case .z: value = z
            case .timestamp: value = timestamp
            case .other: value = 0
            }
            let encoded = element.type.encode(value)
            bytes.replaceSubrange(element.offset..<(element.offset + encoded.count), with: encoded)
        }
        return bytes
    }
}

/// One decoded scan: raw counts on the sensor's axes, and the kernel's timestamp when it is enabled.
public struct RawScan: Sendable, Hashable {
    public var x: Int64
    public var y: Int64
    public var z: Int64
    /// Nanoseconds on the kernel's clock for the buffer.
    public var timestamp: Int64?

    public init(x: Int64, y: Int64, z: Int64, timestamp: Int64? = nil) {
        self.x = x
        self.y = y
        self.z = z
        self.timestamp = timestamp
    }
}

/// Turns the bytes a buffer delivers into scans. A read may end inside a scan: the rest is kept for the next.
public struct ScanDecoder: Sendable {
    public let layout: ScanLayout
    private var pending: [UInt8] = []

    public init(layout: ScanLayout) {
        self.layout = layout
    }

    /// Bytes held over from the last call: the start of a scan not yet complete.
    public var pendingByteCount: Int { pending.count }

    /// Decodes every complete scan in `bytes` (after any held over).
    public mutating func decode(_ bytes: [UInt8]) -> [RawScan] {
        let size = layout.scanBytes
        guard size > 0 else { return [] }
        let data: [UInt8]
        if pending.isEmpty {
            data = bytes
        } else {
            data = pending + bytes
        }
        let count = data.count / size
        var scans: [RawScan] = []
        scans.reserveCapacity(count)
        data.withUnsafeBytes { raw in
            for scan in 0..<count {
                let base = scan * size
                var result = RawScan(x: 0, y: 0, z: 0)
                for element in layout.elements {
                    let value = element.type.decode(raw, at: base + element.offset)
                    switch element.role {
                    case .x: result.x = value
                    case .y: result.y = value
                    case .z: result.z = value
                    case .timestamp: result.timestamp = value
                    case .other: break
                    }
                }
                scans.append(result)
            }
        }
        pending = Array(data[(count * size)...])
        return scans
    }

    /// Forgets a partial scan (after the buffer was restarted).
    public mutating func reset() {
        pending.removeAll()
    }
}
