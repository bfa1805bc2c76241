// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeDetection
import ShakeTrace
import Testing

/// The real daemon on simulated accelerometers that misbehave: a sensor unplugged and plugged back, a buffer
/// that stops delivering, readings clipped at full scale, a clock that jumps, a rate that changes mid-stream.
///
/// Whatever goes wrong, the daemon should report a shake it was following as `cancelled(interrupted)`, say
/// what happened in its log, keep running and pick capture up again.
@Suite(.serialized, .enabled(if: Harness.hasUmockdev, "umockdev-run is not installed"))
struct FaultTests {
    /// Generous: the machine may be busy building; conditions are waited for, never assumed after a delay.
    static let timeout = 30.0

    // MARK: - The sensor vanishes, returns, vanishes for good

    @Test func aSensorThatVanishesMidShakeReturnsThenVanishesForGood() async throws {
        let directory = try Harness.scratch("vanish-twice")
        // Shakes at 1-4, 7-10 and 13-16 s: long enough for the daemon to notice the sensor gone mid-shake.
        let trace = try await synth(
            in: directory, ["--before", "1", "--after", "1", "--duration", "3", "--repeat", "3", "--pause", "3"])
        try await simulate(trace, in: directory)
        let daemon = try Harness.startDaemon(directory: directory, scripts: ["iio:device0"])
        defer { _ = daemon.stop() }

        let began = await daemon.wait(timeout: Self.timeout) { $0.outline == ["began"] }
        try #require(began, "no shake began alone; stdout:\n\(daemon.stdout)\nstderr:\n\(daemon.stderr)")
        let sensor = try PluggableSensor(directory: directory)
        try sensor.unplug()
        let cancelled = await daemon.wait(timeout: Self.timeout) { $0.outline.count >= 2 }
        #expect(cancelled, "stderr:\n\(daemon.stderr)")
        #expect(Array(daemon.outline.prefix(2)) == ["began", "cancelled(interrupted)"], "stderr:\n\(daemon.stderr)")
        #expect(daemon.stderr.contains("vanished; waiting for it to return"))

        // Back again: capture resumes and a later shake (the one at 7-10 s) is detected from start to end. The
        // rest of the first shake may count as one too, if the sensor returns before it is over.
        try sensor.plug()
        func laterShake(_ daemon: DaemonProcess) -> Int? {
            daemon.events.firstIndex { $0["phase"] as? String == "ended" && ($0["began"] as? Double ?? 0) >= 6.5 }
        }
        let resumed = await daemon.wait(timeout: Self.timeout) { laterShake($0) != nil }
        try #require(resumed, "no later shake after the sensor returned; stderr:\n\(daemon.stderr)")
        let events = daemon.events
        let ended = try #require(laterShake(daemon))
        #expect(events[ended - 1]["phase"] as? String == "began", "events: \(daemon.outline)")
        #expect(events[ended - 1]["time"] as? Double == events[ended]["began"] as? Double)
        #expect(!daemon.outline.dropFirst(2).contains("cancelled(interrupted)"), "events: \(daemon.outline)")
        #expect(occurrences(of: "receiving samples", in: daemon.stderr) >= 2)

        // Gone for good: the daemon says it waits for a sensor, and keeps running until told to stop.
        let before = daemon.stderr.count
        try sensor.unplug()
        let waiting = await daemon.wait(timeout: Self.timeout) { daemon in
            let since = String(daemon.stderr.dropFirst(before))
            return since.contains("vanished; waiting for it to return")
                && (since.contains("waiting for one to appear") || since.contains("waiting for a sensor to appear"))
        }
        #expect(waiting, "stderr:\n\(daemon.stderr)")
        #expect(isAlive(daemon), "the daemon exited; stderr:\n\(daemon.stderr)")
        #expect(await daemon.stop() == 0, "stderr:\n\(daemon.stderr)")
        #expect(!daemon.stderr.contains("Fatal error"))
    }

    // MARK: - The buffer stalls

    @Test func aBufferThatStallsMidShakeCancelsItAndPollingTakesOver() async throws {
        let directory = try Harness.scratch("stall")
        // A shake from 1 to 3 s, cut off at 1.9 s: the script ends there, the _raw attributes stay.
        let full = try await synth(in: directory, ["--before", "1", "--after", "1", "--duration", "2"])
        let samples = try TraceFile.read(path: full).filter { $0.time < 1.9 }
        let trace = try write(samples, to: "\(directory)/stalled.csv")
        try await simulate(trace, in: directory)
        let daemon = try Harness.startDaemon(directory: directory, scripts: ["iio:device0"])
        defer { _ = daemon.stop() }

        let polling = await daemon.wait(timeout: Self.timeout) {
            $0.stderr.contains("polling its _raw attributes instead") && $0.outline.count >= 2
        }
        #expect(polling, "stderr:\n\(daemon.stderr)")
        #expect(daemon.outline == ["began", "cancelled(interrupted)"], "stderr:\n\(daemon.stderr)")
        #expect(daemon.stderr.contains("device=iio:device0 seconds="))
        // The cancellation is dated at the last sample the buffer delivered.
        let cancelledAt = daemon.events.last?["time"] as? Double ?? 0
        #expect(cancelledAt > 1.7 && cancelledAt < 1.9, "events: \(daemon.stdout)")
        // Capture goes on from the _raw attributes.
        let resumed = await daemon.wait(timeout: Self.timeout) {
            $0.stderr.contains("device=iio:device0 driver=polled")
                && occurrences(of: "receiving samples", in: $0.stderr) >= 2
        }
        #expect(resumed, "stderr:\n\(daemon.stderr)")
        #expect(isAlive(daemon), "the daemon exited; stderr:\n\(daemon.stderr)")
        #expect(await daemon.stop() == 0, "stderr:\n\(daemon.stderr)")
        #expect(daemon.outline == ["began", "cancelled(interrupted)"])
    }

