// SPDX-License-Identifier: Apache-2.0
import IIOModel
import Testing

struct ScanLayoutTests {
    func layout(_ types: [String], timestamp: Bool = true) throws -> ScanLayout {
        var enabled: [(role: ScanLayout.Role, index: Int, type: ScanType)] = []
        for (index, (role, text)) in zip([ScanLayout.Role.x, .y, .z], types).enumerated() {
            enabled.append((role, index, try ScanType(parsing: text)))
        }
        if timestamp { enabled.append((.timestamp, 3, .timestamp)) }
        return ScanLayout(enabled)
    }

    @Test func threeShortsAndATimestampMakeSixteenBytes() throws {
        let layout = try layout(["le:s16/16>>0", "le:s16/16>>0", "le:s16/16>>0"])
        #expect(layout.elements.map(\.offset) == [0, 2, 4, 8])
        #expect(layout.scanBytes == 16)
    }

    @Test func elementsAlignToTheirOwnSize() throws {
        let bytes = try layout(["le:s8/8>>0", "le:s16/16>>0", "le:s32/32>>0"], timestamp: false)
        #expect(bytes.elements.map(\.offset) == [0, 2, 4])
        #expect(bytes.scanBytes == 8)
        let words = try layout(["le:s32/32>>0", "le:s32/32>>0", "le:s32/32>>0"])
        #expect(words.elements.map(\.offset) == [0, 4, 8, 16])
        #expect(words.scanBytes == 24)
        let small = try layout(["le:s8/8>>0", "le:s8/8>>0", "le:s8/8>>0"], timestamp: false)
        #expect(small.scanBytes == 3)
        let noTimestamp = try layout(["le:s16/16>>0", "le:s16/16>>0", "le:s16/16>>0"], timestamp: false)
        #expect(noTimestamp.scanBytes == 6)
    }

    @Test func elementsArePackedInIndexOrderWhateverTheOrderGiven() throws {
        let type = try ScanType(parsing: "le:s16/16>>0")
        let layout = ScanLayout([(.timestamp, 3, .timestamp), (.z, 2, type), (.x, 0, type), (.y, 1, type)])
        #expect(layout.elements.map(\.role) == [.x, .y, .z, .timestamp])
        var decoder = ScanDecoder(layout: layout)
        let scans = decoder.decode(layout.encode(x: 1, y: -2, z: 3, timestamp: 4))
        #expect(scans == [RawScan(x: 1, y: -2, z: 3, timestamp: 4)])
    }

    @Test(arguments: [
        "le:s16/16>>0", "be:s16/16>>0", "le:s12/16>>4", "be:s12/16>>4", "le:u16/16>>0", "be:u16/16>>0",
        "le:s32/32>>0", "be:s24/32>>8", "le:s8/8>>0", "le:u10/16>>6",
    ])
    func everyShapeDecodesWhatWasEncoded(text: String) throws {
        let type = try ScanType(parsing: text)
        for timestamp in [true, false] {
            let layout = try layout([text, text, text], timestamp: timestamp)
            let high: Int64 = type.isSigned ? (1 << Int64(type.bits - 1)) - 1 : (1 << Int64(type.bits)) - 1
            let low: Int64 = type.isSigned ? -high - 1 : 0
            let values: [(Int64, Int64, Int64)] = [
                (0, 0, 0), (low, high, 1), (high, low, low + 1), (7, high / 2, low / 3),
            ]
            var bytes: [UInt8] = []
            for (index, value) in values.enumerated() {
                bytes += layout.encode(x: value.0, y: value.1, z: value.2, timestamp: Int64(index) * 10_000_000)
            }
            var decoder = ScanDecoder(layout: layout)
            let scans = decoder.decode(bytes)
            let expected = values.enumerated().map { index, value in
                RawScan(x: value.0, y: value.1, z: value.2, timestamp: timestamp ? Int64(index) * 10_000_000 : nil)
            }
            #expect(scans == expected)
        }
    }

    @Test func aScanSplitAcrossReadsIsKeptUntilComplete() throws {
        let layout = try layout(["be:s16/16>>0", "be:s16/16>>0", "be:s16/16>>0"])
        let bytes = layout.encode(x: 100, y: -200, z: 300, timestamp: 5) + layout.encode(x: 1, y: 2, z: 3, timestamp: 6)
        var decoder = ScanDecoder(layout: layout)
        #expect(decoder.decode(Array(bytes[0..<10])).isEmpty)
        #expect(decoder.pendingByteCount == 10)
        #expect(decoder.decode(Array(bytes[10..<20])) == [RawScan(x: 100, y: -200, z: 300, timestamp: 5)])
        #expect(decoder.decode(Array(bytes[20...])) == [RawScan(x: 1, y: 2, z: 3, timestamp: 6)])
        #expect(decoder.pendingByteCount == 0)
    }
}
