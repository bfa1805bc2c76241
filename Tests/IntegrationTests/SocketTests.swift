// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeTestSupport
import ShakeTrace
import Testing

/// The daemon's socket end to end: the real `shaked` and the real `shakectl` client commands.
@Suite(.serialized)
struct SocketTests {
    func startDaemon(_ name: String, trace: String, arguments: [String] = []) async throws -> (
        DaemonProcess, socket: String, directory: String
    ) {
        try await Harness.startReplayDaemon(name, trace: trace, arguments: arguments)
    }

    func lines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    @Test func listenStatusSimulateExecAndRecord() async throws {
        let (daemon, socket, directory) = try await startDaemon(
            "client", trace: Fixtures.path("shake-horizontal-100hz.csv"), arguments: ["--loop", "--speed", "2"])
        defer { _ = daemon.stop(signal: SIGTERM) }

        // Three, so that a listener that subscribes in the middle of a shake (its `ended` first) still has a
        // whole one.
        let listened = try await Command.run(
            "shakectl", ["listen", "--socket", socket, "--json", "--count", "3", "--phases", "began,ended"])
        #expect(listened.status == 0, "\(listened.stderr)")
        let events = Array(lines(listened.stdout).drop { $0["phase"] as? String != "began" }.prefix(2))
        #expect(events.map { $0["phase"] as? String } == ["began", "ended"])
        let seqs = events.compactMap { $0["seq"] as? Int }
        #expect(seqs.count == 2 && seqs[1] == seqs[0] + 1)
        #expect(events.allSatisfy { ($0["timestamp"] as? String)?.hasSuffix("Z") == true })

        let status = try await Command.run("shakectl", ["status", "--socket", socket, "--json"])
        let object = lines(status.stdout).first ?? [:]
        #expect(object["event"] as? String == "status")
        #expect((object["sensor"] as? [String: Any])?["source"] as? String == "replay")
        #expect(((object["counters"] as? [String: Any])?["samples"] as? Int ?? 0) > 0)
        let readable = try await Command.run("shakectl", ["status", "--socket", socket])
        #expect(readable.stdout.contains("sensor:       replay"))

        // A simulated shake reaches a listener marked as such.
        let listener = try DaemonProcess(
            [Harness.product("shakectl"), "listen", "--socket", socket, "--json", "--phases", "ended"],
            pidFile: "\(directory)/none")
        defer { _ = listener.stop(signal: SIGTERM) }
        _ = await listener.wait(timeout: 5) { $0.stderr.contains("connected") }
        let simulated = try await Command.run("shakectl", ["simulate", "--socket", socket])
        #expect(simulated.status == 0, "\(simulated.stderr)")
        let sawSimulated = await listener.wait(timeout: 10) { $0.stdout.contains(#""simulated":true"#) }
        #expect(sawSimulated)

        // exec: the undo handler, with the event in its environment.
        let marker = "\(directory)/undo.txt"
        let exec = try await Command.run(
            "shakectl",
            [
                "exec", "--socket", socket, "--count", "1", "--", "sh", "-c",
                "echo \"$SHAKE_PHASE $SHAKE_SEQ $SHAKE_AXIS $SHAKE_REVERSALS\" >> '\(marker)'; "
                    + "env | grep '^SHAKE_' | cut -d= -f1 > '\(marker).env'",
            ])
        #expect(exec.status == 0, "\(exec.stderr)")
        let written = (try? String(contentsOfFile: marker, encoding: .utf8)) ?? ""
        let fields = written.split(separator: " ")
        #expect(fields.first == "ended")
        #expect(fields.count == 4 && Int(fields[1]) != nil && Int(fields[3].trimmingCharacters(in: .newlines)) != nil)
        // Every variable exec sets is documented: in its --help, the README and shakectl(1).
        let variables = try String(contentsOfFile: "\(marker).env", encoding: .utf8).split(separator: "\n")
        #expect(variables.count >= 8)
        let help = try await Command.run("shakectl", ["exec", "--help"]).stdout
        let readme = try String(contentsOf: Fixtures.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let manual = try String(
            contentsOf: Fixtures.repository.appendingPathComponent("man/shakectl.1"), encoding: .utf8)
        for variable in variables {
            #expect(help.contains(variable), "exec --help does not mention \(variable)")
            #expect(readme.contains(variable), "README.md does not mention \(variable)")
            #expect(manual.contains(variable), "shakectl(1) does not mention \(variable)")
        }

        // record: a trace that the detector reads back.
        let recorded = "\(directory)/recorded.csv"
        let record = try await Command.run(
            "shakectl", ["record", "--socket", socket, "--seconds", "1.5", "--out", recorded])
        #expect(record.status == 0, "\(record.stderr)")
        let samples = try TraceFile.read(path: recorded)
        #expect(samples.count > 50)
        #expect(zip(samples.dropFirst(), samples).allSatisfy { $0.time > $1.time })
    }

    /// A simulated shake's events are paced on an event loop's timer, not on `ContinuousClock.sleep`: that one is
    /// libdispatch's timer, which resumes the task on a worker of dispatch's default queue, and once that pool has
    /// worked its manager looks at it every second for the rest of the process (measured: 1.1 wake-ups a second
    /// after one `shakectl simulate`, none before). Seen right after the shake: no worker of that queue (named
    /// `com.apple.root.default-qos`, of which the kernel keeps the last 15 characters). The threads of the
    /// overcommit queue, which the signal sources use, come and go and are not counted.
    @Test func aSimulatedShakeStartsNoDispatchWorker() async throws {
        let (daemon, socket, directory) = try await startDaemon(
            "simulate-threads", trace: Fixtures.path("shake-horizontal-100hz.csv"), arguments: ["--loop"])
        defer { _ = daemon.stop(signal: SIGTERM) }
        let pid = try #require(daemon.daemonPID)
        func dispatchThreads() -> [String] {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            return tasks.compactMap { try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/comm", encoding: .utf8) }
                .map { $0.trimmingCharacters(in: .newlines) }.filter {
                    $0.contains("qos") && !$0.hasSuffix("overcommit")
                }
        }
        let listener = try DaemonProcess(
            [Harness.product("shakectl"), "listen", "--socket", socket, "--json", "--phases", "ended"],
            pidFile: "\(directory)/none")
        defer { _ = listener.stop(signal: SIGTERM) }
        #expect(await listener.wait(timeout: 10) { $0.stderr.contains("connected") })
        let simulated = try await Command.run("shakectl", ["simulate", "--socket", socket])
        #expect(simulated.status == 0, "\(simulated.stderr)")
        #expect(await listener.wait(timeout: 10) { $0.stdout.contains(#""simulated":true"#) })
        #expect(dispatchThreads().isEmpty)
    }

    @Test func sigtermDuringAShakeReachesSubscribersBeforeTheSocketCloses() async throws {
        let directory = try Harness.scratch("sigterm")
        let trace = "\(directory)/long.csv"
        // The trace is replayed at a fifth of real time: the shake begins 1 s into it (5 s of wall time) and is cut
        // off as too long 4 s of trace later (20 s of wall time), so the test has about 25 s from the daemon's start
        // to connect its listener and send SIGTERM. (Paced in real time, a listener connected late on a loaded
        // machine heard the replayed `began` together with `too_long`.)
        try await Harness.shakectl(["synth", "--before", "1", "--duration", "5", "--after", "0", "--out", trace])
        let (daemon, socket, _) = try await startDaemon("sigterm-daemon", trace: trace, arguments: ["--speed", "0.2"])
        // From the start of the run (`--since 0`): a listener that subscribes after the shake began, on a loaded
        // machine, still hears it.
        let listener = try DaemonProcess(
            [Harness.product("shakectl"), "listen", "--socket", socket, "--json", "--no-reconnect", "--since", "0"],
            pidFile: "\(directory)/none")
        defer { _ = listener.stop(signal: SIGTERM) }
        let began = await listener.wait(timeout: 20) { $0.stdout.contains(#""phase":"began""#) }
        #expect(began)
        #expect(await daemon.stop(signal: SIGTERM) == 0)
        let cancelled = await listener.wait(timeout: 5) { $0.stdout.contains(#""reason":"interrupted""#) }
        #expect(cancelled, "listener saw: \(listener.stdout)")
        #expect(!FileManager.default.fileExists(atPath: socket))
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-socket-activate")))
    func socketActivation() async throws {
        let directory = try Harness.scratch("activation")
        let socket = "\(directory)/activated.sock"
        let pidFile = "\(directory)/pid"
        let command = [
            "/usr/bin/systemd-socket-activate", "--listen=\(socket)", Harness.product("shaked"), "--source",
            "replay:\(Fixtures.path("shake-horizontal-100hz.csv"))", "--loop", "--speed", "2",
        ]
        // setsid puts the activator in a session of its own (it may fork to do so): stop it by the pid it wrote.
        let activator = try DaemonProcess(command: command, pidFile: pidFile, prefix: ["/usr/bin/setsid"])
        defer {
            if let pid = activator.daemonPID {
                kill(pid, SIGTERM)
                let deadline = Date().addingTimeInterval(5)
                while kill(pid, 0) == 0, Date() < deadline { usleep(50_000) }
                if kill(pid, 0) == 0 { kill(pid, SIGKILL) }
            }
            _ = activator.stop(signal: SIGTERM)
        }
        let ready = await activator.wait(timeout: 10) { _ in UnixSocket.isListening(socket) }
        #expect(ready)
        // The first connection starts the daemon, which takes over the passed socket.
        let listened = try await Command.run(
            "/usr/bin/timeout",
            [
                "20", Harness.product("shakectl"), "listen", "--socket", socket, "--json", "--count", "1", "--phases",
                "ended",
            ])
        #expect(listened.status == 0, "listener: \(listened.stderr) activator: \(activator.stderr)")
        #expect(listened.stdout.contains(#""phase":"ended""#))
        let activated = await activator.wait(timeout: 5) {
            $0.stderr.contains("listening on the socket passed by systemd")
        }
        #expect(activated, "\(activator.stderr)")
    }
}

/// `shakectl status` as a person reads it: values in one column (the counters in one of their own), and nothing from the daemon (here a
/// sensor named after a file with an escape sequence in its name) that can drive the terminal.
struct ReadableStatusTests {
    @Test func valuesLineUpAndControlCharactersAreEscaped() async throws {
        let directory = try Harness.scratch("status-readable")
        let trace = "\(directory)/\u{1B}[31mred.csv"
        try FileManager.default.copyItem(atPath: Fixtures.path("walking.csv"), toPath: trace)
        let (daemon, socket, _) = try await Harness.startReplayDaemon(
            "status-readable-daemon", trace: trace, arguments: ["--loop"])
        defer { _ = daemon.stop(signal: SIGTERM) }
        let status = try await Harness.shakectl(["status", "--socket", socket])
        #expect(!status.contains("\u{1B}"))
        #expect(status.contains(#"\u{1B}[31mred.csv"#), "\(status)")
        let lines = status.split(separator: "\n")
        let counterStart = try #require(lines.firstIndex(of: "counters:"))
        #expect(lines.count - counterStart > 8)
        // Where each line's value starts, in the main block and among the counters.
        func columns(_ block: ArraySlice<Substring>) -> Set<Int> {
            Set(
                block.map { line in
                    let afterColon = line[line.index(after: line.firstIndex(of: ":")!)...]
                    return line.count - afterColon.drop(while: { $0 == " " }).count
                })
        }
        #expect(columns(lines[..<counterStart]) == [14], "\(status)")
        #expect(columns(lines[(counterStart + 1)...]).count == 1, "\(status)")
    }
}

/// `status` counts the others: the connection asking is not among the subscribers it reports; a replay says so.
struct StatusCountsOthersTests {
    @Test func theAskingConnectionIsNotASubscriber() async throws {
        let (daemon, socket, directory) = try await Harness.startReplayDaemon(
            "status-others", trace: Fixtures.path("walking.csv"), arguments: ["--loop"])
        defer { _ = daemon.stop() }
        func status() async throws -> [String: Any] {
            let text = try await Harness.shakectl(["status", "--socket", socket, "--json"])
            return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        }
        #expect(try await status()["subscribers"] as? Int == 0)
        #expect((try await status()["sensor"] as? [String: Any])?["state"] as? String == "replaying")
        let listener = try DaemonProcess(
            [Harness.product("shakectl"), "listen", "--socket", socket], pidFile: "\(directory)/none")
        defer { _ = listener.stop() }
        #expect(await listener.wait(timeout: 10) { $0.stderr.contains("connected") })
        #expect(try await status()["subscribers"] as? Int == 1)
        #expect(
            try await Harness.shakectl(["status", "--socket", socket]).contains(
                "subscribers:  1 (besides this status request)"))
    }
}

/// Subscribers that start before the daemon, or find it full, say so and keep trying.
@Suite(.serialized)
struct WaitingSubscriberTests {
    @Test func listenSaysItIsWaitingThenConnects() async throws {
        let directory = try Harness.scratch("waiting")
        let socket = "\(directory)/later.sock"
        let listener = try DaemonProcess(
            [Harness.product("shakectl"), "listen", "--socket", socket, "--phases", "ended", "--count", "1"],
            pidFile: "\(directory)/none")
        defer { _ = listener.stop() }
        let waited = await listener.wait(timeout: 10) {
            $0.stderr.contains("waiting for the daemon: cannot connect to \(socket)")
        }
        #expect(waited, "\(listener.stderr)")
        let (daemon, _, _) = try await Harness.startReplayDaemon(
            "waiting-daemon", trace: Fixtures.path("shake-horizontal-100hz.csv"), socket: socket, arguments: ["--loop"])
        defer { _ = daemon.stop() }
        let got = await listener.wait(timeout: 20) { $0.stdout.contains("ended") }
        #expect(got, "\(listener.stderr)")
        // Said once for the outage, not once per try.
        #expect(listener.stderr.components(separatedBy: "waiting for the daemon").count == 2, "\(listener.stderr)")
    }

    /// `too_many_clients` is worth waiting out: exec (the shake-to-undo unit's command) keeps trying, and gets in
    /// once a slot frees.
    @Test func aFullDaemonIsWaitedOut() async throws {
        let directory = try Harness.scratch("full")
        let config = "\(directory)/one-client.yaml"
        try "clients:\n  max_clients: 1\n".write(toFile: config, atomically: true, encoding: .utf8)
        let (daemon, socket, _) = try await Harness.startReplayDaemon(
            "full-daemon", trace: Fixtures.path("shake-horizontal-100hz.csv"),
            arguments: ["--loop", "--config", config])
        defer { _ = daemon.stop() }
        let holder = try DaemonProcess(
            [Harness.product("shakectl"), "listen", "--socket", socket], pidFile: "\(directory)/none")
        #expect(await holder.wait(timeout: 10) { $0.stderr.contains("connected") }, "\(holder.stderr)")
        let marker = "\(directory)/ran"
        let exec = try DaemonProcess(
            [Harness.product("shakectl"), "exec", "--socket", socket, "--count", "1", "--", "touch", marker],
            pidFile: "\(directory)/none")
        defer { _ = exec.stop() }
        let waited = await exec.wait(timeout: 10) { $0.stderr.contains("waiting for the daemon") }
        #expect(waited, "\(exec.stderr)")
        #expect(exec.stderr.contains("too_many_clients"), "\(exec.stderr)")
        _ = await holder.stop()
        let ran = await exec.wait(timeout: 30) { _ in FileManager.default.fileExists(atPath: marker) }
        #expect(ran, "\(exec.stderr)")
    }
}
