// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeTestSupport
import Testing

/// The real daemon (`shaked --source iio --print-events`) on accelerometers simulated by umockdev from traces
/// that `shakectl synth` makes and `shakectl simulate-device` turns into devices.
@Suite(.serialized, .enabled(if: Harness.hasUmockdev, "umockdev-run is not installed"))
struct SimulatedDeviceTests {
    /// Synthesizes a short shake and a device of `shape` playing it `speed` times faster.
    func simulate(
        _ shape: String, speed: Double = 4, synth: [String] = [], name: String = #function
    ) async throws -> String {
        let directory = try Harness.scratch(shape)
        let trace = "\(directory)/trace.csv"
        try await Harness.shakectl(
            ["synth", "--before", "1", "--after", "1", "--duration", "1.2", "--seed", "3", "--out", trace] + synth)
        try await Harness.shakectl([
            "simulate-device", trace, "--out", directory, "--shape", shape, "--speed", String(speed),
        ])
        return directory
    }

    /// Runs the daemon on the device until a shake ends (or 20 s pass), then stops it with SIGTERM.
    func runUntilEnded(_ directory: String, scripts: [String] = ["iio:device0"]) async throws -> (DaemonProcess, Int32)
    {
        let daemon = try Harness.startDaemon(directory: directory, scripts: scripts)
        await daemon.wait(timeout: 20) { $0.outline.contains("ended") }
        let status = await daemon.stop()
        return (daemon, status)
    }

    func expectShake(_ daemon: DaemonProcess, status: Int32, axis: String = "x") {
        #expect(daemon.outline == ["began", "ended"], "stderr:\n\(daemon.stderr)")
        #expect(daemon.events.last?["axis"] as? String == axis)
        #expect(status == 0)
    }

    @Test func bufferedWithTriggerAndTimestamps() async throws {
        let (daemon, status) = try await runUntilEnded(try await simulate("buffered"))
        expectShake(daemon, status: status)
        #expect(daemon.stderr.contains("the only accelerometer"))
        #expect(daemon.stderr.contains("trigger fake-accel-dev0, timestamps"))
        // The timestamps are the trace's: the shake began about a second in.
        let began = daemon.events.first?["time"] as? Double ?? 0
        #expect(began > 1 && began < 2)
    }

    @Test func bufferedWithoutTrigger() async throws {
        let (daemon, status) = try await runUntilEnded(try await simulate("no-trigger"))
        expectShake(daemon, status: status)
        #expect(daemon.stderr.contains("buffered, no trigger"))
    }

    @Test func bufferedWithoutTimestamps() async throws {
        let (daemon, status) = try await runUntilEnded(try await simulate("no-timestamp", speed: 1))
        expectShake(daemon, status: status)
        #expect(daemon.stderr.contains("trigger fake-accel-trigger, no timestamps"))
    }

    @Test func twelveBitSamplesShiftedInSixteenBitStorage() async throws {
        let (daemon, status) = try await runUntilEnded(try await simulate("shifted"))
        expectShake(daemon, status: status)
    }

    @Test func bigEndianSamples() async throws {
        let (daemon, status) = try await runUntilEnded(try await simulate("big-endian"))
        expectShake(daemon, status: status)
    }

    @Test func perChannelAndSharedScalesWithAnOffset() async throws {
        let (daemon, status) = try await runUntilEnded(try await simulate("scaled"))
        expectShake(daemon, status: status)
        #expect(daemon.stderr.contains("in_accel_x_scale"))
    }

    @Test func theAxisFollowsARotatedMountMatrix() async throws {
        // A side-to-side shake (the device's x), stored on the sensor's y by a sensor turned a quarter turn.
        let horizontal = try await runUntilEnded(try await simulate("rotated"))
        expectShake(horizontal.0, status: horizontal.1, axis: "x")
        #expect(horizontal.0.stderr.contains("0, 1, 0; -1, 0, 0; 0, 0, 1 (in_accel_mount_matrix)"))
        let vertical = try await runUntilEnded(try await simulate("rotated", synth: ["--direction", "vertical"]))
        expectShake(vertical.0, status: vertical.1, axis: "y")
    }

