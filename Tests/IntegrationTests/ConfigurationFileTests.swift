// SPDX-License-Identifier: Apache-2.0
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
    func shaked(_ arguments: [String], under prefix: [String] = []) async throws -> Command.Result {
        try await Command.run("/usr/bin/timeout", ["30"] + prefix + [Harness.product("shaked")] + arguments)
    }

    /// A FIFO dropped in where a drop-in is expected: the reload that meets it is rejected at once, saying so,
    /// systemd hears READY again, and the next reload (the FIFO gone) applies.
    @Test func aReloadThatMeetsAFIFOIsRejectedAndTheNextOneApplies() async throws {
        let directory = try Harness.scratch("reload-fifo")
        let file = "\(directory)/shaked.yaml"
        try write("detector:\n  sensitivity: medium\n", to: file)
        #expect(mkdir(file + ".d", 0o755) == 0)
        let manager = try DatagramSocket(path: "\(directory)/notify.sock")
        let daemon = try DaemonProcess(
            command: [
                "/usr/bin/env", "NOTIFY_SOCKET=\(manager.path)", Harness.product("shaked"), "--config", file,
                "--source", "replay:\(trace)", "--loop", "--socket", "\(directory)/shaked.sock",
            ],
            pidFile: "\(directory)/daemon.pid")
        defer { _ = daemon.stop() }
        var messages: [Data] = []
        func ready(_ messages: [Data]) -> Int {
            messages.filter { String(decoding: $0, as: UTF8.self).hasPrefix("READY=1") }.count
        }
        #expect(manager.collect(timeout: 10, into: &messages) { ready($0) == 1 }, "\(daemon.stderr)")

        let fifo = file + ".d/50-fifo.yaml"
        #expect(mkfifo(fifo, 0o644) == 0)
        kill(daemon.daemonPID ?? 0, SIGHUP)
        #expect(manager.collect(timeout: 10, into: &messages) { ready($0) == 2 }, "\(daemon.stderr)")
        #expect(await daemon.wait(timeout: 5) { $0.stderr.contains("configuration rejected") }, "\(daemon.stderr)")
        #expect(daemon.stderr.contains("\(fifo): is a FIFO, not a regular file"), "\(daemon.stderr)")

        unlink(fifo)
        try write("detector:\n  threshold: 200\n", to: file + ".d/50-fifo.yaml")
        kill(daemon.daemonPID ?? 0, SIGHUP)
        #expect(manager.collect(timeout: 10, into: &messages) { ready($0) == 3 }, "\(daemon.stderr)")
        #expect(await daemon.wait(timeout: 5) { $0.stderr.contains("configuration reloaded") }, "\(daemon.stderr)")
        let status = try await Harness.shakectl(["status", "--socket", "\(directory)/shaked.sock", "--json"])
        #expect(
            status.contains(#""config_reloads":1"#) && status.contains(#""config_reloads_rejected":1"#), "\(status)")
    }

    @Test func checkConfigRefusesAFIFOAndAFileOthersMayWrite() async throws {
        let directory = try Harness.scratch("check-trust")
        let fifo = "\(directory)/fifo.yaml"
        #expect(mkfifo(fifo, 0o644) == 0)
        let checked = try await shaked(["--check-config", fifo])
        #expect(checked.status == 64)
        #expect(
            checked.stderr
                == "shaked: \(fifo): is a FIFO, not a regular file; a configuration file must be a regular file\n")

        let open = "\(directory)/open.yaml"
        try write("detector:\n  threshold: 14\n", to: open)
        #expect(chmod(open, 0o664) == 0)
        let refused = try await shaked(["--check-config", open])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("\(open): is writable by its group (mode 0664)"), "\(refused.stderr)")
        // At start, the same refusal.
        let started = try await shaked(["--config", open, "--source", "replay:\(trace)", "--no-socket"])
        #expect(started.status == 64)
        #expect(started.stderr.contains("refusing to start") && started.stderr.contains("is writable by its group"))
    }

    /// Values written as escapes in double quotes, and a drop-in's name, reach the terminal escaped: in what
    /// `--check-config` prints, in its errors, and in the daemon's log.
    @Test func controlCharactersAreEscapedWhereverTheyArePrinted() async throws {
        let directory = try Harness.scratch("check-escape")
        let file = "\(directory)/shaked.yaml"
        try write(#"sensor:\#n  source: "replay:/tmp/\e]0;owned\a\e[2J.csv"\#n"#, to: file)
        let checked = try await shaked(["--check-config", file])
        #expect(checked.status == 0, "\(checked.stderr)")
        #expect(checked.stdout.contains(#"replay:/tmp/\u{1B}]0;owned\u{7}\u{1B}[2J.csv"#), "\(checked.stdout)")
        #expect(!checked.stdout.contains("\u{1B}") && !checked.stdout.contains("\u{7}"))

        try write(#"logging:\#n  level: "\e[31mloud\nMAINPID=1""#, to: file)
        #expect(mkdir(file + ".d", 0o755) == 0)
        try write("detector:\n  threshold: banana\n", to: file + ".d/\u{1B}[5m.yaml")
        let refused = try await shaked(["--check-config", file])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains(#"'\u{1B}[31mloud\u{A}mainpid=1' is not a level"#), "\(refused.stderr)")
        #expect(refused.stderr.contains(#".d/\u{1B}[5m.yaml:2: detector.threshold"#), "\(refused.stderr)")
        #expect(!refused.stderr.contains("\u{1B}"))
        #expect(refused.stderr.split(separator: "\n").count == 2, "one line per problem: \(refused.stderr)")
        let started = try await shaked(["--config", file, "--source", "replay:\(trace)", "--no-socket"])
        #expect(started.status == 64)
        #expect(started.stderr.contains("refusing to start") && started.stderr.contains(#"\u{1B}[31mloud"#))
        #expect(!started.stderr.contains("\u{1B}"), "\(started.stderr)")
    }

    /// The udev helper reads the main file and drop-ins too: a FIFO among them is refused, not waited on (udev
    /// would hold the device's event until its timeout).
    @Test func theUdevHelperDoesNotWaitOnAFIFO() async throws {
        let directory = try Harness.scratch("handover-fifo")
        let file = "\(directory)/shaked.yaml"
        try write("sensor:\n  relay: on\n", to: file)
        #expect(mkdir(file + ".d", 0o755) == 0)
        #expect(mkfifo(file + ".d/fifo.yaml", 0o644) == 0)
        let result = try await shaked(["--config", file, "--udev-handover", "iio:device0"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "")
    }

    /// The helper looks up no account: a group that does not exist (or a directory service that does not answer)
    /// does not decide the hand-over, which depends on the sensor's settings alone.
    @Test(.enabled(if: Harness.hasUmockdev, "umockdev-run is not installed"))
    func theUdevHelperLooksUpNoAccount() async throws {
        let directory = try Harness.scratch("handover-accounts")
        try await Harness.shakectl(
            [
                "synth", "--before", "1", "--after", "1", "--duration", "1.2", "--seed", "3", "--out",
                "\(directory)/t.csv",
            ])
        try await Harness.shakectl(["simulate-device", "\(directory)/t.csv", "--out", directory, "--shape", "buffered"])
        let file = "\(directory)/shaked.yaml"
        try write("sensor:\n  relay: on\naccess:\n  samples: [group:no-such-group-for-shaked]\n", to: file)
        let device = [Harness.umockdevRun!, "--device", "\(directory)/device.umockdev", "--"]
        let result = try await shaked(["--config", file, "--udev-handover", "iio:device0"], under: device)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "SHAKED_OWNS=1\n")
        // The daemon does look them up, and refuses the file.
        let checked = try await shaked(["--check-config", file])
        #expect(checked.stderr.contains("no group named 'no-such-group-for-shaked'"), "\(checked.stderr)")
    }
}
