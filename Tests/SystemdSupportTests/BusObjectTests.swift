// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import ShakeTestSupport
import Synchronization
import SystemdSupport
import Testing

/// A real dbus-daemon on a private bus, with busctl as the client in another process: what desktop software sees
/// of the shake object.
@Suite(
    .serialized,
    .enabled(if: PrivateBus.isAvailable, "dbus-daemon or busctl is not installed"))
struct BusObjectTests {
    static let name = "org.example.ShakeTest1"
    static let path = "/org/example/ShakeTest1"
    static let interface = "org.example.ShakeTest1"

    /// What the object's handlers saw.
    final class Log: Sendable {
        let calls = Mutex<[(String, BusObject.Caller)]>([])
        let gone = Mutex<[String]>([])
        let reads = Mutex<[BusObject.Caller]>([])
    }

    static func object(
        on bus: PrivateBus, log: Log, allow: Bool = true, shaking: Bool = false, readers: Set<UInt32>? = nil
    ) throws -> BusObject {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return try BusObject(
            address: bus.address, name: name, path: path, interface: interface,
            handlers: .init(
                mayRead: { caller in
                    log.reads.withLock { $0.append(caller) }
                    return readers.map { $0.contains(caller.uid) } ?? true
                },
                bool: { property in
                    switch property {
                    case "HasAccelerometer": true
                    case "Shaking": shaking
                    default: nil
                    }
                },
                string: { property in
                    switch property {
                    case "Sensor": "accel_3d (iio:device0)"
                    case "Sensitivity": "medium"
                    default: nil
                    }
                },
                call: { method, caller in
                    log.calls.withLock { $0.append((method, caller)) }
                    return allow
                },
                nameGone: { name in log.gone.withLock { $0.append(name) } }),
            logger: logger)
    }

    @Test func introspectionShowsTheInterface() async throws {
        let bus = try PrivateBus()
        let object = try Self.object(on: bus, log: Log())
        defer { object.close() }
        let result = try await bus.busctl(["introspect", Self.name, Self.path, Self.interface])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map {
            $0.split(separator: " ", omittingEmptySubsequences: true)
        }
        func row(_ member: String) -> [Substring]? { lines.first { $0.first.map(String.init) == "." + member } }
        #expect(row("Claim")?.dropFirst().first == "method")
        #expect(row("Release")?.dropFirst().first == "method")
        #expect(row("HasAccelerometer").map { Array($0.dropFirst()) } == ["property", "b", "true", "emits-change"])
        #expect(row("Shaking").map { Array($0.dropFirst()) } == ["property", "b", "false", "emits-change"])
        #expect(row("Sensitivity").map { Array($0.dropFirst()) } == ["property", "s", "\"medium\"", "emits-change"])
        #expect(row("Shake").map { Array($0.dropFirst(2)) } == ["stdddsuss", "-", "-"])
        let xml = try await bus.busctl(["--xml-interface", "introspect", Self.name, Self.path]).stdout
        for argument in ["phase", "seq", "time", "duration", "peak", "axis", "reversals", "reason", "detail"] {
            #expect(xml.contains("<arg type=") && xml.contains("name=\"\(argument)\""), "no argument \(argument)")
        }
        let sensor = try await bus.busctl(["get-property", Self.name, Self.path, Self.interface, "Sensor"])
        #expect(sensor.stdout == "s \"accel_3d (iio:device0)\"\n")
    }

