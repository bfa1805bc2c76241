// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeConfig
import ShakeTestSupport
import Testing

/// The daemon as a systemd service: configuration, reload, the notify protocol, the journal.
@Suite(.serialized)
struct ServiceTests {
    let trace = Fixtures.path("shake-horizontal-100hz.csv")

    func write(_ text: String, to path: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Starts shaked with `environment` (NAME=value entries) added to its own.
    func start(_ arguments: [String], environment: [String] = [], directory: String) throws -> DaemonProcess {
        try DaemonProcess(
            command: ["/usr/bin/env"] + environment + [Harness.product("shaked")] + arguments,
            pidFile: "\(directory)/daemon.pid")
    }

    // MARK: - Configuration

    @Test func checkConfigValidatesAndReportsTheSettingsInForce() async throws {
        let directory = try Harness.scratch("check")
        let good = "\(directory)/good.yaml"
        try write("detector:\n  threshold: 14\nclients:\n  max_clients: 8\n", to: good)
        let result = try await Command.run("shaked", ["--check-config", good, "--sensitivity", "hard"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\(good): valid"))
        // The command line's preset, with the file's parameter over it.
        #expect(result.stdout.contains("detector: sensitivity hard, threshold 14\n"), "\(result.stdout)")
        #expect(result.stdout.contains("clients:  max_clients 8, "))
        let shipped = try await Command.run(
            "shaked", ["--check-config", Fixtures.repository.appendingPathComponent("config/shaked.yaml").path])
        #expect(shipped.status == 0, "\(shipped.stderr)")
    }

    @Test(arguments: [
        ("sensor:\n  rate: -5\n", "sensor.rate: -5.0 is out of range"),
        ("detector:\n  threshold: soft\n", "detector.threshold: expected a number, found 'soft'"),
        ("socket:\n  mode: rw-rw-rw-\n", "socket.mode: expected an octal mode"),
        ("clients:\n  max_clients: 100000\n", "clients.max_clients: 100000 is out of range; allowed: 1...65536"),
        ("access:\n  samples: [group:no-such-group-here]\n", "access.samples: no group named 'no-such-group-here'"),
        ("logging:\n  level: chatty\n", "logging.level: 'chatty' is not a level"),
        ("detektor:\n  threshold: 12\n", "detektor: unknown section"),
        ("sensor:\n  always_on: 2\n", "sensor.always_on: expected true or false"),
    ])
    func aBadFileIsRefusedNamingTheKey(text: String, message: String) async throws {
        let directory = try Harness.scratch("bad")
        let file = "\(directory)/bad.yaml"
        try write(text, to: file)
        let checked = try await Command.run("shaked", ["--check-config", file])
        #expect(checked.status == 64)
        #expect(checked.stderr.contains("\(file):") && checked.stderr.contains(message), "\(checked.stderr)")
        // At start: refuses to start, saying the same.
        let started = try await Command.run(
            "/usr/bin/timeout",
            ["10", Harness.product("shaked"), "--config", file, "--source", "replay:\(trace)", "--no-socket"])
        #expect(started.status == 64)
        #expect(started.stderr.contains("refusing to start") && started.stderr.contains(message), "\(started.stderr)")
    }

    @Test func theFileSetsWhatTheCommandLineDoesNotAndLosesToIt() async throws {
        let directory = try Harness.scratch("override")
        let file = "\(directory)/shaked.yaml"
        let socket = "\(directory)/from-file.sock"
        try write(
            "sensor:\n  source: replay:\(trace)\nsocket:\n  path: \(socket)\n  mode: \"0600\"\nlogging:\n  level: debug\n",
            to: file)
        let daemon = try start(["--config", file, "--loop", "--log-level", "info"], directory: directory)
        defer { _ = daemon.stop() }
        let listening = await daemon.wait(timeout: 10) { _ in UnixSocket.isListening(socket) }
        #expect(listening, "\(daemon.stderr)")
        var info = stat()
        #expect(stat(socket, &info) == 0 && info.st_mode & 0o777 == 0o600)
        // --log-level info beats the file's debug: no debug lines.
        try? await Task.sleep(for: .seconds(0.5))
        #expect(daemon.stderr.contains("replaying"))
        #expect(!daemon.stderr.contains("debug"), "\(daemon.stderr)")
    }

    // MARK: - Reload

    @Test func sighupAppliesANewFileAndRejectsABadOneKeepingSubscribersAndSettings() async throws {
        let directory = try Harness.scratch("reload")
        let file = "\(directory)/shaked.yaml"
        let socket = "\(directory)/shaked.sock"
        try write("detector:\n  sensitivity: medium\n", to: file)
        let daemon = try start(
            ["--config", file, "--source", "replay:\(trace)", "--loop", "--speed", "3", "--socket", socket],
            directory: directory)
        defer { _ = daemon.stop() }
        #expect(await daemon.wait(timeout: 10) { _ in UnixSocket.isListening(socket) })
        let listener = try DaemonProcess(
            [Harness.product("shakectl"), "listen", "--socket", socket, "--json", "--phases", "ended"],
            pidFile: "\(directory)/none")
        defer { _ = listener.stop() }
        func ended() -> Int { listener.stdout.components(separatedBy: #""phase":"ended""#).count - 1 }
        #expect(await listener.wait(timeout: 10) { _ in ended() >= 1 }, "\(daemon.stderr)")

        // A threshold no hand reaches: after the reload, shakes stop ending.
        try write("detector:\n  sensitivity: medium\n  threshold: 200\n", to: file)
        kill(daemon.daemonPID ?? 0, SIGHUP)
        #expect(await daemon.wait(timeout: 5) { $0.stderr.contains("configuration reloaded") }, "\(daemon.stderr)")
        #expect(daemon.stderr.contains("changed=detector") || daemon.stderr.contains("changed: detector"))
        try? await Task.sleep(for: .seconds(1.5))  // A shake in progress at the reload may still end.
        let before = ended()
        try? await Task.sleep(for: .seconds(3))  // More than two passes of the trace.
        #expect(ended() == before, "events after raising the threshold: \(listener.stdout)")

        // A file that does not validate changes nothing, and says so.
        try write("detector:\n  threshold: banana\n", to: file)
        kill(daemon.daemonPID ?? 0, SIGHUP)
        #expect(await daemon.wait(timeout: 5) { $0.stderr.contains("configuration rejected") }, "\(daemon.stderr)")
        #expect(daemon.stderr.contains("detector.threshold: expected a number"))
        try? await Task.sleep(for: .seconds(3))
        #expect(ended() == before, "the rejected file must not have changed the settings")
        let status = try await Harness.shakectl(["status", "--socket", socket, "--json"])
        #expect(
            status.contains(#""config_reloads":1"#) && status.contains(#""config_reloads_rejected":1"#), "\(status)")

        // Back to the defaults: the same subscriber, never disconnected, sees shakes end again.
        try write("", to: file)
        kill(daemon.daemonPID ?? 0, SIGHUP)
        #expect(await listener.wait(timeout: 10) { _ in ended() > before }, "\(daemon.stderr)")
        #expect(listener.stderr.components(separatedBy: "connected").count - 1 == 1, "\(listener.stderr)")
    }

    // MARK: - systemd's notify protocol

    @Test func notifyReadyWatchdogReloadingAndStopping() async throws {
        let directory = try Harness.scratch("notify")
        let manager = try DatagramSocket(path: "\(directory)/notify.sock")
        let daemon = try start(
            ["--source", "replay:\(trace)", "--loop", "--socket", "\(directory)/shaked.sock"],
            environment: ["NOTIFY_SOCKET=\(manager.path)", "WATCHDOG_USEC=300000"], directory: directory)
        defer { _ = daemon.stop() }
        var messages: [Data] = []
        func texts(_ messages: [Data]) -> [String] { messages.map { String(decoding: $0, as: UTF8.self) } }
        func count(_ prefix: String, _ messages: [Data]) -> Int {
            texts(messages).filter { $0.hasPrefix(prefix) }.count
        }

        #expect(manager.collect(timeout: 10, into: &messages) { count("READY=1", $0) == 1 }, "\(daemon.stderr)")
        // Pings every 150 ms (half of WATCHDOG_USEC): several within a second.
        let pingsBefore = count("WATCHDOG=1", messages)
        #expect(manager.collect(timeout: 5, into: &messages) { count("WATCHDOG=1", $0) >= pingsBefore + 4 })

        kill(daemon.daemonPID ?? 0, SIGHUP)
        #expect(manager.collect(timeout: 5, into: &messages) { count("READY=1", $0) == 2 })
        let sequence = texts(messages).filter { !$0.hasPrefix("WATCHDOG=1") && !$0.hasPrefix("STATUS=") }
        #expect(sequence.count >= 3)
        #expect(sequence.suffix(2).first?.hasPrefix("RELOADING=1\nMONOTONIC_USEC=") == true, "\(sequence)")

        #expect(await daemon.stop(signal: SIGTERM) == 0)
        _ = manager.collect(timeout: 2, into: &messages) { count("STOPPING=1", $0) >= 1 }
        #expect(count("STOPPING=1", messages) >= 1, "\(texts(messages))")
    }

    /// Shutdown, by a signal or by the end of a replay, tells systemd STOPPING once, and the daemon exits 0.
    @Test(arguments: [true, false])
    func stoppingIsSentOnce(bySignal: Bool) async throws {
        let directory = try Harness.scratch("stopping")
        let manager = try DatagramSocket(path: "\(directory)/notify.sock")
        let daemon = try start(
            ["--source", "replay:\(trace)", "--socket", "\(directory)/shaked.sock"] + (bySignal ? ["--loop"] : []),
            environment: ["NOTIFY_SOCKET=\(manager.path)"], directory: directory)
        defer { _ = daemon.stop() }
        var messages: [Data] = []
        func count(_ prefix: String, in messages: [Data]) -> Int {
            messages.map { String(decoding: $0, as: UTF8.self) }.filter { $0.hasPrefix(prefix) }.count
        }
        #expect(
            manager.collect(timeout: 10, into: &messages) { count("READY=1", in: $0) == 1 }, "\(daemon.stderr)")
        if bySignal {
            #expect(await daemon.stop(signal: SIGTERM) == 0, "\(daemon.stderr)")
        } else {
            // The trace plays once at its own pace, then the daemon stops by itself.
            #expect(await daemon.wait(timeout: 60) { $0.stderr.contains("stopped") }, "\(daemon.stderr)")
            #expect(await daemon.stop() == 0, "\(daemon.stderr)")
        }
        // Everything the daemon sent has arrived once it exited; nothing more comes.
        _ = manager.collect(timeout: 1, into: &messages) { _ in false }
        #expect(count("STOPPING=1", in: messages) == 1, "\(messages.map { String(decoding: $0, as: UTF8.self) })")
    }

    // MARK: - The journal

    /// Runs only where no journal is running (as in a container) and the test may create its socket.
    static var canFakeTheJournal: Bool {
        getuid() == 0 && !FileManager.default.fileExists(atPath: "/run/systemd/journal/socket")
    }

    @Test(.enabled(if: canFakeTheJournal))
    func underSystemdEventsAndRefusalsGoToTheJournalWithFields() async throws {
        let directory = try Harness.scratch("journal")
        try FileManager.default.createDirectory(atPath: "/run/systemd/journal", withIntermediateDirectories: true)
        let journal = try DatagramSocket(path: "/run/systemd/journal/socket")
        let socket = "\(directory)/shaked.sock"
        // JOURNAL_STREAM names the daemon's own standard error, as systemd would.
        let pidFile = "\(directory)/daemon.pid"
        let command = [
            Harness.product("shaked"), "--source", "replay:\(trace)", "--loop", "--speed", "3", "--socket", socket,
        ]
        .map { "'\($0)'" }.joined(separator: " ")
        let daemon = try DaemonProcess(
            [
                "/bin/sh", "-c",
                "echo $$ > '\(pidFile)'; export JOURNAL_STREAM=$(stat -L -c %d:%i /proc/$$/fd/2); exec \(command)",
            ], pidFile: pidFile)
        defer { _ = daemon.stop() }
        #expect(await daemon.wait(timeout: 10) { _ in UnixSocket.isListening(socket) })
        let listener = try DaemonProcess(
            [Harness.product("shakectl"), "listen", "--socket", socket, "--json"], pidFile: "\(directory)/none")
        defer { _ = listener.stop() }
        var messages: [Data] = []
        func entries(_ messages: [Data]) -> [[String: String]] {
            messages.map { message in
                var fields: [String: String] = [:]
                for line in String(decoding: message, as: UTF8.self).split(separator: "\n") {
                    guard let equals = line.firstIndex(of: "=") else { continue }
                    fields[String(line[..<equals])] = String(line[line.index(after: equals)...])
                }
                return fields
            }
        }
        let sawEnded = journal.collect(timeout: 15, into: &messages) { messages in
            entries(messages).contains { $0["PHASE"] == "ended" }
        }
        #expect(sawEnded, "\(daemon.stderr)")
        let ended = entries(messages).first { $0["PHASE"] == "ended" } ?? [:]
        #expect(ended["MESSAGE"] == "shake ended")
        #expect(ended["PRIORITY"] == "6")
        #expect(ended["SYSLOG_IDENTIFIER"] == "shaked")
        #expect(Int(ended["SEQ"] ?? "") ?? 0 > 0)
        #expect(ended["SENSOR"] == trace)
        #expect(ended["CODE_FILE"] != nil)
        // Nothing went to standard error: it is the journal's, and the entries went there natively.
        #expect(!daemon.stderr.contains("shake ended"))

        // A refusal names the client.
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") {
            let script = """
                import socket,sys
                s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f=s.makefile('rw'); f.readline()
                f.write('{"request":"samples"}\\n'); f.flush(); f.readline()
                """
            let refused = try await Command.run(
                "/usr/bin/setpriv",
                ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script, socket])
            #expect(refused.status == 0, "\(refused.stderr)")
            let sawRefusal = journal.collect(timeout: 5, into: &messages) { messages in
                entries(messages).contains { $0["MESSAGE"] == "refused a request" }
            }
            #expect(sawRefusal)
            let refusal = entries(messages).first { $0["MESSAGE"] == "refused a request" } ?? [:]
            #expect(refusal["CLIENT_UID"] == "65534")
            #expect(refusal["PRIORITY"] == "4")
            #expect(refusal["REQUEST"] == "samples")
            #expect(Int(refusal["CLIENT_PID"] ?? "") ?? 0 > 0)
        }
    }
}

/// Bad samples and reloads while a shake is under way, end to end.
@Suite(.serialized)
struct InProgressShakeTests {
    @Test func nanSamplesAreDroppedCountedAndTheShakeStillEnds() async throws {
        let directory = try Harness.scratch("nan")
        let socket = "\(directory)/shaked.sock"
        let daemon = try DaemonProcess(
            command: [
                Harness.product("shaked"), "--source", "replay:\(Fixtures.path("nan-samples.csv"))", "--loop",
                "--speed", "2", "--socket", socket, "--print-events",
            ], pidFile: "\(directory)/daemon.pid")
        defer { _ = daemon.stop() }
        #expect(await daemon.wait(timeout: 15) { $0.outline.prefix(2) == ["began", "ended"] }, "\(daemon.stderr)")
        let status = try await Harness.shakectl(["status", "--socket", socket, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any]
        let counters = object?["counters"] as? [String: Int] ?? [:]
        #expect((counters["invalid_samples"] ?? 0) > 0, "\(status)")
        #expect(await daemon.stop() == 0)
    }

    @Test func aReloadDuringAShakeKeepsItsOutcome() async throws {
        let directory = try Harness.scratch("reload-mid-shake")
        let trace = "\(directory)/long.csv"
        try await Harness.shakectl([
            "synth", "--before", "1", "--duration", "3", "--after", "1", "--out", trace, "--seed", "5",
        ])
        let file = "\(directory)/shaked.yaml"
        try "detector:\n  sensitivity: medium\n".write(toFile: file, atomically: true, encoding: .utf8)
        // The reload must come while the shake is under way: its 3 s are played at a quarter of real time in a
        // sanitizer's build, whose daemon may take seconds to handle the signal on a busy machine.
        let speed = LoadTests.sanitized ? 0.25 : 1
        let daemon = try DaemonProcess(
            command: [
                Harness.product("shaked"), "--source", "replay:\(trace)", "--config", file, "--no-socket",
                "--print-events", "--speed", "\(speed)",
            ], pidFile: "\(directory)/daemon.pid")
        defer { _ = daemon.stop() }
        #expect(await daemon.wait(timeout: 10 / speed) { $0.outline == ["began"] }, "\(daemon.stderr)")
        // Mid-shake: a new file with different timing and limits, none of which this shake is near.
        try "detector:\n  sensitivity: medium\n  refractory: 2\n  too_long: 8\n".write(
            toFile: file, atomically: true, encoding: .utf8)
        kill(daemon.daemonPID ?? 0, SIGHUP)
        #expect(await daemon.wait(timeout: 5 / speed) { $0.stderr.contains("configuration reloaded") })
        #expect(daemon.outline == ["began"], "the reload must not cut the shake short: \(daemon.outline)")
        #expect(await daemon.wait(timeout: 10 / speed) { $0.outline.count >= 2 })
        #expect(daemon.outline == ["began", "ended"], "\(daemon.stderr)")
        let began = daemon.events.first?["time"] as? Double ?? 0
        #expect((daemon.events.last?["began"] as? Double).map { abs($0 - began) < 0.001 } == true)
    }
}

/// `--socket` is held to the same rule as `socket.path` in the configuration file, before anything starts.
struct SocketOptionTests {
    @Test(arguments: [
        ("", "--socket: empty; expected an absolute path"),
        ("here.sock", "--socket: 'here.sock' is relative; expected an absolute path"),
        (
            "/" + String(repeating: "s", count: 107),
            "--socket: 108 bytes long; a Unix socket's path has at most 107 bytes"
        ),
    ])
    func aSocketPathThatCannotBeOneIsRefused(path: String, message: String) async throws {
        let result = try await Command.run(
            "shaked", ["--source", "replay:\(Fixtures.path("walking.csv"))", "--socket", path])
        #expect(result.status == 64)
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }
}

/// `--check-config` with drop-ins: every file it read, the settings, where each came from, or every problem.
struct CheckConfigTests {
    @Test func showsEveryFileAndWhereEachValueCameFrom() async throws {
        let directory = try Harness.scratch("check-layers")
        let main = "\(directory)/shaked.yaml"
        try "detector:\n  sensitivity: hard\n".write(toFile: main, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: "\(main).d", withIntermediateDirectories: true)
        try "sensor:\n  rate: 200\n".write(toFile: "\(main).d/10-rate.yaml", atomically: true, encoding: .utf8)
        let result = try await Command.run("shaked", ["--check-config", main, "--log-level", "debug"])
        #expect(result.status == 0, "\(result.stderr)")
        let out = result.stdout
        #expect(out.contains("\(main): valid\n\(main).d/10-rate.yaml: valid\n"), "\(out)")
        #expect(out.contains(", rate 200, "))
        #expect(out.contains("detector: sensitivity hard\n"))
        #expect(out.contains("  detector.sensitivity: \(main):2\n"), "\(out)")
        #expect(out.contains("  sensor.rate:          \(main).d/10-rate.yaml:2\n"), "\(out)")
        #expect(out.contains("  logging.level:        the command line (--log-level)\n"), "\(out)")
        #expect(
            out.contains("not default: sensor.rate 200, detector.sensitivity hard, logging.level debug\n"), "\(out)")
    }

    /// The settings are the schema's rows: every key with a value of its own is on its section's line as a file
    /// writes it, so a new key shows by its row alone.
    @Test func showsEveryKeyOfTheSchema() async throws {
        let directory = try Harness.scratch("check-schema")
        let main = "\(directory)/shaked.yaml"
        try "sensor:\n  relay: off\n  range: 8\ndbus:\n  mode: off\n".write(
            toFile: main, atomically: true, encoding: .utf8)
        let result = try await Command.run("shaked", ["--check-config", main])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        var configuration = ShakedConfiguration()
        configuration.sensor.relay = .off
        configuration.sensor.range = .atLeast(8)
        configuration.dbus.mode = .off
        var shown = 0
        for key in ShakedConfiguration.schema.keys {
            guard let value = key.value(configuration) else { continue }
            let line = lines.first { $0.hasPrefix("\(key.section):") } ?? ""
            #expect(
                line.contains(" \(key.name) \(value),") || line.hasSuffix(" \(key.name) \(value)"),
                "\(key.path) \(value) is not shown: \(result.stdout)")
            shown += 1
        }
        #expect(shown >= 25)
    }

    @Test func reportsEveryProblemNotOnlyTheFirst() async throws {
        let directory = try Harness.scratch("check-problems")
        let main = "\(directory)/shaked.yaml"
        try "sensor:\n  rate: fast\n".write(toFile: main, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: "\(main).d", withIntermediateDirectories: true)
        try "clients:\n  max_clients: 0\n".write(toFile: "\(main).d/10-c.yaml", atomically: true, encoding: .utf8)
        let result = try await Command.run("shaked", ["--check-config", main])
        #expect(result.status == 64)
        #expect(
            result.stderr
                == "shaked: \(main):2: sensor.rate: expected a number, found 'fast'\n"
                + "shaked: \(main).d/10-c.yaml:2: clients.max_clients: 0 is out of range; allowed: 1...65536\n")
    }

    @Test(.enabled(if: !FileManager.default.fileExists(atPath: "/etc/shaked/shaked.yaml")))
    func withoutAFileItStillShowsTheSettings() async throws {
        let result = try await Command.run("shaked", ["--check-config"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("the built-in defaults apply"))
        #expect(result.stdout.contains("detector: sensitivity medium\n"))
        #expect(result.stdout.contains("every value is the default"))
    }
}