    // MARK: - Readings clipped at full scale

    @Test func readingsClippedAtFullScaleStillMakeAShakeAndAStuckSensorNone() async throws {
        let directory = try Harness.scratch("saturate")
        // A violent side-to-side shake (1-2.5 s): three times the x of a full-force synthetic one, about 12 g at
        // the turns, past the ±8 g (±32767 × 0.002441 m/s²) the simulated sensor can read.
        let synthesized = try TraceFile.read(
            path: try await synth(
                in: directory, ["--before", "1", "--after", "1", "--duration", "1.5", "--force", "1"]))
        var samples = synthesized.map {
            Sample(time: $0.time, x: $0.acceleration.x * 3, y: $0.acceleration.y, z: $0.acceleration.z)
        }
        let fullScale = 32767 * 0.002441
        let unclipped = samples.map { abs($0.acceleration.x) }.max() ?? 0
        try #require(unclipped > fullScale * 1.3, "the shake does not exceed the range: \(unclipped) m/s²")
        // Then 2 s with every axis pinned past full scale, as a sensor stuck at its rails reads, and a still
        // second to end on.
        let interval = 0.01
        var time = samples.last!.time
        for _ in 0..<200 {
            time += interval
            samples.append(Sample(time: time, x: 200, y: 200, z: 200))
        }
        let stuckFrom = samples[synthesized.count].time
        for sample in synthesized.prefix(100) {
            time += interval
            samples.append(Sample(time: time, acceleration: sample.acceleration))
        }
        let trace = try write(samples, to: "\(directory)/saturated.csv")
        try await simulate(trace, in: directory)

        let daemon = try Harness.startDaemon(directory: directory, scripts: ["iio:device0"])
        defer { _ = daemon.stop() }
        // The whole trace has played once the buffer falls silent and polling takes over.
        let played = await daemon.wait(timeout: Self.timeout) {
            $0.stderr.contains("polling its _raw attributes instead")
        }
        #expect(played, "stderr:\n\(daemon.stderr)")
        #expect(isAlive(daemon), "the daemon exited; stderr:\n\(daemon.stderr)")
        #expect(await daemon.stop() == 0, "stderr:\n\(daemon.stderr)")

        // The clipped shake is still a shake...
        #expect(Array(daemon.outline.prefix(2)) == ["began", "ended"], "stderr:\n\(daemon.stderr)")
        let shake = daemon.events.count >= 2 ? daemon.events[1] : [:]
        #expect(shake["axis"] as? String == "x")
        // ...seen through the clipping: its peak is bounded by the range, not the 12 g it really had (a value
        // that wrapped around instead of clipping would read as a jump of twice full scale).
        let peak = shake["peak"] as? Double ?? .infinity
        #expect(peak < fullScale * 1.2 && peak < unclipped, "peak \(peak) m/s², unclipped \(unclipped) m/s²")
        // ...and a sensor stuck at its rails never makes one.
        let later = daemon.events.dropFirst(2).filter { ($0["time"] as? Double ?? 0) >= stuckFrom }
        #expect(!later.contains { $0["phase"] as? String == "ended" }, "events after the shake: \(later)")
        #expect(daemon.events.filter { $0["phase"] as? String == "ended" }.count == 1, "events: \(daemon.outline)")
    }

    // MARK: - The sensor's clock jumps

    @Test func timestampsJumpingMinutesAheadMidShakeInterruptIt() async throws {
        try await clockJump(seconds: 300, log: "jumped ahead")
    }

    @Test func timestampsGoingBackMidShakeInterruptIt() async throws {
        try await clockJump(seconds: -60, log: "went back")
    }

