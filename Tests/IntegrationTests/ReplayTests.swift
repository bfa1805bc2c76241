// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeTestSupport
import Testing

/// `shaked --source replay:FILE`: pacing, looping, and shutdown by signal.
@Suite(.serialized)
struct ReplayTests {
    func start(_ arguments: [String], name: String) throws -> DaemonProcess {
        let directory = try Harness.scratch(name)
        let pidFile = "\(directory)/daemon.pid"
        return try DaemonProcess(
            command: [Harness.product("shaked"), "--print-events", "--no-socket"] + arguments, pidFile: pidFile)
    }

    @Test func aReplayAsFastAsPossiblePrintsTheEventsAndExits() async throws {
        let result = try await Command.run(
            "shaked",
            [
                "--source", "replay:\(Fixtures.path("shake-horizontal-100hz.csv"))", "--speed", "0", "--print-events",
                "--no-socket",
            ])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix(#"{"event":"shake","phase":"began","time":"#) == true)
        #expect(lines.last?.contains(#""phase":"ended""#) == true)
    }

    @Test func aSignalDuringAShakeCancelsItAsInterruptedAndExitsZero() async throws {
        let directory = try Harness.scratch("long")
        let trace = "\(directory)/long.csv"
        try await Harness.shakectl(["synth", "--before", "0.8", "--duration", "5", "--after", "0", "--out", trace])
        let daemon = try start(["--source", "replay:\(trace)", "--speed", "2"], name: "signal")
        let began = await daemon.wait(timeout: 10) { $0.outline == ["began"] }
        #expect(began)
        let status = await daemon.stop(signal: SIGINT)
        #expect(status == 0)
        #expect(daemon.outline == ["began", "cancelled(interrupted)"])
    }

    @Test func loopingKeepsTheClockGoingForward() async throws {
        let daemon = try start(
            ["--source", "replay:\(Fixtures.path("shake-horizontal-100hz.csv"))", "--speed", "0", "--loop"],
            name: "loop")
        let twice = await daemon.wait(timeout: 10) { $0.outline.filter { $0 == "ended" }.count >= 3 }
        let status = await daemon.stop()
        #expect(twice)
        #expect(status == 0)
        let times = daemon.events.compactMap { $0["time"] as? Double }
        // Event times never decrease (a shake interrupted by the stop is cancelled at its last sample, which
        // can be the sample that began it).
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(times.count >= 6 && times.last! > times.first! + 3)
    }

    @Test func badOptionsExitSixtyFour() async throws {
        let result = try await Command.run("shaked", ["--source", "bogus"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--source must be iio, iio:URI or replay:FILE"))
        let help = try await Command.run("shaked", ["--help"])
        #expect(help.stdout.contains("replay:FILE") && help.stdout.contains("SIGTERM"))
    }

    @Test func anUnreadableTraceExitsOne() async throws {
        let result = try await Command.run("shaked", ["--source", "replay:/nonexistent.csv", "--speed", "0"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("/nonexistent.csv: no such file"))
    }
}

/// Replays whose timing is absurd: a sane run or a clear error, never a trap or a spinning core.
@Suite(.serialized)
struct DegenerateReplayTests {
    static func trace(_ name: String, _ rows: String) throws -> String {
        let path = try Harness.scratch(name) + "/trace.csv"
        try ("time,x,y,z\n" + rows).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Waits of years (a 1e13 s gap, or --speed 1e-15) are waited, not converted into a trap; SIGTERM ends them.
    @Test(arguments: [
        ("huge-gap", "0,0,0,9.8\n0.01,0,0,9.8\n1e13,0,0,9.8\n", ["--speed", "1"]),
        ("slow", "0,0,0,9.8\n0.01,0,0,9.8\n0.02,0,0,9.8\n", ["--speed", "1e-15"]),
    ])
    func aFarAwaySampleIsWaitedFor(name: String, rows: String, options: [String]) async throws {
        let path = try Self.trace(name, rows)
        let directory = (path as NSString).deletingLastPathComponent
        let daemon = try DaemonProcess(
            command: [Harness.product("shaked"), "--source", "replay:\(path)", "--no-socket", "--print-events"]
                + options,
            pidFile: "\(directory)/daemon.pid")
        let replaying = await daemon.wait(timeout: 10) { $0.stderr.contains("replaying") }
        #expect(replaying, "\(daemon.stderr)")
        try? await Task.sleep(for: .seconds(0.5))
        #expect(await daemon.stop(signal: SIGTERM) == 0, "\(daemon.stderr)")
    }

    @Test(arguments: [
        ("infinite", "0,0,0,9.8\ninf,0,0,9.8\n", [String](), "a sample's time is not a number"),
        ("equal", "5,0,0,9.8\n5,1,0,9.8\n5,0,0,9.8\n", ["--loop"], "its times do not advance"),
        ("backwards", "5,0,0,9.8\n4,1,0,9.8\n3,0,0,9.8\n", ["--loop"], "its times do not advance"),
    ])
    func aTraceThatCannotBePacedIsAClearError(name: String, rows: String, options: [String], message: String)
        async throws
    {
        let path = try Self.trace(name, rows)
        let result = try await Command.run(
            "/usr/bin/timeout",
            ["20", Harness.product("shaked"), "--source", "replay:\(path)", "--no-socket", "--print-events"] + options)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }
}
