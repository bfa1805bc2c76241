// SPDX-License-Identifier: Apache-2.0
/// How one element of a buffered scan is stored: the `scan_elements/in_*_type` string of the IIO ABI,
/// `[be|le]:[s|u]BITS/STORAGE>>SHIFT` (with an optional `XREPEAT` after the storage: `le:s16/16X3>>0`).
///
/// The value is `STORAGE` bits in the given byte order; shifted right by `SHIFT`, its low `BITS` bits hold the
/// sample, signed (two's complement) or unsigned.
public struct ScanType: Sendable, Hashable, CustomStringConvertible {
    public var isBigEndian: Bool
    public var isSigned: Bool
    /// Bits that carry the value (`realbits`).
    public var bits: Int
    /// Bits the element occupies in the scan (`storagebits`): 8, 16, 32 or 64.
    public var storageBits: Int
    public var shift: Int
    /// How many values of this element follow one another (1 for all but a few drivers).
    public var repeatCount: Int

    public init(
        isBigEndian: Bool = false, isSigned: Bool = true, bits: Int, storageBits: Int, shift: Int = 0,
        repeatCount: Int = 1
    ) {
        self.isBigEndian = isBigEndian
        self.isSigned = isSigned
        self.bits = bits
        self.storageBits = storageBits
        self.shift = shift
        self.repeatCount = repeatCount
    }

    /// The kernel's timestamp element: `le:s64/64>>0`, nanoseconds.
    public static let timestamp = ScanType(bits: 64, storageBits: 64)

    /// Bytes one value occupies, which is also its alignment in a scan.
    public var storageBytes: Int { storageBits / 8 }
    /// Bytes the element occupies in a scan, repeats included.
    public var totalBytes: Int { storageBytes * repeatCount }

