// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeTestSupport
import Testing

/// `shakectl key` through the real daemon: the daemon presses a subscriber's chord through its own virtual
/// keyboard, here a stand-in for /dev/uinput preloaded into it (`Tests/Fixtures/fake-uinput.c`, which writes the
/// device's life and every input event to a file), only while the subscriber's user has the active, unlocked
/// session that a stand-in logind on a private bus reports. The subscriber is not root (root's chords need no
/// session): run as root, it is nobody.
@Suite(.serialized, .enabled(if: StandInUInput.canRun, "cc, dbus-daemon, python3-gi or setpriv is missing"))
struct DaemonKeyTests {

    /// The user the key subscriber runs as.
    static let user = getuid() == 0 ? UInt32(65534) : getuid()

    /// A folder others may enter, with the stand-in uinput built in it.
    static func prepare(_ name: String) async throws -> (directory: String, preload: String) {
        let directory = try Harness.scratch(name)
        chmod(directory, 0o755)
        let preload = "\(directory)/fake-uinput.so"
        let built = try await Command.run(
            "/usr/bin/cc", ["-shared", "-fPIC", "-o", preload, Fixtures.path("fake-uinput.c"), "-ldl"])
        #expect(built.status == 0, "\(built.stderr)")
        return (directory, preload)
    }

    /// The daemon replaying a shake over and over, with its system bus at `bus` and the stand-in uinput.
    static func daemon(directory: String, preload: String, bus: String) throws -> DaemonProcess {
        try DaemonProcess(
            command: [
                "/usr/bin/env", "DBUS_SYSTEM_BUS_ADDRESS=\(bus)", "LD_PRELOAD=\(preload)",
                "FAKE_UINPUT_LOG=\(directory)/uinput.log", Harness.product("shaked"), "--source",
                "replay:\(Fixtures.path("shake-both-100hz.csv"))", "--loop", "--speed", "4", "--socket",
                "\(directory)/shaked.sock",
            ],
            pidFile: "\(directory)/daemon.pid")
    }

    /// `shakectl key ctrl+z` as ``user``.
    static func key(directory: String) throws -> DaemonProcess {
        let command = [Harness.product("shakectl"), "key", "ctrl+z", "--socket", "\(directory)/shaked.sock"]
        return try DaemonProcess(
            command: getuid() == 0
                ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + command : command,
            pidFile: "\(directory)/key.pid")
    }

    /// How many times the stand-in keyboard's Z went down.
    static func presses(_ directory: String) -> Int {
        let log = (try? String(contentsOfFile: "\(directory)/uinput.log", encoding: .utf8)) ?? ""
        return log.split(separator: "\n").filter { $0 == "1 44 1" }.count
    }

    static func count(_ text: String, in output: String) -> Int {
        output.components(separatedBy: text).count - 1
    }

    @Test func aChordIsPressedWhileItsUsersSessionIsActiveAndNotOnceItIsLocked() async throws {
        let (directory, preload) = try await Self.prepare("key-session")
        let bus = try PrivateBus()
        let logind = try DaemonProcess(
            command: ["/usr/bin/python3", Fixtures.path("fake-logind.py"), bus.address, String(Self.user)],
            pidFile: "\(directory)/logind.pid")
        defer { _ = logind.stop(signal: SIGKILL) }
        #expect(await logind.wait(timeout: 10) { $0.stdout.contains("ready") }, "\(logind.stderr)")
        let daemon = try Self.daemon(directory: directory, preload: preload, bus: bus.address)
        defer { _ = daemon.stop() }
        #expect(await daemon.wait(timeout: 15) { $0.stderr.contains("present_users=\(Self.user)") }, "\(daemon.stderr)")

        let key = try Self.key(directory: directory)
        defer { _ = key.stop() }
        let pressed = "pressed ctrl+z for event #"
        #expect(
            await key.wait(timeout: 20) { Self.count(pressed, in: $0.stderr) >= 2 }, "\(key.stderr)\n\(daemon.stderr)")
        #expect(Self.presses(directory) >= 2, "\(daemon.stderr)")
        #expect(daemon.stderr.contains("client_uid=\(Self.user)"), "\(daemon.stderr)")
        let status = try await Harness.shakectl(["status", "--json", "--socket", "\(directory)/shaked.sock"])
        #expect(status.contains(#""keys_pressed":"#), "\(status)")

        // The screen locks: from the moment the daemon hears of it, nothing more is typed.
        guard let pid = logind.daemonPID else { return }
        kill(pid, SIGUSR1)
        #expect(await daemon.wait(timeout: 5) { $0.stderr.contains("present_users= ") }, "\(daemon.stderr)")
        let atLock = Self.presses(directory)
        let away = "not pressed for event #"
        #expect(await key.wait(timeout: 20) { Self.count(away, in: $0.stderr) >= 3 }, "\(key.stderr)\n\(daemon.stderr)")
        #expect(Self.presses(directory) == atLock, "typed while locked:\n\(key.stderr)")