    /// A method call carries the caller's credentials; when the caller leaves the bus, the object hears of it.
    @Test func callsCarryTheCallerAndItsDepartureIsNoticed() async throws {
        let bus = try PrivateBus()
        let log = Log()
        let object = try Self.object(on: bus, log: log)
        defer { object.close() }
        let claim = try await bus.busctl(["call", Self.name, Self.path, Self.interface, "Claim"])
        #expect(claim.status == 0, "\(claim.stderr)")
        let calls = log.calls.withLock { $0 }
        #expect(calls.map(\.0) == ["Claim"])
        let caller = try #require(calls.first?.1)
        #expect(caller.uid == getuid() && caller.groups.contains(getgid()))
        #expect(caller.name.hasPrefix(":1."))
        // busctl has exited: its connection, and its unique name, are gone.
        let deadline = Date().addingTimeInterval(10)
        while !log.gone.withLock({ $0.contains(caller.name) }), Date() < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(log.gone.withLock { $0.contains(caller.name) })
    }

    /// A property read carries the reader as the bus recorded it; one the handler refuses is AccessDenied, for
    /// `Get` and `GetAll` alike.
    @Test func aReadTheHandlerRefusesIsAccessDenied() async throws {
        let bus = try PrivateBus()
        let log = Log()
        let object = try Self.object(on: bus, log: log, readers: [getuid() + 1])
        defer { object.close() }
        let get = try await bus.busctl(["get-property", Self.name, Self.path, Self.interface, "Sensor"])
        #expect(get.status != 0 && get.stderr.contains("Access denied"), "\(get.stdout)\(get.stderr)")
        let all = try await bus.busctl([
            "call", Self.name, Self.path, "org.freedesktop.DBus.Properties", "GetAll", "s", Self.interface,
        ])
        #expect(all.status != 0 && all.stderr.contains("Access denied"), "\(all.stdout)\(all.stderr)")
        let readers = log.reads.withLock { $0 }
        #expect(!readers.isEmpty && readers.allSatisfy { $0.uid == getuid() && $0.groups.contains(getgid()) })
    }

    @Test func aRefusedCallIsAccessDenied() async throws {
        let bus = try PrivateBus()
        let object = try Self.object(on: bus, log: Log(), allow: false)
        defer { object.close() }
        let claim = try await bus.busctl(["call", Self.name, Self.path, Self.interface, "Claim"])
        #expect(claim.status != 0)
        #expect(claim.stderr.contains("Access denied"), "\(claim.stderr)")
    }

