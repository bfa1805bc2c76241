// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeTestSupport
import Testing

/// Who gets what of the shake object on D-Bus: `access.subscribe` for its signals and properties, the shipped bus
/// policy for who may emit on its interface, the caller's credentials as the bus recorded them at connect, and a
/// flood of refused calls costing a bounded number of log lines. The real daemon on a private dbus-daemon; the
/// daemon runs as root, the others as nobody (uid 65534) when the tests run as root.
@Suite(
    .serialized,
    .enabled(if: PrivateBus.isAvailable && PythonBusClient.hasGLib, "dbus-daemon, busctl or python3-dbus/gi missing"),
    .enabled(if: getuid() == 0, "needs root, to run clients as another user"))
struct BusAccessTests {
    static let name = BusServiceTests.name
    static let path = BusServiceTests.path
    static let interface = BusServiceTests.interface
    static let nobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

    /// A client that hears every signal sent to it or broadcast (a match for all signals): prints each one on the
    /// object's path with its sender and the name's owner, tries to read `Sensor` (and to `Claim`, when its fourth
    /// argument says `claim`), says `ready` with its unique name, and exits at a `Marker` signal.
    static let listener = """
        import sys, dbus, dbus.mainloop.glib
        from gi.repository import GLib
        address, path, name = sys.argv[1:4]
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        bus = dbus.bus.BusConnection(address)
        loop = GLib.MainLoop()
        def owner():
            try:
                return bus.get_name_owner(name)
            except dbus.DBusException:
                return ""
        def on_signal(*arguments, **where):
            if where["member"] == "Marker":
                print("marker", flush=True)
                loop.quit()
            elif where["path"] == path:
                print("signal %s %s from %s (owner %s) %s" % (where["interface"], where["member"], where["sender"],
                      owner(), [str(a) for a in arguments]), flush=True)
        bus.add_signal_receiver(on_signal, sender_keyword="sender", member_keyword="member",
                                interface_keyword="interface", path_keyword="path")
        try:
            sensor = bus.get_object(name, path).Get(name, "Sensor", dbus_interface=dbus.PROPERTIES_IFACE)
            print("get %s" % sensor, flush=True)
        except dbus.DBusException as error:
            print("get refused: %s" % error.get_dbus_name(), flush=True)
        if sys.argv[4:5] == ["claim"]:
            bus.get_object(name, path).Claim(dbus_interface=name)
            print("claimed", flush=True)
        print("ready %s" % bus.get_unique_name(), flush=True)
        loop.run()
        """

    /// Emits a forged `Shake` (seq 999) on the object's path and interface, broadcast and, when a unique name is
    /// given, sent to it, ROUNDS times 20 ms apart; then a `Marker` signal (to the same name, or broadcast).
    static let forger = """
        import sys, time, dbus, dbus.lowlevel
        address, path, interface, target, rounds = sys.argv[1:6]
        bus = dbus.bus.BusConnection(address)
        def send(member, destination, *arguments, **signature):
            message = dbus.lowlevel.SignalMessage(path if member == "Shake" else "/org/example/Marker",
                                                  interface if member == "Shake" else "org.example.Marker", member)
            if destination:
                message.set_destination(destination)
            if arguments:
                message.append(*arguments, **signature)
            bus.send_message(message)
        for round in range(int(rounds)):
            for destination in ([None, target] if target else [None]):
                send("Shake", destination, "ended", dbus.UInt64(999), 1.0, 1.0, 99.0, "x", dbus.UInt32(9), "", "",
                     signature="stdddsuss")
            bus.flush()
            if int(rounds) > 1:
                time.sleep(0.02)
        send("Marker", target or None)
        bus.flush()
        print("sent", flush=True)
        """

    static func replayDaemon(on bus: PrivateBus, directory: String, configuration: String? = nil) async throws
        -> DaemonProcess
    {
        var arguments = [
            "--source", "replay:\(Fixtures.path("shake-both-100hz.csv"))", "--loop", "--speed", "4", "--socket",
            "\(directory)/shaked.sock",
        ]
        if let configuration {
            let file = "\(directory)/shaked.yaml"
            try configuration.write(toFile: file, atomically: true, encoding: .utf8)
            arguments = ["--config", file] + arguments
        }
        let daemon = try BusServiceTests.daemon(on: bus, arguments, directory: directory)
        #expect(await BusServiceTests.waitForName(on: bus, daemon), "\(daemon.stderr)")
        return daemon
    }

