// SPDX-License-Identifier: Apache-2.0
import IIOModel
import Testing

struct ScanTypeTests {
    @Test(arguments: [
        ("le:s16/16>>0", false, true, 16, 16, 0, 1),
        ("le:s12/16>>4", false, true, 12, 16, 4, 1),
        ("be:s16/16>>0", true, true, 16, 16, 0, 1),
        ("le:u16/16>>0", false, false, 16, 16, 0, 1),
        ("be:u12/16>>4", true, false, 12, 16, 4, 1),
        ("le:s64/64>>0", false, true, 64, 64, 0, 1),
        ("le:S10/16>>6", false, true, 10, 16, 6, 1),
        ("le:s8/8>>0", false, true, 8, 8, 0, 1),
        ("be:s24/32>>8", true, true, 24, 32, 8, 1),
        ("le:s16/16X3>>0", false, true, 16, 16, 0, 3),
        ("le:u14/16", false, false, 14, 16, 0, 1),
        (" le:s16/16>>0\n", false, true, 16, 16, 0, 1),
    ])
    func parsesEveryFormTheABIAllows(
        text: String, bigEndian: Bool, signed: Bool, bits: Int, storage: Int, shift: Int, repeats: Int
    ) throws {
        let type = try ScanType(parsing: text)
        #expect(type.isBigEndian == bigEndian)
        #expect(type.isSigned == signed)
        #expect(type.bits == bits)
        #expect(type.storageBits == storage)
        #expect(type.shift == shift)
        #expect(type.repeatCount == repeats)
        #expect(try ScanType(parsing: type.description) == type)
    }

    @Test(arguments: [
        "", "s16/16>>0", "me:s16/16>>0", "le:x16/16>>0", "le:s16>>0", "le:s17/16>>0", "le:s16/12>>0",
        "le:s12/16>>5", "le:s16/16>>x", "le:s0/16>>0", "le:s16/16X0>>0", "le:sa/16>>0",
    ])
    func rejectsMalformedTypes(text: String) {
        #expect(throws: ScanType.Invalid.self) { try ScanType(parsing: text) }
    }

    func decode(_ type: ScanType, _ bytes: [UInt8]) -> Int64 {
        bytes.withUnsafeBytes { type.decode($0, at: 0) }
    }

    @Test func decodesLittleAndBigEndianSignedValues() throws {
        #expect(decode(try ScanType(parsing: "le:s16/16>>0"), [0x34, 0x12]) == 0x1234)
        #expect(decode(try ScanType(parsing: "le:s16/16>>0"), [0xFE, 0xFF]) == -2)
        #expect(decode(try ScanType(parsing: "be:s16/16>>0"), [0x12, 0x34]) == 0x1234)
        #expect(decode(try ScanType(parsing: "be:s16/16>>0"), [0xFF, 0xFE]) == -2)
        #expect(decode(try ScanType(parsing: "be:s32/32>>0"), [0xFF, 0xFF, 0xFF, 0x9C]) == -100)
        #expect(decode(try ScanType(parsing: "le:s8/8>>0"), [0x80]) == -128)
    }

    @Test func shiftsAndSignExtendsShortValues() throws {
        let type = try ScanType(parsing: "le:s12/16>>4")
        // -1 in 12 bits, shifted left by 4, with junk in the low nibble.
        #expect(decode(type, [0xF7, 0xFF]) == -1)
        // 0x7FF (2047) << 4 = 0x7FF0.
        #expect(decode(type, [0xF0, 0x7F]) == 2047)
        // 0x800 (-2048) << 4 = 0x8000.
        #expect(decode(type, [0x00, 0x80]) == -2048)
        let bigEndian = try ScanType(parsing: "be:s12/16>>4")
        #expect(decode(bigEndian, [0x80, 0x00]) == -2048)
    }

    @Test func unsignedValuesStayPositive() throws {
        #expect(decode(try ScanType(parsing: "le:u16/16>>0"), [0xFF, 0xFF]) == 65535)
        #expect(decode(try ScanType(parsing: "le:u12/16>>4"), [0xF0, 0xFF]) == 4095)
        #expect(decode(try ScanType(parsing: "be:u16/16>>0"), [0x80, 0x00]) == 32768)
    }

    @Test func timestampsDecodeAsSignedNanoseconds() {
        let nanoseconds: Int64 = 1_700_000_000_123_456_789
        #expect(decode(.timestamp, ScanType.timestamp.encode(nanoseconds)) == nanoseconds)
        #expect(decode(.timestamp, ScanType.timestamp.encode(-5)) == -5)
    }

    @Test(arguments: [
        "le:s16/16>>0", "be:s16/16>>0", "le:s12/16>>4", "be:u12/16>>4", "le:u16/16>>0", "be:s24/32>>8", "le:s8/8>>0",
    ])
    func encodingRoundTripsAndClamps(text: String) throws {
        let type = try ScanType(parsing: text)
        let low: Int64 = type.isSigned ? -(1 << Int64(type.bits - 1)) : 0
        let high: Int64 = type.isSigned ? (1 << Int64(type.bits - 1)) - 1 : (1 << Int64(type.bits)) - 1
        for value in [low, low + 1, -1, 0, 1, 37, high - 1, high] where value >= low {
            #expect(decode(type, type.encode(value)) == value)
        }
        #expect(decode(type, type.encode(high + 100)) == high)
        #expect(decode(type, type.encode(low - 100)) == low)
    }
}