    @Test func udevsMountMatrixWinsOverTheKernels() async throws {
        let (daemon, status) = try await runUntilEnded(try await simulate("udev-rotated"))
        expectShake(daemon, status: status, axis: "x")
        #expect(daemon.stderr.contains("0, 1, 0; -1, 0, 0; 0, 0, 1 (udev ACCEL_MOUNT_MATRIX)"))
    }

    @Test func theDisplaysAccelerometerIsPreferredOverTheBase() async throws {
        let (daemon, status) = try await runUntilEnded(
            try await simulate("two"), scripts: ["iio:device0", "iio:device1"])
        expectShake(daemon, status: status)
        #expect(daemon.stderr.contains("sensor=iio:device1 (fake-accel, accel-display)"))
    }

    /// The polled shape's shake is played into sysfs by this process in real time, so a loaded machine can play
    /// it late and deform the shake the daemon sees. A play that ran more than two sample intervals late is not
    /// a fair test of the daemon, and is played again on a fresh daemon (at most three plays); a faithful play
    /// must give the shake.
    @Test func aDeviceWithoutABufferIsPolled() async throws {
        let directory = try await simulate("polled", speed: 1)
        for attempt in 1...3 {
            let daemon = try Harness.startDaemon(directory: directory, scripts: [])
            defer { _ = daemon.stop() }
            // Play the raw values into the simulated sysfs, as the sensor would update them.
            let ready = await daemon.wait(timeout: 10) { $0.stderr.contains("receiving samples") }
            #expect(ready, "stderr:\n\(daemon.stderr)")
            let testbed = try String(contentsOfFile: "\(directory)/testbed", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let sysfs = "\(testbed)/sys/devices/platform/fake-accel.0/iio:device0"
            let lateness = try await RawPlayer.play("\(directory)/iio:device0.raw", into: sysfs)
            await daemon.wait(timeout: 5) { $0.outline.contains("ended") }
            let status = await daemon.stop()
            // A sanitizer's daemon, several times slower, may itself read late on a busy machine: there any play
            // that did not give the shake is played again.
            if daemon.outline != ["began", "ended"] && (lateness > 0.02 || LoadTests.sanitized) && attempt < 3 {
                print("polled play \(attempt) ran up to \(Int(lateness * 1000)) ms late: played again")
                continue
            }
            expectShake(daemon, status: status)
            #expect(daemon.stderr.contains("polled, in_accel_{x,y,z}_raw"))
            return
        }
    }

    @Test func aSensorVanishingMidShakeCancelsItAndCaptureResumesWhenItReturns() async throws {
        let directory = try Harness.scratch("vanish")
        let trace = "\(directory)/trace.csv"
        try await Harness.shakectl([
            "synth", "--before", "1", "--after", "1", "--duration", "3", "--seed", "3", "--out", trace,
        ])
        try await Harness.shakectl(["simulate-device", trace, "--out", directory, "--shape", "buffered"])
        let daemon = try Harness.startDaemon(directory: directory, scripts: ["iio:device0"])
        defer { _ = daemon.stop() }
        let began = await daemon.wait(timeout: 10) { $0.outline == ["began"] }
        #expect(began, "stderr:\n\(daemon.stderr)")
        // The device leaves /sys/bus/iio/devices, as on a hot-unplug...
        let testbed = try String(contentsOfFile: "\(directory)/testbed", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let link = "\(testbed)/sys/bus/iio/devices/iio:device0"
        let away = "\(testbed)/iio:device0.away"
        try FileManager.default.moveItem(atPath: link, toPath: away)
        let cancelled = await daemon.wait(timeout: 5) { $0.outline.count >= 2 }
        #expect(cancelled)
        #expect(Array(daemon.outline.prefix(2)) == ["began", "cancelled(interrupted)"], "stderr:\n\(daemon.stderr)")
        #expect(daemon.stderr.contains("vanished"))
        // ...and comes back.
        try FileManager.default.moveItem(atPath: away, toPath: link)
        let resumed = await daemon.wait(timeout: 10) {
            $0.stderr.components(separatedBy: "receiving samples").count >= 3
        }
        #expect(resumed, "stderr:\n\(daemon.stderr)")
        #expect(await daemon.stop() == 0)
    }

    @Test func withoutAnyDeviceTheDaemonWaitsAndStopsCleanly() async throws {
        let directory = try Harness.scratch("none")
        let daemon = try Harness.startDaemon(directory: directory, scripts: [], deviceFile: false)
        let waiting = await daemon.wait(timeout: 10) { $0.stderr.contains("no IIO devices yet") }
        #expect(waiting, "stderr:\n\(daemon.stderr)")
        let status = await daemon.stop()
        #expect(status == 0)
        #expect(daemon.stdout.isEmpty)
    }
}

/// Writes a polled device's raw values into the simulated sysfs at the trace's pace; returns how late, at
/// worst, a sample was written (seconds).
enum RawPlayer {
    static func play(_ file: String, into sysfs: String) async throws -> Double {
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").filter {
            !$0.hasPrefix("#")
        }
        let start = Date()
        var lateness = 0.0
        for line in lines {
            let fields = line.split(separator: " ")
            guard fields.count == 4, let milliseconds = Double(fields[0]) else { continue }
            let wait = milliseconds / 1000 - Date().timeIntervalSince(start)
            if wait > 0 { try? await Task.sleep(for: .seconds(wait)) }
            for (axis, value) in zip(["x", "y", "z"], fields.dropFirst()) {
                // Replace the file whole, so that a poll never reads half a value.
                let path = "\(sysfs)/in_accel_\(axis)_raw"
                try Data("\(value)\n".utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            }
            lateness = max(lateness, Date().timeIntervalSince(start) - milliseconds / 1000)
        }
        return lateness
    }
}

/// What clients are told of the sensor while capture is off for lack of listeners.
@Suite(.serialized, .enabled(if: Harness.hasUmockdev, "umockdev-run is not installed"))
struct IdleSensorTests {
    /// A listener that connects to an idle daemon is told which sensor there is, not `none`.
    @Test func aListenerIsToldTheSensorBeforeCaptureStarts() async throws {
        let directory = try Harness.scratch("idle-sensor")
        let trace = "\(directory)/trace.csv"
        try await Harness.shakectl(["synth", "--before", "2", "--after", "1", "--seed", "3", "--out", trace])
        try await Harness.shakectl(["simulate-device", trace, "--out", directory, "--shape", "buffered"])
        let socket = "\(directory)/shaked.sock"
        // The daemon's own pid is recorded, so that stopping it ends the daemon, not only umockdev-run.
        let daemon = try DaemonProcess(
            command: [Harness.product("shaked"), "--socket", socket, "--log-level", "debug"],
            pidFile: "\(directory)/daemon.pid",
            prefix: [
                Harness.umockdevRun!, "--device", "\(directory)/device.umockdev", "--script",
                "/dev/iio:device0=\(directory)/iio:device0.script", "--",
            ])
        defer { _ = daemon.stop() }
        let idle = await daemon.wait(timeout: 20) { $0.stderr.contains("capture is off until a client connects") }
        #expect(idle, "\(daemon.stderr)")
        let listen = try await Command.run(
            "/usr/bin/timeout", ["5", Harness.product("shakectl"), "listen", "--socket", socket, "--no-reconnect"])
        #expect(listen.stderr.contains("connected (sensor: iio fake-accel (iio:device0), "), "\(listen.stderr)")
        #expect(!listen.stderr.contains("sensor: none"), "\(listen.stderr)")
    }
}
