// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeTestSupport
import Testing

/// The shipped udev rules give no user /dev/uinput: whoever can write it can type into every session, and the
/// right is checked only at open, so a grant to the seat's user (the uaccess tag) outlives a user switch or a
/// lock. Only root and the group the service joins may write it.
struct UdevRuleTests {
    /// The rules' lines, comments and continuations aside, by file.
    static func rules() throws -> [(file: String, line: String)] {
        let folder = Fixtures.repository.appendingPathComponent("udev")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".rules") }
        #expect(!files.isEmpty)
        var rules: [(String, String)] = []
        for file in files.sorted() {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            let joined = text.replacingOccurrences(of: "\\\n", with: " ")
            for line in joined.split(separator: "\n") where !line.hasPrefix("#") && !line.allSatisfy(\.isWhitespace) {
                rules.append((file, String(line)))
            }
        }
        return rules
    }

    @Test func noRuleTagsAnyDeviceForTheSeatsUser() async throws {
        for (file, line) in try Self.rules() {
            #expect(!line.contains("uaccess"), "\(file): \(line)")
        }
    }

    @Test func uinputIsForRootAndTheServicesGroupOnly() async throws {
        let uinput = try Self.rules().filter { $0.line.contains(#"KERNEL=="uinput""#) }
        #expect(uinput.map(\.file) == ["70-shaked-uinput.rules"], "\(uinput)")
        for (file, line) in uinput {
            #expect(line.contains(#"GROUP="shaked-uinput""#), "\(file): \(line)")
            #expect(line.contains(#"MODE="0660""#), "\(file): \(line)")
            #expect(!line.contains("OWNER="), "\(file): \(line)")
        }
    }
}
