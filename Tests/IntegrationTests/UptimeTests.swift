// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeTestSupport
import Testing

/// `status`'s uptime is counted on a monotonic clock: a step of the wall clock does not change it.
@Suite(.serialized)
struct UptimeTests {
    static func uptime(_ socket: String) async throws -> Double? {
        let status = try await Command.run("shakectl", ["status", "--socket", socket, "--json"])
        let object = try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        return object?["uptime"] as? Double
    }

    @Test func aStepOfTheWallClockDoesNotChangeTheUptime() async throws {
        let directory = try Harness.scratch("uptime")
        let preload = "\(directory)/wall-clock-step.so"
        let built = try await Command.run(
            "/usr/bin/cc", ["-shared", "-fPIC", "-o", preload, Fixtures.path("wall-clock-step.c"), "-ldl"])
        #expect(built.status == 0, "\(built.stderr)")
        let step = "\(directory)/stepped"
        let socket = "\(directory)/shaked.sock"
        let daemon = try DaemonProcess(
            command: [
                "/usr/bin/env", "LD_PRELOAD=\(preload)", "WALL_CLOCK_STEP=\(step)", Harness.product("shaked"),
                "--source", "replay:\(Fixtures.path("shake-horizontal-100hz.csv"))", "--loop", "--socket", socket,
            ],
            pidFile: "\(directory)/daemon.pid")
        defer { _ = daemon.stop() }
        let listening = await daemon.wait(timeout: 10) { _ in UnixSocket.isListening(socket) }
        #expect(listening, "\(daemon.stderr)")
        let before = try #require(try await Self.uptime(socket))
        // The wall clock moves a day ahead.
        #expect(FileManager.default.createFile(atPath: step, contents: nil))
        let after = try #require(try await Self.uptime(socket))
        #expect(after >= before)
        #expect(after < before + 600, "uptime \(before) s, then \(after) s after the wall clock was stepped")
    }
}
