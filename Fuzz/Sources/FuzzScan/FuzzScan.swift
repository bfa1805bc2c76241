// SPDX-License-Identifier: Apache-2.0
import FuzzSupport
import IIOModel

/// libFuzzer's entry point. An input is text and bytes: scan type strings, one a line (`le:s12/16>>4`), then a
/// NUL byte, then raw buffer bytes. The types that parse become the elements of a scan (x, y, z, timestamp,
/// then others, in that order of index), and the bytes are decoded with that layout.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzScan(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    let split = bytes.firstIndex(of: 0) ?? bytes.count
    let raw = Array(bytes[min(split + 1, bytes.count)...])
    var types: [ScanType] = []
    for line in bytes[..<split].split(separator: UInt8(ascii: "\n")).prefix(8) {
        if let type = checkParsing(String(decoding: line, as: UTF8.self)) {
            checkValues(type, raw)
            types.append(type)
        }
    }
    if !types.isEmpty { checkLayout(types, raw) }
    return 0
}

/// A type that parses is one the ABI allows and spells the same again; one that does not says why.
func checkParsing(_ text: String) -> ScanType? {
    let type: ScanType
    do {
        type = try ScanType(parsing: text)
    } catch {
        require(!error.reason.isEmpty, "no reason given for refusing '\(text)'")
        return nil
    }
    require([8, 16, 32, 64].contains(type.storageBits), "'\(text)': storage \(type.storageBits)")
    require(type.bits >= 1 && type.bits <= type.storageBits, "'\(text)': \(type.bits) bits")
    require(type.shift >= 0 && type.shift <= type.storageBits - type.bits, "'\(text)': shift \(type.shift)")
    require(type.repeatCount >= 1, "'\(text)': repeat \(type.repeatCount)")
    require(type.totalBytes >= type.storageBytes, "'\(text)': \(type.totalBytes) bytes in all")
    do {
        let again = try ScanType(parsing: type.description)
        require(again == type, "'\(text)' is written '\(type.description)', which reads back as \(again)")
    } catch {
        fail("'\(text)' is written '\(type.description)', which is refused: \(error)")
    }
    return type
}

/// The values the decoder can deliver for a type.
func decodedRange(_ type: ScanType) -> ClosedRange<Int64> {
    switch (type.isSigned, type.bits) {
    case (true, 64): Int64.min...Int64.max
    case (true, let bits): -(1 << Int64(bits - 1))...(1 << Int64(bits - 1)) - 1
    // An unsigned 64-bit value at or above 2^63 wraps to a negative one (documented: no sensor is that wide).
    case (false, 64): Int64.min...Int64.max
    case (false, 63): 0...Int64.max
    case (false, let bits): 0...(1 << Int64(bits)) - 1
    }
}

/// The values `encode` keeps (it clamps the others into this range).
func encodableRange(_ type: ScanType) -> ClosedRange<Int64> {
    !type.isSigned && type.bits == 64 ? 0...Int64.max : decodedRange(type)
}

/// Every decoded value fits the type's bits; encoding a decoded value and decoding it again gives it back; and
/// any value survives encoding, clamped into the type's range.
func checkValues(_ type: ScanType, _ raw: [UInt8]) {
    let decoded = decodedRange(type)
    let encodable = encodableRange(type)
    var offset = 0
    while offset + type.storageBytes <= raw.count, offset < 64 {
        let value = raw.withUnsafeBytes { type.decode($0, at: offset) }
        require(decoded.contains(value), "\(type) decoded \(value) outside \(decoded)")
        let encoded = type.encode(value)
        require(encoded.count == type.storageBytes, "\(type) encoded \(value) in \(encoded.count) bytes")
        if encodable.contains(value) {
            let again = encoded.withUnsafeBytes { type.decode($0, at: 0) }
            require(again == value, "\(type): \(value) encoded and decoded is \(again)")
        }
        offset += type.storageBytes
    }
    if raw.count >= 8 {
        // The first eight bytes as any 64-bit value: clamped into the range, then exact.
        let wide = raw.withUnsafeBytes { ScanType(bits: 64, storageBits: 64).decode($0, at: 0) }
        let clamped = min(max(wide, encodable.lowerBound), encodable.upperBound)
        let back = type.encode(wide).withUnsafeBytes { type.decode($0, at: 0) }
        require(back == clamped, "\(type): \(wide) encoded and decoded is \(back), not \(clamped)")
    }
}

/// The layout packs elements in index order, aligned, without overlap; the decoder delivers one scan per
/// `scanBytes` whatever the reads' sizes, keeps the rest, and re-encoding the scans gives them back.
func checkLayout(_ types: [ScanType], _ raw: [UInt8]) {
    let roles: [ScanLayout.Role] = [.x, .y, .z, .timestamp]
    var enabled: [(role: ScanLayout.Role, index: Int, type: ScanType)] = []
    for (index, type) in types.enumerated() {
        enabled.append((index < roles.count ? roles[index] : .other, index, type))
    }
    let layout = ScanLayout(enabled.reversed())
    require(layout.elements.map(\.index) == Array(types.indices), "elements out of index order")
    var end = 0
    var largest = 1
    for element in layout.elements {
        require(element.offset >= end, "element \(element.index) overlaps the one before")
        require(element.offset % element.type.totalBytes == 0, "element \(element.index) is not aligned")
        end = element.offset + element.type.totalBytes
        largest = max(largest, element.type.totalBytes)
    }
    require(layout.scanBytes >= end && layout.scanBytes % largest == 0, "scan of \(layout.scanBytes) bytes")

    var whole = ScanDecoder(layout: layout)
    let scans = whole.decode(raw)
    require(scans.count == raw.count / layout.scanBytes, "\(scans.count) scans from \(raw.count) bytes")
    require(whole.pendingByteCount == raw.count % layout.scanBytes, "\(whole.pendingByteCount) bytes kept")

    // The same bytes in reads of uneven sizes.
    var pieces = ScanDecoder(layout: layout)
    var pieceScans: [RawScan] = []
    var start = 0
    while start < raw.count {
        let end = min(raw.count, start + Int(raw[start] % 16) + 1)
        pieceScans += pieces.decode(Array(raw[start..<end]))
        start = end
    }
    require(pieceScans == scans, "reads of uneven sizes decode differently")

    for scan in scans {
        var encodable = true
        for element in layout.elements {
            let value: Int64?
            switch element.role {
            case .x: value = scan.x
            case .y: value = scan.y
            case .z: value = scan.z
            case .timestamp: value = scan.timestamp
            case .other: value = nil
            }
            if let value {
                require(decodedRange(element.type).contains(value), "\(element.type) decoded \(value) out of range")
                encodable = encodable && encodableRange(element.type).contains(value)
            }
        }
        guard encodable else { continue }
        let encoded = layout.encode(x: scan.x, y: scan.y, z: scan.z, timestamp: scan.timestamp ?? 0)
        var decoder = ScanDecoder(layout: layout)
        require(decoder.decode(encoded) == [scan], "a scan re-encoded decodes differently: \(scan)")
    }
}
