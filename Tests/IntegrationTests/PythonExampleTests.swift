// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeTestSupport
import Testing

/// `examples/python/shake_listener.py`, the protocol's example subscriber, against the real daemon on a real
/// socket: it must print the daemon's events in order and survive a daemon restart.
@Suite(.serialized, .enabled(if: PythonExample.isAvailable, "no python3 found"))
struct PythonExampleTests {
    /// The daemon replays a trace with one shake (began at 1.6 s, ended at 3.1 s on the trace's clock), four
    /// times faster than real time and over and over: a shake (two events) about every second.
    func startDaemon(socket: String, directory: String, name: String) throws -> DaemonProcess {
        let pidFile = "\(directory)/\(name).pid"
        let command = [
            Harness.product("shaked"), "--source", "replay:\(Fixtures.path("shake-horizontal-100hz.csv"))",
            "--speed", "4", "--loop", "--socket", socket,
        ]
        return try DaemonProcess(command: command, pidFile: pidFile)
    }

    func startListener(_ arguments: [String], directory: String) throws -> DaemonProcess {
        let pidFile = "\(directory)/listener.pid"
        return try DaemonProcess(
            command: [PythonExample.interpreter!, PythonExample.script] + arguments, pidFile: pidFile)
    }

    /// The first shake of the run: began (seq 1) and ended (seq 2), then exit 0 because of `--count 2`.
    ///
    /// The daemon starts replaying as soon as it starts, whether anybody listens or not, so a listener that
    /// connects late would see the run's later shakes only; `--since 0` asks for the daemon's replay ring on
    /// the first connection too, which makes seq 1 and 2 certain (and checks replay on the way).
    @Test func theListenerPrintsTheFirstShakeAndExitsAfterCount() async throws {
        let directory = try Harness.scratch("python-count")
        let socket = "\(directory)/shaked.sock"
        let daemon = try startDaemon(socket: socket, directory: directory, name: "daemon")
        defer { _ = end(daemon) }
        let listener = try startListener(
            ["--socket", socket, "--json", "--count", "2", "--since", "0"], directory: directory)
        defer { _ = end(listener) }

        await listener.wait(timeout: 20) { _ in false }  // Returns as soon as the listener exits.
        let status = await end(listener)
        #expect(status == 0, "the listener's standard error: \(listener.stderr)")
        let events = listener.events
        #expect(events.count == 2, "the listener printed: \(listener.stdout)")
        #expect(events.map { $0["event"] as? String } == ["shake", "shake"])
        #expect(events.map { $0["phase"] as? String } == ["began", "ended"])
        #expect(events.map { $0["seq"] as? Int } == [1, 2])
        #expect(events.allSatisfy { ($0["timestamp"] as? String)?.hasSuffix("Z") == true })
        #expect(listener.stderr.contains("connected to \(socket)"))
    }

    /// The daemon is killed (SIGKILL, leaving its socket file behind) and started again while the listener
    /// runs: the listener reconnects, sees the new "run", and prints the new run's events from seq 1 on,
    /// with no gap and no duplicate in either run.
    @Test func theListenerSurvivesADaemonRestart() async throws {
        let directory = try Harness.scratch("python-restart")
        let socket = "\(directory)/shaked.sock"
        let first = try startDaemon(socket: socket, directory: directory, name: "first")
        var second: DaemonProcess?
        defer {
            _ = end(first, signal: SIGKILL)
            if let second { _ = end(second) }
        }
        let listener = try startListener(["--socket", socket, "--json", "--since", "0"], directory: directory)
        defer { _ = end(listener) }

        let firstRun = await listener.wait(timeout: 20) { runs(of: $0).first?.count ?? 0 >= 2 }
        try #require(firstRun, "no events from the first run; the listener's standard error: \(listener.stderr)")
        _ = await end(first, signal: SIGKILL)
        second = try startDaemon(socket: socket, directory: directory, name: "second")

        let secondRun = await listener.wait(timeout: 20) { runs(of: $0).count == 2 && runs(of: $0)[1].count >= 2 }
        let status = await end(listener)
        #expect(secondRun, "the listener's output: \(listener.stdout)\nits standard error: \(listener.stderr)")
        #expect(status == 0, "SIGTERM ends the listener cleanly")

        let seqRuns = runs(of: listener)
        #expect(seqRuns.count == 2, "seq numbers printed: \(seqRuns)")
        for seqs in seqRuns {
            #expect(seqs == Array(1...max(1, seqs.count)), "each run is numbered from 1 without gaps: \(seqs)")
        }
        let phases = listener.events.compactMap { $0["phase"] as? String }
        #expect(Array(phases.prefix(2)) == ["began", "ended"])
        #expect(listener.stderr.contains("new daemon run"))
        #expect(listener.stderr.components(separatedBy: "connected to \(socket)").count - 1 == 2)
    }

    /// `--phases ended` with a replay: the subscription applies to the replay too, so the first thing printed
    /// is seq 2 (seq 1 was a `began`), in the readable format.
    @Test func phasesNarrowTheReplayAndTheReadableFormat() async throws {
        let directory = try Harness.scratch("python-phases")
        let socket = "\(directory)/shaked.sock"
        let daemon = try startDaemon(socket: socket, directory: directory, name: "daemon")
        defer { _ = end(daemon) }
        let listener = try startListener(
            ["--socket", socket, "--phases", "ended", "--count", "1", "--since", "0"], directory: directory)
        defer { _ = end(listener) }

        await listener.wait(timeout: 20) { _ in false }
        let status = await end(listener)
        #expect(status == 0, "the listener's standard error: \(listener.stderr)")
        let lines = listener.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("#2 ") == true, "the listener printed: \(listener.stdout)")
        #expect(lines.first?.contains("shake ended after") == true)
        #expect(lines.first?.contains("axis x") == true)
    }
}

/// Sends `signal` to a process that still runs and waits for it to exit, with SIGKILL after `timeout` seconds
/// so that a test never hangs on a child that does not stop. - Returns: its exit status (-1 when killed).
private func end(_ process: DaemonProcess, signal: Int32 = SIGTERM, timeout: Double = 5) async -> Int32 {
    await process.stop(signal: signal, timeout: timeout)
}

/// ``end(_:signal:timeout:)`` for `defer`, which cannot await: it holds its thread while the process ends.
private func end(_ process: DaemonProcess, signal: Int32 = SIGTERM, timeout: Double = 5) -> Int32 {
    process.stop(signal: signal, timeout: timeout)
}

/// The seq numbers a listener printed, split where they start again (a new daemon run).
private func runs(of listener: DaemonProcess) -> [[Int]] {
    var runs: [[Int]] = []
    for seq in listener.events.compactMap({ $0["seq"] as? Int }) {
        if let last = runs.last?.last, seq > last {
            runs[runs.count - 1].append(seq)
        } else {
            runs.append([seq])
        }
    }
    return runs
}

/// Where the example and a Python 3 to run it are.
enum PythonExample {
    static let script = Fixtures.repository.appendingPathComponent("examples/python/shake_listener.py").path

    /// `/usr/bin/python3` when present, else the first `python3` on `PATH`.
    static let interpreter: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates =
            ["/usr/bin/python3"] + path.split(separator: ":").map { "\($0)/python3" } + ["/usr/local/bin/python3"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    static var isAvailable: Bool {
        if interpreter == nil {
            print("PythonExampleTests: skipping: no python3 in /usr/bin or on PATH")
        }
        return interpreter != nil
    }
}
