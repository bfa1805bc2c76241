import Foundation
import ShakeTestSupport
import Testing

/// The configuration files as shaked meets them: what stands where a file is expected (a FIFO, a file others
/// may write), values that drive a terminal, and the udev helper that reads the same files.
@Suite(.serialized)
struct ConfigurationFileTests {
    let trace = Fixtures.path("shake-horizontal-100hz.csv")

    func write(_ text: String, to path: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// `shaked ARGUMENTS`, stopped after 30 s (status 124) should it wait on something for ever.
    func shaked(_ arguments: [String], under prefix: [String] = []) throws -> Command.Result {
        try Command.run("/usr/bin/timeout", ["30"] + prefix + [Harness.product("shaked")] + arguments)
    }

    /// Values written as escapes in double quotes, and a drop-in's name, reach the terminal escaped: in what
    /// `--check-config` prints, in its errors, and in the daemon's log.
    @Test func controlCharactersAreEscapedWhereverTheyArePrinted() throws {
        let directory = try Harness.scratch("check-escape")
        let file = "\(directory)/shaked.yaml"
        try write(#"sensor:\#n  source: "replay:/tmp/\e]0;owned\a\e[2J.csv"\#n"#, to: file)
        let checked = try shaked(["--check-config", file])
        #expect(checked.status == 0, "\(checked.stderr)")
        #expect(checked.stdout.contains(#"replay:/tmp/\u{1B}]0;owned\u{7}\u{1B}[2J.csv"#), "\(checked.stdout)")
        #expect(!checked.stdout.contains("\u{1B}") && !checked.stdout.contains("\u{7}"))

        try write(#"logging:\#n  level: "\e[31mloud\nMAINPID=1""#, to: file)
        #expect(mkdir(file + ".d", 0o755) == 0)
        try write("detector:\n  threshold: banana\n", to: file + ".d/\u{1B}[5m.yaml")
        let refused = try shaked(["--check-config", file])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains(#"'\u{1B}[31mloud\u{A}mainpid=1' is not a level"#), "\(refused.stderr)")
        #expect(refused.stderr.contains(#".d/\u{1B}[5m.yaml:2: detector.threshold"#), "\(refused.stderr)")
        #expect(!refused.stderr.contains("\u{1B}"))
        #expect(refused.stderr.split(separator: "\n").count == 2, "one line per problem: \(refused.stderr)")
        let started = try shaked(["--config", file, "--source", "replay:\(trace)", "--no-socket"])
        #expect(started.status == 64)
        #expect(started.stderr.contains("refusing to start") && started.stderr.contains(#"\u{1B}[31mloud"#))
        #expect(!started.stderr.contains("\u{1B}"), "\(started.stderr)")
    }
}
