// SPDX-License-Identifier: Apache-2.0
import ShakeTestSupport
import Testing

/// `shakectl key`'s refusals, which need no daemon. The chords the daemon presses for it are checked with the real
/// daemon (IntegrationTests/KeyChordTests) and in the VM (scripts/vm, docs/vm-tests.md), where a kernel has uinput.
struct KeyCommandTests {
    @Test(arguments: [
        ("ctrl+q+z", "'q' is not a modifier"), ("ctrl+", "invalid key chord"), ("hyper+z", "invalid key chord"),
    ])
    func aChordThatCannotBePressedIsAUsageError(chord: String, message: String) throws {
        let result = try Command.run("shakectl", ["key", chord])
        #expect(result.status == 64)
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    /// shakectl opens no uinput device of its own any more: the daemon presses the chord.
    @Test func thereIsNoUinputOption() throws {
        let result = try Command.run(
            "shakectl", ["key", "ctrl+z", "--uinput", "/dev/uinput", "--socket", "/nonexistent/shaked.sock"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--uinput"), "\(result.stderr)")
    }
}