    /// The Shake signal and PropertiesChanged, as a monitor on the bus sees them.
    @Test func signalsReachTheBus() async throws {
        let bus = try PrivateBus()
        let object = try Self.object(on: bus, log: Log())
        defer { object.close() }
        let monitor = Process()
        monitor.executableURL = URL(fileURLWithPath: "/usr/bin/busctl")
        monitor.arguments = ["--address=\(bus.address)", "monitor", "--json=short", Self.name]
        let output = Pipe()
        monitor.standardOutput = output
        try monitor.run()
        let collected = Mutex("")
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil }
            collected.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }
        defer {
            kill(monitor.processIdentifier, SIGKILL)
            monitor.waitUntilExit()
        }
        let deadline = Date().addingTimeInterval(15)
        var sawShake = false
        var sawChange = false
        while !(sawShake && sawChange), Date() < deadline {
            // The monitor needs a moment to attach: keep sending until it has seen both.
            object.emit(
                .init(
                    phase: "ended", seq: 7, time: 3.62, duration: 1.49, peak: 28.02, axis: "x", reversals: 11),
                to: .everyone)
            object.propertiesChanged(["Shaking"], to: .everyone)
            try await Task.sleep(for: .milliseconds(200))
            let messages = collected.withLock { $0 }.split(separator: "\n").compactMap {
                (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
            }
            for message in messages {
                let data = (message["payload"] as? [String: Any])?["data"] as? [Any] ?? []
                if message["member"] as? String == "Shake", data.count == 9 {
                    sawShake =
                        data[0] as? String == "ended" && data[1] as? Int == 7
                        && abs((data[2] as? Double ?? 0) - 3.62) < 1e-9 && abs((data[3] as? Double ?? 0) - 1.49) < 1e-9
                        && abs((data[4] as? Double ?? 0) - 28.02) < 1e-9 && data[5] as? String == "x"
                        && data[6] as? Int == 11 && data[7] as? String == "" && data[8] as? String == ""
                }
                if message["member"] as? String == "PropertiesChanged", data.count == 3 {
                    let changed = data[1] as? [String: [String: Any]]
                    sawChange = data[0] as? String == Self.interface && changed?["Shaking"]?["data"] as? Bool == false
                }
            }
        }
        #expect(sawShake, "\(collected.withLock { $0 })")
        #expect(sawChange, "\(collected.withLock { $0 })")
    }

    @Test func aBusThatIsNotThereIsAClearError() {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        #expect {
            _ = try BusObject(
                address: "unix:path=/nonexistent/bus", name: Self.name, path: Self.path, interface: Self.interface,
                handlers: .init(
                    mayRead: { _ in false }, bool: { _ in nil }, string: { _ in nil }, call: { _, _ in false },
                    nameGone: { _ in }),
                logger: logger)
        } throws: { error in
            "\(error)".hasPrefix("connecting to unix:path=/nonexistent/bus: ")
        }
    }

    /// The names of this process's threads (what `BlockingThread` gave them: their `comm`).
    static func threadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .newlines)
        }
    }

    @Test func aNameAlreadyTakenIsAClearErrorAtOnce() async throws {
        let bus = try PrivateBus()
        let first = try Self.object(on: bus, log: Log())
        defer { first.close() }
        // The failed object is released as it fails (it used to wait in `deinit` for a thread it never started).
        #expect {
            _ = try Self.object(on: bus, log: Log())
        } throws: { error in
            "\(error)".hasPrefix("taking the name \(Self.name): ")
        }
        // The first object still answers.
        let result = try await bus.busctl(["get-property", Self.name, Self.path, Self.interface, "Sensitivity"])
        #expect(result.stdout == "s \"medium\"\n", "\(result.stderr)")
    }

    /// Waits up to `seconds` for `condition`.
    static func eventually(within seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > deadline { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    @Test func aBusThatGoesAwayIsReportedOnceAndTheObjectEnds() async throws {
        var bus: PrivateBus? = try PrivateBus()
        let lost = Mutex<[String]>([])
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        var object: BusObject? = try BusObject(
            address: bus!.address, name: Self.name, path: Self.path, interface: Self.interface,
            handlers: .init(
                mayRead: { _ in false }, bool: { _ in nil }, string: { _ in nil }, call: { _, _ in false },
                nameGone: { _ in }, lost: { error in lost.withLock { $0.append("\(error)") } }),
            logger: logger)
        bus = nil  // dbus-daemon is killed.
        #expect(await Self.eventually { !lost.withLock { $0 }.isEmpty })
        try await Task.sleep(for: .milliseconds(100))
        #expect(lost.withLock { $0.count } == 1, "\(lost.withLock { $0 })")
        // Its thread has ended, and closing the object afterwards is harmless.
        #expect(await Self.eventually { !Self.threadNames().contains("shaked-bus") })
        object?.close()
        object = nil
    }

    @Test func aSessionWatcherWhoseBusGoesAwaySaysSoAndEnds() async throws {
        var bus: PrivateBus? = try PrivateBus()
        let reports = Mutex<[Set<UInt32>?]>([])
        let lost = Mutex(0)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        var watcher: SessionWatcher? = try SessionWatcher(
            address: bus!.address, logger: logger, report: { present in reports.withLock { $0.append(present) } },
            lost: { _ in lost.withLock { $0 += 1 } })
        // No logind on this bus: logind cannot say.
        #expect(await Self.eventually { reports.withLock { $0 } == [nil] })
        bus = nil
        #expect(await Self.eventually { lost.withLock { $0 } == 1 })
        #expect(reports.withLock { $0 } == [nil, nil])
        #expect(await Self.eventually { !Self.threadNames().contains("shaked-sessions") })
        watcher?.close()
        watcher = nil
    }
}