    /// A trace with shakes at 101-102.5 and 105-106.5 s whose clock moves by `seconds` at 102.105 s, near the
    /// end of the first shake (too near for its rest to start a shake of its own).
    func clockJump(seconds: Double, log: String) async throws {
        let directory = try Harness.scratch("clock\(Int(seconds))")
        let trace = try await synth(
            in: directory,
            ["--start", "100", "--before", "1", "--after", "1", "--duration", "1.5", "--repeat", "2", "--pause", "2.5"])
        let jumpAt = 102.105
        try await simulate(trace, in: directory, ["--clock-jump", "\(jumpAt):\(Int(seconds))"])
        let daemon = try Harness.startDaemon(directory: directory, scripts: ["iio:device0"])
        defer { _ = daemon.stop() }

        let done = await daemon.wait(timeout: Self.timeout) { $0.outline.count >= 4 }
        #expect(done, "stderr:\n\(daemon.stderr)")
        #expect(daemon.outline == ["began", "cancelled(interrupted)", "began", "ended"], "stderr:\n\(daemon.stderr)")
        let times = daemon.events.map { $0["time"] as? Double ?? .nan }
        if times.count >= 4 {
            // Cancelled at the last scan before the jump; the later shake on the moved clock.
            #expect(times[1] > jumpAt - 0.05 && times[1] <= jumpAt, "events: \(daemon.stdout)")
            #expect(abs(times[2] - (105 + seconds)) < 0.5, "events: \(daemon.stdout)")
        }
        #expect(daemon.stderr.contains("the timestamps \(log)"), "stderr:\n\(daemon.stderr)")
        #expect(
            daemon.stderr.contains("device=iio:device0 seconds=\(Int(abs(seconds)))"), "stderr:\n\(daemon.stderr)")
        #expect(isAlive(daemon), "the daemon exited; stderr:\n\(daemon.stderr)")
        #expect(await daemon.stop() == 0)
    }

    // MARK: - The rate changes

    @Test func aRateThatHalvesMidStreamStillShowsBothShakes() async throws {
        let directory = try Harness.scratch("rate")
        // 0-3.5 s at 100 Hz with a shake at 1-2.5 s, then 3.52-7.02 s at 50 Hz with one at 4.52-6.02 s (1.5 s is
        // twelve whole strokes of 0.125 s).
        let fast = try TraceFile.read(
            path: try await synth(
                in: directory,
                ["--before", "1", "--after", "1", "--duration", "1.5", "--iteration", "0.25", "--rate", "100"]))
        let slowFile = "\(directory)/slow.csv"
        try await Harness.shakectl([
            "synth", "--before", "1", "--after", "1", "--duration", "1.5", "--iteration", "0.25", "--rate", "50",
            "--seed", "4", "--start", "3.52", "--out", slowFile,
        ])
        let slow = try TraceFile.read(path: slowFile)
        try #require((fast.last?.time ?? .infinity) < (slow.first?.time ?? 0))
        let trace = try write(fast + slow, to: "\(directory)/two-rates.csv")
        try await simulate(trace, in: directory)
        let daemon = try Harness.startDaemon(directory: directory, scripts: ["iio:device0"])
        defer { _ = daemon.stop() }

        let done = await daemon.wait(timeout: Self.timeout) { $0.outline.filter { $0 == "ended" }.count >= 2 }
        #expect(done, "stderr:\n\(daemon.stderr)")
        #expect(daemon.outline == ["began", "ended", "began", "ended"], "stderr:\n\(daemon.stderr)")
        let began = daemon.events.compactMap { $0["phase"] as? String == "began" ? $0["time"] as? Double : nil }
        #expect(began.count == 2 && began[0] < 2.5 && began[1] > 4.5, "events: \(daemon.stdout)")
        #expect(isAlive(daemon), "the daemon exited; stderr:\n\(daemon.stderr)")
        #expect(await daemon.stop() == 0)
    }

    // MARK: - Helpers

    /// Writes a synthetic trace (seed 3 unless `arguments` say otherwise) into `directory`. - Returns: its path.
    func synth(in directory: String, _ arguments: [String]) async throws -> String {
        let path = "\(directory)/trace.csv"
        try await Harness.shakectl(["synth", "--seed", "3", "--out", path] + arguments)
        return path
    }

    /// Writes `samples` as a trace file. - Returns: its path.
    func write(_ samples: [Sample], to path: String) throws -> String {
        try TraceFile.render(samples).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Writes the buffered device that plays `trace` into `directory`.
    func simulate(_ trace: String, in directory: String, _ arguments: [String] = []) async throws {
        try await Harness.shakectl(["simulate-device", trace, "--out", directory, "--shape", "buffered"] + arguments)
    }

    func isAlive(_ daemon: DaemonProcess) -> Bool {
        guard let pid = daemon.daemonPID else { return false }
        return kill(pid, 0) == 0
    }
}

private func occurrences(of text: String, in string: String) -> Int {
    string.components(separatedBy: text).count - 1
}

/// The simulated device's entry in the testbed's `/sys/bus/iio/devices`: moving it away looks like an unplug to
/// the daemon, moving it back like the sensor returning.
private struct PluggableSensor {
    let link: String
    let away: String

    init(directory: String, device: String = "iio:device0") throws {
        let testbed = try String(contentsOfFile: "\(directory)/testbed", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        link = "\(testbed)/sys/bus/iio/devices/\(device)"
        away = "\(testbed)/\(device).away"
    }

    func unplug() throws { try FileManager.default.moveItem(atPath: link, toPath: away) }
    func plug() throws { try FileManager.default.moveItem(atPath: away, toPath: link) }
}
