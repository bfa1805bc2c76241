import ShakeTestSupport
import Testing

/// `shakectl key`'s refusals, which need no uinput: a chord it cannot press, a uinput device it cannot open. The
/// key events themselves are read back in the VM (scripts/vm, docs/vm-tests.md), where a kernel has uinput.
struct KeyCommandTests {
    @Test(arguments: [
        ("ctrl+q+z", "'q' is not a modifier"), ("ctrl+", "invalid key chord"), ("hyper+z", "invalid key chord"),
    ])
    func aChordThatCannotBePressedIsAUsageError(chord: String, message: String) throws {
        let result = try Command.run("shakectl", ["key", chord])
        #expect(result.status == 64)
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    @Test func aUinputDeviceThatCannotBeOpenedFailsBeforeConnecting() throws {
        let result = try Command.run(
            "shakectl", ["key", "ctrl+z", "--uinput", "/nonexistent/uinput", "--socket", "/nonexistent/shaked.sock"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("cannot make a virtual keyboard: "), "\(result.stderr)")
        #expect(!result.stderr.contains("waiting for the daemon"), "\(result.stderr)")
    }
}