    /// Parses a type string as sysfs writes it (surrounding white space allowed; `le:S16/16>>0`, as libiio
    /// prints it, too).
    /// - Throws: ``Invalid`` naming what is wrong.
    public init(parsing text: String) throws(Invalid) {
        let trimmed = text.trimmingWhitespace()
        func fail(_ why: String) -> Invalid { Invalid(text: text, reason: why) }
        let parts = trimmed.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw fail("expected ENDIANNESS:TYPE, such as le:s16/16>>0") }
        switch parts[0].lowercased() {
        case "le": isBigEndian = false
        case "be": isBigEndian = true
        default: throw fail("endianness must be 'le' or 'be'")
        }
        var rest = Substring(parts[1])
        switch rest.first {
        case "s", "S": isSigned = true
        case "u", "U": isSigned = false
        default: throw fail("sign must be 's' or 'u'")
        }
        rest = rest.dropFirst()
        guard let slash = rest.firstIndex(of: "/") else { throw fail("expected BITS/STORAGE") }
        guard let bits = Int(rest[..<slash]) else { throw fail("bits is not a number") }
        rest = rest[rest.index(after: slash)...]
        let storageText: Substring
        var shiftValue = 0
        if let marker = rest.firstIndex(of: ">") {
            storageText = rest[..<marker]
            let after = rest[marker...]
            guard after.hasPrefix(">>"), let shift = Int(after.dropFirst(2)) else {
                throw fail("shift is not a number")
            }
            shiftValue = shift
        } else {
            storageText = rest
        }
        var repeatValue = 1
        var storagePart = storageText
        if let x = storageText.firstIndex(where: { $0 == "X" || $0 == "x" }) {
            // The kernel keeps the repeat count in 8 bits; a larger one would overflow `totalBytes`.
            guard let count = Int(storageText[storageText.index(after: x)...]), (1...255).contains(count) else {
                throw fail("repeat must be a number in 1...255")
            }
            repeatValue = count
            storagePart = storageText[..<x]
        }
        guard let storage = Int(storagePart) else { throw fail("storage bits is not a number") }
        guard [8, 16, 32, 64].contains(storage) else { throw fail("storage must be 8, 16, 32 or 64 bits") }
        guard bits >= 1, bits <= storage else { throw fail("bits must be 1...\(storage)") }
        guard shiftValue >= 0, shiftValue <= storage - bits else {
            throw fail("shift + bits must fit in \(storage) bits")
        }
        self.bits = bits
        self.storageBits = storage
        self.shift = shiftValue
        self.repeatCount = repeatValue
    }

    /// The type string in the ABI's spelling.
    public var description: String {
        let repeatText = repeatCount > 1 ? "X\(repeatCount)" : ""
        return "\(isBigEndian ? "be" : "le"):\(isSigned ? "s" : "u")\(bits)/\(storageBits)\(repeatText)>>\(shift)"
    }

    /// Decodes the first value of the element stored at `offset` in `bytes`.
    /// - Precondition: `offset + storageBytes <= bytes.count`.
    public func decode(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Int64 {
        var word: UInt64 = 0
        let count = storageBits / 8
        if isBigEndian {
            for index in 0..<count { word = (word << 8) | UInt64(bytes[offset + index]) }
        } else {
            for index in stride(from: count - 1, through: 0, by: -1) {
                word = (word << 8) | UInt64(bytes[offset + index])
            }
        }
        word >>= UInt64(shift)
        if bits < 64 {
            let mask: UInt64 = (1 << UInt64(bits)) - 1
            word &= mask
            if isSigned, word & (1 << UInt64(bits - 1)) != 0 {
                word |= ~mask
            }
        }
        return Int64(bitPattern: word)  // an unsigned 64-bit value above 2^63 wraps; no sensor is that wide
    }

    /// The counts the element can hold: its real bits, not its storage (a 12-bit sample in 16-bit storage reads
    /// -2048...2047). A 64-bit unsigned type is limited to the positive 63 bits, as ``decode(_:at:)`` reads it.
    public var range: ClosedRange<Int64> {
        if isSigned {
            return bits >= 64 ? Int64.min...Int64.max : -(1 << Int64(bits - 1))...((1 << Int64(bits - 1)) - 1)
        }
        return bits >= 63 ? 0...Int64.max : 0...((1 << Int64(bits)) - 1)
    }

    /// The whole number of counts nearest `value`, clipped to ``range`` as a sensor clips at full scale
    /// (infinities read as full scale; NaN, which no sensor reports, as 0).
    public func clip(_ value: Double) -> Int64 {
        let range = range
        guard !value.isNaN else { return min(max(0, range.lowerBound), range.upperBound) }
        // Compare as Doubles first: converting a value beyond Int64 would trap.
        if value <= Double(range.lowerBound) { return range.lowerBound }
        if value >= Double(range.upperBound) { return range.upperBound }
        return min(max(Int64(value.rounded()), range.lowerBound), range.upperBound)
    }

    /// Encodes a value the way ``decode(_:at:)`` reads it (for simulated devices and tests). Values outside
    /// the type's range are clamped.
    public func encode(_ value: Int64) -> [UInt8] {
        let range = range
        let clamped = min(max(value, range.lowerBound), range.upperBound)
        var word = UInt64(bitPattern: clamped)
        if bits < 64 { word &= (1 << UInt64(bits)) - 1 }
        word <<= UInt64(shift)
        let count = storageBits / 8
        var bytes = [UInt8](repeating: 0, count: count)
        for index in 0..<count {
            let byte = UInt8(truncatingIfNeeded: word >> UInt64(8 * index))
            bytes[isBigEndian ? count - 1 - index : index] = byte
        }
        return bytes
    }

    /// A type string that cannot be parsed.
    public struct Invalid: Error, Sendable, Hashable, CustomStringConvertible {
        public var text: String
        public var reason: String
        public var description: String { "scan type '\(text)': \(reason)" }
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces, tabs and newlines.
    package func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\0" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
