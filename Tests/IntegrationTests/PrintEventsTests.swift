// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeTestSupport
import Testing

/// `--print-events` into a pipe nobody reads: standard output has its own bounded queue and writer, so capture
/// and the socket's subscribers carry on, and what was not printed is counted and logged.
@Suite(.serialized)
struct PrintEventsTests {
    @Test func aPipeNobodyReadsHoldsUpNeitherCaptureNorTheSubscribers() async throws {
        let directory = try Harness.scratch("unread-stdout")
        let socket = "\(directory)/shaked.sock"
        // About 500 events a second: the pipe (one page) is full after a few dozen, the queue soon after.
        let daemon = try DaemonProcess(
            command: [
                Harness.product("shaked"), "--source", "replay:\(Fixtures.path("shake-horizontal-100hz.csv"))",
                "--loop", "--speed", "1000", "--print-events", "--socket", socket,
            ],
            pidFile: "\(directory)/daemon.pid", unreadStandardOutput: true)
        defer { _ = daemon.stop() }
        let listening = await daemon.wait(timeout: 10) { _ in UnixSocket.isListening(socket) }
        #expect(listening, "\(daemon.stderr)")

        // A stalled standard output is said once, as the queue overflows.
        let stalled = await daemon.wait(timeout: 30) { $0.stderr.contains("standard output is not being read") }
        #expect(stalled, "\(daemon.stderr)")
        // The detector and the socket go on meanwhile: a subscriber gets a thousand more events (2 s in this
        // build; a sanitizer's replay runs far slower, some 16 events a second under AddressSanitizer on a busy
        // machine, so it is given HostileClientTests.slowdown times as long).
        let listened = try await Command.run(
            "/usr/bin/timeout",
            [
                "\(Int(30 * HostileClientTests.slowdown))", Harness.product("shakectl"), "listen", "--socket", socket,
                "--json", "--count", "1000",
                "--phases", "began,ended",
            ])
        #expect(listened.status == 0, "\(listened.stderr)")
        #expect(listened.stdout.split(separator: "\n").count == 1000)

        #expect(await daemon.stop() == 0, "\(daemon.stderr)")
        let log = daemon.stderr
        #expect(log.components(separatedBy: "standard output is not being read").count == 2, "\(log)")
        // At the end, the count of what was never printed.
        let summary = log.split(separator: "\n").first { $0.contains("events were not printed") } ?? ""
        let dropped = summary.firstMatch(of: /dropped=(\d+)/).flatMap { Int($0.1) } ?? 0
        #expect(dropped > 1000, "\(summary)")
    }
}
