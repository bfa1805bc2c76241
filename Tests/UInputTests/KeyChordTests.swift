// SPDX-License-Identifier: Apache-2.0
import Testing
import UInput

@Suite struct KeyChordTests {
    @Test(
        arguments: [
            ("ctrl+z", [29], 44),
            ("undo", [], 131),
            ("shift+ctrl+z", [42, 29], 44),
            ("Ctrl + Shift + Z", [29, 42], 44),
            ("super+f12", [125], 88),
            ("altgr+1", [100], 2),
            ("redo", [], 182),
            ("shift", [], 42),
        ] as [(String, [UInt16], UInt16)])
    func parses(text: String, modifiers: [UInt16], key: UInt16) throws {
        let chord = try KeyChord(parsing: text)
        #expect(chord.modifiers == modifiers)
        #expect(chord.key == key)
    }

    @Test(arguments: [
        ("", "empty"),
        ("ctrl+", "empty"),
        ("+z", "empty"),
        ("ctrl+zz", "unknown key 'zz'"),
        ("hyper+z", "unknown modifier 'hyper'"),
        ("z+ctrl", "'z' is not a modifier"),
        ("ctrl+control+z", "given twice"),
    ])
    func refuses(text: String, reason: String) {
        #expect {
            try KeyChord(parsing: text)
        } throws: { error in
            guard let error = error as? KeyChord.ParseError else { return false }
            return error.text == text && error.reason.contains(reason)
                && error.description.hasPrefix("invalid key chord '\(text)'")
        }
    }

    @Test func eventsPressInOrderAndReleaseInReverse() throws {
        let chord = try KeyChord(parsing: "shift+ctrl+z")
        #expect(
            chord.events == [
                .key(42, .press), .key(29, .press), .key(44, .press), .report,
                .key(44, .release), .key(29, .release), .key(42, .release), .report,
            ])
        #expect(chord.events.map(\.type) == [1, 1, 1, 0, 1, 1, 1, 0])
    }

    @Test func singleKeyIsOnePressAndOneRelease() throws {
        #expect(try KeyChord(parsing: "undo").events == [.key(131, .press), .report, .key(131, .release), .report])
    }

    @Test func descriptionRoundTrips() throws {
        for text in ["ctrl+z", "shift+ctrl+z", "undo", "super+f12", "alt+tab"] {
            let chord = try KeyChord(parsing: text)
            #expect(try KeyChord(parsing: chord.description) == chord)
        }
        #expect(try KeyChord(parsing: "control+Z").description == "ctrl+z")
    }

    @Test func everyLetterAndDigitHasADistinctCode() {
        let names = "abcdefghijklmnopqrstuvwxyz0123456789".map { String($0) }
        let codes = names.compactMap { KeyChord.keyNames[$0] }
        #expect(codes.count == 36)
        #expect(Set(codes).count == 36)
    }
}
