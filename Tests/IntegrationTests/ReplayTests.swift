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

    @Test func aReplayAsFastAsPossiblePrintsTheEventsAndExits() throws {
        let result = try Command.run(
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

    @Test func aSignalDuringAShakeCancelsItAsInterruptedAndExitsZero() throws {
        let directory = try Harness.scratch("long")
        let trace = "\(directory)/long.csv"
        try Harness.shakectl(["synth", "--before", "0.8", "--duration", "5", "--after", "0", "--out", trace])
        let daemon = try start(["--source", "replay:\(trace)", "--speed", "2"], name: "signal")
        let began = daemon.wait(timeout: 10) { $0.outline == ["began"] }
        #expect(began)
        let status = daemon.stop(signal: SIGINT)
        #expect(status == 0)
        #expect(daemon.outline == ["began", "cancelled(interrupted)"])
    }

    @Test func loopingKeepsTheClockGoingForward() throws {
        let daemon = try start(
            ["--source", "replay:\(Fixtures.path("shake-horizontal-100hz.csv"))", "--speed", "0", "--loop"],
            name: "loop")
        let twice = daemon.wait(timeout: 10) { $0.outline.filter { $0 == "ended" }.count >= 3 }
        let status = daemon.stop()
        #expect(twice)
        #expect(status == 0)
        let times = daemon.events.compactMap { $0["time"] as? Double }
        // Event times never decrease (a shake interrupted by the stop is cancelled at its last sample, which
        // can be the sample that began it).
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(times.count >= 6 && times.last! > times.first! + 3)
    }

    @Test func badOptionsExitSixtyFour() throws {
        let result = try Command.run("shaked", ["--source", "bogus"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--source must be iio, iio:URI or replay:FILE"))
        let help = try Command.run("shaked", ["--help"])
        #expect(help.stdout.contains("replay:FILE") && help.stdout.contains("SIGTERM"))
    }

    @Test func anUnreadableTraceExitsOne() throws {
        let result = try Command.run("shaked", ["--source", "replay:/nonexistent.csv", "--speed", "0"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("/nonexistent.csv: no such file"))
    }
}
