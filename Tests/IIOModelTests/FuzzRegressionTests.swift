// SPDX-License-Identifier: Apache-2.0
import Foundation
import IIOModel
import ShakeTestSupport
import Testing

/// Inputs on which the scan fuzzer (`Fuzz/`, docs/fuzzing.md) once failed, kept in `Fuzz/Regressions/scan`.
/// An input is scan type strings, one a line, then a NUL byte and raw buffer bytes.
struct FuzzRegressionTests {
    static let directory = Fixtures.repository.appendingPathComponent("Fuzz/Regressions/scan")

    static let inputs: [String] =
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()

    @Test func theSavedInputsAreThere() {
        #expect(!Self.inputs.isEmpty, "no inputs in \(Self.directory.path)")
    }

    /// Each type string of a saved input parses to a type the ABI allows, or is refused with a reason (no
    /// arithmetic overflow); the bytes then decode with a layout of the types that parsed.
    @Test(arguments: inputs)
    func aSavedInputParsesOrIsRefused(name: String) throws {
        let bytes = Array(try Data(contentsOf: Self.directory.appendingPathComponent(name)))
        let split = bytes.firstIndex(of: 0) ?? bytes.count
        var enabled: [(role: ScanLayout.Role, index: Int, type: ScanType)] = []
        for line in bytes[..<split].split(separator: UInt8(ascii: "\n")).prefix(8) {
            let text = String(decoding: line, as: UTF8.self)
            do {
                let type = try ScanType(parsing: text)
                #expect(type.shift >= 0 && type.shift + type.bits <= type.storageBits)
                #expect((1...255).contains(type.repeatCount))
                enabled.append((.other, enabled.count, type))
            } catch {
                #expect(!error.reason.isEmpty)
            }
        }
        guard !enabled.isEmpty else { return }
        let layout = ScanLayout(enabled)
        var decoder = ScanDecoder(layout: layout)
        let raw = Array(bytes[min(split + 1, bytes.count)...])
        #expect(decoder.decode(raw).count == raw.count / layout.scanBytes)
    }

    /// `shift-near-int-max.bin`: a shift close to `Int.max` overflowed `shift + bits` and trapped.
    @Test(arguments: ["be:s16/16>>9223372036854775807", "le:u8/8>>9223372036854775744"])
    func aHugeShiftIsRefused(text: String) {
        #expect(throws: ScanType.Invalid.self) { try ScanType(parsing: text) }
    }

    /// `repeat-overflows-total-bytes.bin`: a repeat count near 2^62 was accepted, and `totalBytes` (storage
    /// bytes times repeats) then overflowed and trapped. The kernel keeps the count in 8 bits.
    @Test(arguments: ["le:s16/16X04611686018427387904>>0", "le:s64/64X256>>0", "le:s16/16X0>>0"])
    func aRepeatCountOutside1To255IsRefused(text: String) {
        #expect(throws: ScanType.Invalid.self) { try ScanType(parsing: text) }
    }

    @Test func theLargestRepeatCountStillParses() throws {
        let type = try ScanType(parsing: "le:s64/64X255>>0")
        #expect(type.repeatCount == 255)
        #expect(type.totalBytes == 2040)
    }
}