    static func python(_ script: String, _ arguments: [String], as user: [String] = [], directory: String, name: String)
        throws -> DaemonProcess
    {
        try DaemonProcess(
            command: user + ["/usr/bin/python3", "-c", script] + arguments, pidFile: "\(directory)/\(name).pid")
    }

    /// With `subscribe: root`, a user the rule does not allow neither hears the `Shake` signal nor the properties'
    /// changes, and reading a property is AccessDenied; root, claiming, gets both events as before.
    @Test func aUserTheRuleRefusesHearsNoSignalAndReadsNoProperty() async throws {
        let bus = try PrivateBus()
        let directory = try Harness.scratch("bus-access-signals")
        let daemon = try await Self.replayDaemon(
            on: bus, directory: directory, configuration: "access:\n  subscribe: root\n")
        defer { _ = daemon.stop() }
        let stranger = try Self.python(
            Self.listener, [bus.address, Self.path, Self.name], as: Self.nobody, directory: directory, name: "nobody")
        defer { _ = stranger.stop() }
        #expect(await stranger.wait(timeout: 10) { $0.stdout.contains("ready") }, "\(stranger.stderr)")
        #expect(stranger.stdout.contains("get refused: org.freedesktop.DBus.Error.AccessDenied"), "\(stranger.stdout)")

        // Root claims and hears a shake, begun and ended.
        let example = Fixtures.repository.appendingPathComponent("examples/python/shake_dbus.py").path
        let root = try await Command.run(
            "/usr/bin/timeout", ["20", "/usr/bin/python3", example, "--count", "2"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        #expect(root.status == 0, "\(root.stderr)")
        #expect(root.stdout.split(separator: "\n").count == 2, "\(root.stdout)")

        // Everything the daemon sent before is in the stranger's queue ahead of the marker, sent after.
        let marker = try await bus.busctl(["emit", "/org/example/Marker", "org.example.Marker", "Marker"])
        #expect(marker.status == 0, "\(marker.stderr)")
        #expect(await stranger.wait(timeout: 10) { $0.stdout.contains("marker") }, "\(stranger.stdout)")
        #expect(!stranger.stdout.contains("signal "), "the stranger heard: \(stranger.stdout)")
    }

    /// A reload that narrows `subscribe` to root takes nobody's claim, and with it the signals: the shakes root
    /// hears after the reload never reach nobody, who heard them while the rule was `everyone`.
    @Test func aNarrowingReloadStopsTheSignalsOfTheClaimsItTakes() async throws {
        let bus = try PrivateBus()
        let directory = try Harness.scratch("bus-access-reload")
        let daemon = try await Self.replayDaemon(
            on: bus, directory: directory, configuration: "access:\n  subscribe: everyone\n")
        defer { _ = daemon.stop() }
        let stranger = try Self.python(
            Self.listener, [bus.address, Self.path, Self.name, "claim"], as: Self.nobody, directory: directory,
            name: "nobody")
        defer { _ = stranger.stop() }
        #expect(await stranger.wait(timeout: 15) { $0.stdout.contains(" Shake from ") }, "\(stranger.stdout)")

        try "access:\n  subscribe: root\n".write(
            toFile: "\(directory)/shaked.yaml", atomically: true, encoding: .utf8)
        kill(daemon.daemonPID ?? 0, SIGHUP)
        #expect(
            await daemon.wait(timeout: 10) {
                $0.stderr.contains("the access rules no longer allow a D-Bus client's claim")
            },
            "\(daemon.stderr)")
        let example = Fixtures.repository.appendingPathComponent("examples/python/shake_dbus.py").path
        let root = try await Command.run(
            "/usr/bin/timeout", ["20", "/usr/bin/python3", example, "--count", "2"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        #expect(root.status == 0, "\(root.stderr)")
        let heardByRoot = root.stdout.split(separator: "\n").compactMap { line in
            line.hasPrefix("#") ? line.dropFirst().split(separator: " ").first.map(String.init) : nil
        }
        #expect(heardByRoot.count == 2, "\(root.stdout)")

        let marker = try await bus.busctl(["emit", "/org/example/Marker", "org.example.Marker", "Marker"])
        #expect(marker.status == 0, "\(marker.stderr)")
        #expect(await stranger.wait(timeout: 10) { $0.stdout.contains("marker") }, "\(stranger.stdout)")
        let heardByStranger = stranger.stdout.split(separator: "\n").filter { $0.contains(" Shake from ") }.map {
            line in line.split(separator: "'").dropFirst(3).first.map(String.init) ?? ""
        }
        #expect(!heardByStranger.isEmpty)
        #expect(Set(heardByRoot).isDisjoint(with: heardByStranger), "root: \(heardByRoot), nobody: \(heardByStranger)")
    }

    /// A caller that connected as nobody and took a group only afterwards (with CAP_SETGID, as a set-gid program
    /// would have given it) is judged as it connected: its `Claim` is refused by a rule that names that group.
    @Test func aCallerIsJudgedByTheGroupsItConnectedWith() async throws {
        let bus = try PrivateBus()
        let directory = try Harness.scratch("bus-access-groups")
        let daemon = try await Self.replayDaemon(
            on: bus, directory: directory, configuration: "access:\n  subscribe: [group:27]\n")
        defer { _ = daemon.stop() }
        let script = """
            import os, sys, dbus
            address, name, path, interface = sys.argv[1:5]
            bus = dbus.bus.BusConnection(address)
            print("connected with", os.getgid(), os.getgroups(), flush=True)
            os.setgroups([27])
            os.setresgid(27, 27, 27)
            print("calling with", os.getgid(), os.getgroups(), flush=True)
            try:
                dbus.Interface(bus.get_object(name, path), interface).Claim()
                print("claimed", flush=True)
            except dbus.DBusException as error:
                print("refused:", error.get_dbus_name(), flush=True)
            """
        let result = try await Command.run(
            "/usr/bin/setpriv",
            [
                "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=+setgid", "--ambient-caps=+setgid",
                "/usr/bin/python3", "-c", script, bus.address, Self.name, Self.path, Self.interface,
            ])
        #expect(result.stdout.contains("calling with 27 [27]"), "\(result.stdout)\(result.stderr)")
        #expect(
            result.stdout.contains("refused: org.freedesktop.DBus.Error.AccessDenied"),
            "\(result.stdout)\(result.stderr)\n\(daemon.stderr)")
        // A caller that connected with the group is allowed.
        let member = try await Command.run(
            "/usr/bin/setpriv",
            [
                "--reuid=65534", "--regid=27", "--clear-groups", "/usr/bin/busctl", "--address=\(bus.address)", "call",
                Self.name, Self.path, Self.interface, "Claim",
            ])
        #expect(member.status == 0, "\(member.stderr)")
    }

    /// 20,000 refused calls (`Claim` and property reads) from one client: the daemon answers every one, and logs
    /// a bounded number of lines about them — the first, then one count at the end of the interval (or at exit).
    @Test func aFloodOfRefusedCallsIsABoundedNumberOfLogLines() async throws {
        let bus = try PrivateBus()
        let directory = try Harness.scratch("bus-access-flood")
        let daemon = try await Self.replayDaemon(
            on: bus, directory: directory, configuration: "access:\n  subscribe: root\n")
        defer { _ = daemon.stop() }
        let script = """
            import sys, time, dbus
            address, name, path, interface, count = sys.argv[1:6]
            bus = dbus.bus.BusConnection(address)
            shake = bus.get_object(name, path)
            refused = 0
            start = time.monotonic()
            for index in range(int(count)):
                try:
                    if index % 2:
                        shake.Claim(dbus_interface=interface)
                    else:
                        shake.GetAll(interface, dbus_interface=dbus.PROPERTIES_IFACE)
                except dbus.DBusException as error:
                    if error.get_dbus_name() == "org.freedesktop.DBus.Error.AccessDenied":
                        refused += 1
            print("refused %d in %.1f s" % (refused, time.monotonic() - start), flush=True)
            """
        let calls = 20_000
        let result = try await Command.run(
            "/usr/bin/setpriv",
            Array(Self.nobody.dropFirst()) + [
                "/usr/bin/python3", "-c", script, bus.address, Self.name, Self.path, Self.interface, String(calls),
            ])
        #expect(result.stdout.hasPrefix("refused \(calls) in"), "\(result.stdout)\(result.stderr)")
        print("BusAccessTests: \(result.stdout.trimmingCharacters(in: .newlines))")
        #expect(await daemon.stop() == 0)
        let lines = daemon.stderr.split(separator: "\n").filter { $0.contains("D-Bus") }
        // At most six lines an interval (10 s) the flood lasted: it takes a second or two alone, more while the
        // rest of the suite runs beside it.
        let seconds = result.stdout.split(separator: " ").dropFirst(3).first.flatMap { Double($0) } ?? 0
        let intervals = Int(seconds / 10) + 1
        #expect(
            lines.count <= 6 * intervals, "\(lines.count) lines about D-Bus in \(seconds) s, first: \(lines.prefix(8))")
        print("BusAccessTests: \(calls) refused calls gave \(lines.count) log lines about D-Bus")
    }
}