        // Unlocked: typed again.
        kill(pid, SIGUSR2)
        let before = Self.count(pressed, in: key.stderr)
        #expect(await key.wait(timeout: 20) { Self.count(pressed, in: $0.stderr) > before }, "\(key.stderr)")
        #expect(Self.presses(directory) > atLock)
    }

    /// A user whose only session has no seat (an ssh login, which logind calls active) is not in front of the
    /// keyboard: the chord is not typed, though capture counts the session.
    @Test func aUserWithOnlyASeatlessSessionIsNotTypedFor() async throws {
        let (directory, preload) = try await Self.prepare("key-seatless")
        let bus = try PrivateBus()
        let logind = try DaemonProcess(
            command: ["/usr/bin/python3", Fixtures.path("fake-logind.py"), bus.address, String(Self.user), ""],
            pidFile: "\(directory)/logind.pid")
        defer { _ = logind.stop(signal: SIGKILL) }
        #expect(await logind.wait(timeout: 10) { $0.stdout.contains("ready") }, "\(logind.stderr)")
        let daemon = try Self.daemon(directory: directory, preload: preload, bus: bus.address)
        defer { _ = daemon.stop() }
        #expect(
            await daemon.wait(timeout: 15) { $0.stderr.contains("present_users=\(Self.user) seat0_user= ") },
            "\(daemon.stderr)")
        let key = try Self.key(directory: directory)
        defer { _ = key.stop() }
        #expect(
            await key.wait(timeout: 20) {
                Self.count("your session is not the active, unlocked one", in: $0.stderr) >= 2
            },
            "\(key.stderr)\n\(daemon.stderr)")
        #expect(Self.presses(directory) == 0)
    }

    /// Without logind (no system bus), nobody but root has a session the daemon knows of: a user's chord is
    /// never typed, though the keyboard is made and the events come.
    @Test func withoutLogindAUsersChordIsNeverPressed() async throws {
        let (directory, preload) = try await Self.prepare("key-no-logind")
        let daemon = try Self.daemon(
            directory: directory, preload: preload, bus: "unix:path=\(directory)/no-bus")
        defer { _ = daemon.stop() }
        #expect(await daemon.wait(timeout: 15) { _ in UnixSocket.isListening("\(directory)/shaked.sock") })
        #expect(
            await daemon.wait(timeout: 10) { $0.stderr.contains("only root's key chords are pressed") },
            "\(daemon.stderr)")
        let key = try Self.key(directory: directory)
        defer { _ = key.stop() }
        #expect(
            await key.wait(timeout: 20) {
                Self.count("your session is not the active, unlocked one", in: $0.stderr) >= 2
            },
            "\(key.stderr)\n\(daemon.stderr)")
        #expect(Self.presses(directory) == 0)
        #expect(!key.stderr.contains("pressed ctrl+z"), "\(key.stderr)")
    }

    /// A daemon that cannot make its keyboard says so, and `shakectl key` stops with that, without retrying.
    @Test func aDaemonWithoutAKeyboardRefusesAndKeyStops() async throws {
        let (directory, preload) = try await Self.prepare("key-no-uinput")
        // The stand-in without its file: opening /dev/uinput fails as on a machine without the module.
        let daemon = try DaemonProcess(
            command: [
                "/usr/bin/env", "-u", "FAKE_UINPUT_LOG", "DBUS_SYSTEM_BUS_ADDRESS=unix:path=\(directory)/no-bus",
                "LD_PRELOAD=\(preload)", Harness.product("shaked"), "--source",
                "replay:\(Fixtures.path("shake-both-100hz.csv"))", "--loop", "--socket", "\(directory)/shaked.sock",
            ],
            pidFile: "\(directory)/daemon.pid")
        defer { _ = daemon.stop() }
        #expect(await daemon.wait(timeout: 15) { _ in UnixSocket.isListening("\(directory)/shaked.sock") })
        // Asking again and again costs the daemon one try and one log line an interval (KeyPresser.retryAfter,
        // 10 s), not one each: one line while the three asks take less than that, as they do in this build; one
        // more for each interval they take longer (a sanitizer's daemon and shakectl are several times slower).
        let asked = Date()
        for _ in 1...3 {
            let result = try await Command.run(
                "/usr/bin/timeout",
                ["20", Harness.product("shakectl"), "key", "undo", "--socket", "\(directory)/shaked.sock"])
            #expect(result.status == 1, "\(result.stderr)")
            #expect(result.stderr.contains("key_unavailable"), "\(result.stderr)")
            #expect(result.stderr.contains("cannot make its virtual keyboard"), "\(result.stderr)")
        }
        let intervals = 1 + Int(Date().timeIntervalSince(asked) / 10)
        let lines = Self.count("cannot make the virtual keyboard", in: daemon.stderr)
        #expect((1...intervals).contains(lines), "\(lines) lines in \(intervals) intervals: \(daemon.stderr)")
    }
}

enum StandInUInput {
    /// Whether the stand-in can be built and the subscriber run as another user, with a stand-in logind.
    static var canRun: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/cc") && PrivateBus.isAvailable
            && PythonBusClient.hasGLib
            && (getuid() != 0 || FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"))
    }
}
