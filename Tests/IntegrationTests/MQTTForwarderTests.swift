// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeConfig
import ShakeTestSupport
import Testing

/// The forwarder with real parts: Debian's `mosquitto` broker started here on a loopback port (a configuration
/// in a scratch folder), the real daemon on a replayed trace, `shaked-mqtt`, and `mosquitto_sub` reading back.
@Suite(.serialized)
struct MQTTForwarderTests {
    static let hasMosquitto: Bool = {
        let present =
            FileManager.default.isExecutableFile(atPath: "/usr/sbin/mosquitto")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/mosquitto_sub")
        if !present {
            print(
                "MQTTForwarderTests: skipped: mosquitto is not installed (apt-get install mosquitto mosquitto-clients)")
        }
        return present
    }()

    let trace = Fixtures.path("shake-both-100hz.csv")

    // MARK: The rig

    /// `command` with no signal blocked: the test runner's threads block some, and a child inherits its mask
    /// (mosquitto would not stop on SIGTERM, nor mosquitto_sub on its alarm).
    static func unblocked(_ command: [String]) -> [String] {
        [
            "/usr/bin/python3", "-c",
            "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])",
        ] + command
    }

    /// A free loopback port (bound and released: nothing else in this process takes it meanwhile).
    static func freePort() -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                _ = bind(descriptor, pointer, length)
                return getsockname(descriptor, pointer, &length)
            }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func isListening(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// A mosquitto broker on `port` with `extra` configuration lines; it stays root (`user root`) so that it may
    /// read the scratch folder's files.
    static func startBroker(directory: String, port: Int, extra: [String] = [], name: String = "broker") async throws
        -> DaemonProcess
    {
        let configuration = "\(directory)/\(name).conf"
        let lines =
            ["user root", "listener \(port) 127.0.0.1", "log_dest stderr", "log_type error", "log_type warning"]
            + (extra.contains { $0.hasPrefix("allow_anonymous") || $0.hasPrefix("password_file") }
                ? [] : ["allow_anonymous true"]) + extra
        try (lines.joined(separator: "\n") + "\n").write(toFile: configuration, atomically: true, encoding: .utf8)
        let broker = try DaemonProcess(
            command: unblocked(["/usr/sbin/mosquitto", "-c", configuration]), pidFile: "\(directory)/\(name).pid")
        let up = await broker.wait(timeout: 10) { _ in isListening(port: port) }
        #expect(up, "mosquitto did not listen: \(broker.stderr)")
        return broker
    }

    /// `mosquitto_sub` on everything, printing `retained|topic|payload` lines; waits until it is subscribed (a
    /// probe message it receives).
    static func startSubscriber(
        directory: String, port: Int, topic: String = "#", moreTopics: [String] = [], extra: [String] = []
    ) async throws -> DaemonProcess {
        let subscriber = try DaemonProcess(
            command: unblocked(
                [
                    "/usr/bin/mosquitto_sub", "-h", "127.0.0.1", "-p", "\(port)", "-q", "1", "-t", topic, "-t", "probe",
                    "-F", "%r|%t|%p",
                ] + moreTopics.flatMap { ["-t", $0] } + extra),
            pidFile: "\(directory)/sub-\(UUID().uuidString.prefix(4)).pid")
        let ready = await subscriber.wait(timeout: 10) { subscriber in
            _ = try? await Command.run(
                "/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", "\(port)", "-t", "probe", "-m", "x"])
            return subscriber.stdout.contains("|probe|x")
        }
        #expect(ready, "mosquitto_sub did not subscribe: \(subscriber.stderr)")
        return subscriber
    }

    /// Starts `shaked-mqtt` with a configuration file of `yaml`.
    static func startForwarder(directory: String, socket: String, yaml: String, name: String = "forwarder") throws
        -> DaemonProcess
    {
        let configuration = "\(directory)/\(name).yaml"
        try yaml.write(toFile: configuration, atomically: true, encoding: .utf8)
        return try DaemonProcess(
            command: [
                Harness.product("shaked-mqtt"), "--config", configuration, "--socket", socket, "--status-file",
                "\(directory)/\(name).status", "--cursor-file", "\(directory)/\(name).cursor",
            ], pidFile: "\(directory)/\(name).pid")
    }

    /// A configuration for the broker on `port`: `broker` lines go in the broker section, `extra` after it all.
    static func yaml(port: Int, device: String = "dev1", broker: String = "", extra: String = "") -> String {
        "broker:\n  uri: mqtt://127.0.0.1:\(port)\n\(broker)topics:\n  device: \(device)\n" + extra
    }

    /// The retained messages on `topics` now: those a new subscriber gets before the probe it waits for.
    static func retained(directory: String, port: Int, topics: [String]) async throws -> [(
        topic: String, payload: String
    )] {
        let subscriber = try await startSubscriber(
            directory: directory, port: port, topic: topics[0], moreTopics: Array(topics.dropFirst()))
        _ = await subscriber.stop(signal: SIGKILL)
        return messages(subscriber).filter { $0.retained && $0.topic != "probe" }.map { ($0.topic, $0.payload) }
    }

    /// The messages `subscriber` has printed: (retained, topic, payload).
    static func messages(_ subscriber: DaemonProcess) -> [(retained: Bool, topic: String, payload: String)] {
        subscriber.stdout.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { return nil }
            return (parts[0] == "1", String(parts[1]), String(parts[2]))
        }
    }

    /// The event payloads received on `topic`, as objects.
    static func events(_ subscriber: DaemonProcess, topic: String = "shaked/dev1/event") -> [[String: Any]] {
        messages(subscriber).filter { $0.topic == topic }.compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.payload.utf8))) as? [String: Any]
        }
    }

    static func status(_ directory: String, name: String = "forwarder") -> [String: String] {
        let text = (try? String(contentsOfFile: "\(directory)/\(name).status", encoding: .utf8)) ?? ""
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { values[String(parts[0])] = String(parts[1]) }
        }
        return values
    }

    // MARK: Tests

    @Test(.enabled(if: hasMosquitto)) func eventsArriveInOrderWithTheirFieldsAndTheDeviceAnnouncesItself() async throws
    {
        let directory = try Harness.scratch("mqtt-order")
        let port = Self.freePort()
        let broker = try await Self.startBroker(directory: directory, port: port)
        defer { _ = broker.stop() }
        let subscriber = try await Self.startSubscriber(directory: directory, port: port)
        defer { _ = subscriber.stop() }
        let (daemon, socket, _) = try await Harness.startReplayDaemon(
            "mqtt-order-daemon", trace: trace, arguments: ["--loop", "--speed", "4", "--print-events"])
        defer { _ = daemon.stop() }
        let forwarder = try Self.startForwarder(directory: directory, socket: socket, yaml: Self.yaml(port: port))
        defer { _ = forwarder.stop() }

        let arrived = await subscriber.wait(timeout: 30) { Self.events($0).count >= 6 }
        #expect(arrived, "events did not arrive: \(forwarder.stderr)")
        let events = Self.events(subscriber)
        let seqs = events.compactMap { $0["seq"] as? Int }
        #expect(seqs == Array(seqs.first!..<(seqs.first! + seqs.count)), "out of order or gaps: \(seqs)")
        // Availability, state and Home Assistant's discovery, retained.
        let all = Self.messages(subscriber)
        #expect(all.contains { $0.topic == "shaked/dev1/availability" && $0.payload == "online" })
        let state = try #require(all.last { $0.topic == "shaked/dev1/state" })
        #expect(state.payload.contains(#""daemon":"connected""#))
        #expect(state.payload.contains(#""source":"replay""#))
        #expect(
            all.contains {
                $0.topic == "homeassistant/event/shaked_dev1/shake/config" && $0.payload.contains("event_types")
            })
        #expect(all.contains { $0.topic == "homeassistant/device_automation/shaked_dev1/shake_ended/config" })
        // The status file and --status say so.
        #expect(await forwarder.wait(timeout: 5) { _ in Self.status(directory)["broker_connected"] == "yes" })
        let status = try await Command.run(
            "shaked-mqtt", ["--status", "--status-file", "\(directory)/forwarder.status"])
        #expect(status.stdout.contains("connected to mqtt://127.0.0.1:\(port); daemon connected"), "\(status)")
        #expect(status.stdout.contains("0 dropped"))
        // Each is the daemon's own event (its printed line, complete once it has stopped), with the run added.
        #expect(await daemon.stop() == 0)
        // The printed lines have no seq: the daemon numbers its events 1, 2, 3... in the order it prints them.
        let printed = daemon.events
        for event in events {
            let seq = event["seq"] as! Int
            let original = try #require(seq <= printed.count ? printed[seq - 1] : nil)
            for key in ["phase", "time", "began", "peak", "axis", "reversals", "reason", "detail"] {
                #expect("\(event[key] ?? "-")" == "\(original[key] ?? "-")", "seq \(seq) \(key)")
            }
            // The client library gives `duration` as time - began of the rounded times: within a millisecond.
            if let duration = event["duration"] as? Double {
                #expect(abs(duration - (original["duration"] as? Double ?? -1)) <= 0.0011, "seq \(seq) duration")
            }
            #expect((event["run"] as? String)?.isEmpty == false)
            #expect((event["timestamp"] as? String)?.hasSuffix("Z") == true)
        }
        #expect(events.contains { $0["phase"] as? String == "ended" && $0["peak"] is Double && $0["axis"] is String })
    }

    @Test(.enabled(if: hasMosquitto)) func aKilledForwarderGoesOfflineThroughItsLastWillAndAStoppedOneSaysSo()
        async throws
    {
        let directory = try Harness.scratch("mqtt-will")
        let port = Self.freePort()
        let broker = try await Self.startBroker(directory: directory, port: port)
        defer { _ = broker.stop() }
        let (daemon, socket, _) = try await Harness.startReplayDaemon(
            "mqtt-will-daemon", trace: trace, arguments: ["--loop"])
        defer { _ = daemon.stop() }
        let subscriber = try await Self.startSubscriber(
            directory: directory, port: port, topic: "shaked/+/availability")
        defer { _ = subscriber.stop() }
        for (signal, device) in [(SIGKILL, "killed"), (SIGTERM, "stopped")] {
            let forwarder = try Self.startForwarder(
                directory: directory, socket: socket,
                yaml: Self.yaml(port: port, device: device, broker: "  keepalive: 5\n"),
                name: device)
            let topic = "shaked/\(device)/availability"
            #expect(
                await subscriber.wait(timeout: 20) {
                    Self.messages($0).contains { $0.topic == topic && $0.payload == "online" }
                })
            let status = await forwarder.stop(signal: signal)
            if signal == SIGTERM { #expect(status == 0, "\(forwarder.stderr)") }
            // The broker sends the will when it notices the connection is gone (at once for a closed socket).
            let offline = await subscriber.wait(timeout: 20) {
                Self.messages($0).contains { $0.topic == topic && $0.payload == "offline" }
            }
            #expect(offline, "\(device): no offline: \(Self.messages(subscriber).map(\.payload))")
        }
        // Retained: a subscriber that comes later learns it too.
        let late = try await Self.retained(directory: directory, port: port, topics: ["shaked/killed/availability"])
        #expect(late.map(\.payload) == ["offline"])
    }

    /// The broker restarted (persisting its sessions, as a real one does) in the middle of a stream of shakes:
    /// every event reaches a subscriber with a persistent session, none lost.
    @Test(.enabled(if: hasMosquitto)) func aBrokerRestartedMidStreamLosesNoEvent() async throws {
        let directory = try Harness.scratch("mqtt-restart")
        let port = Self.freePort()
        let persistence = ["persistence true", "persistence_location \(directory)/", "autosave_interval 1"]
        var broker = try await Self.startBroker(directory: directory, port: port, extra: persistence)
        let subscriber = try await Self.startSubscriber(
            directory: directory, port: port, topic: "shaked/dev1/event", extra: ["-c", "-i", "restart-sub"])
        defer { _ = subscriber.stop() }
        let (daemon, socket, _) = try await Harness.startReplayDaemon(
            "mqtt-restart-daemon", trace: trace, arguments: ["--loop", "--speed", "8"])
        defer { _ = daemon.stop() }
        let forwarder = try Self.startForwarder(directory: directory, socket: socket, yaml: Self.yaml(port: port))
        defer { _ = forwarder.stop() }
        #expect(await subscriber.wait(timeout: 30) { Self.events($0).count >= 4 })
        #expect(await broker.stop() == 0)
        // Shakes go on while the broker is down; they wait in the forwarder's queue.
        let before = try await LoadTests.latestSeq(socket)
        #expect(await daemon.wait(timeout: 30) { _ in ((try? await LoadTests.latestSeq(socket)) ?? 0) >= before + 4 })
        broker = try await Self.startBroker(directory: directory, port: port, extra: persistence, name: "broker2")
        defer { _ = broker.stop() }
        let target = try await LoadTests.latestSeq(socket) + 4
        let caughtUp = await subscriber.wait(timeout: 60) { sub in
            (Self.events(sub).compactMap { $0["seq"] as? Int }.max() ?? 0) >= target
        }
        #expect(caughtUp, "\(forwarder.stderr)")
        let seqs = Set(Self.events(subscriber).compactMap { $0["seq"] as? Int })
        let first = seqs.min()!
        let missing = (first...target).filter { !seqs.contains($0) }
        #expect(missing.isEmpty, "lost across the restart: \(missing)")
        #expect(forwarder.stderr.contains("lost the broker; reconnecting"))
        #expect(Self.status(directory)["dropped"] == "0")
    }

    /// The daemon restarted while the forwarder runs, and the forwarder restarted while the daemon runs: each
    /// event is sent once, none skipped (the daemon's replay, `since` its cursor).
    @Test(.enabled(if: hasMosquitto)) func restartsOnEitherSideAreBridgedBySince() async throws {
        let directory = try Harness.scratch("mqtt-since")
        let port = Self.freePort()
        let broker = try await Self.startBroker(directory: directory, port: port)
        defer { _ = broker.stop() }
        let subscriber = try await Self.startSubscriber(directory: directory, port: port, topic: "shaked/dev1/event")
        defer { _ = subscriber.stop() }
        let socket = try Harness.scratch("mqtt-since-socket") + "/shaked.sock"
        var (daemon, _, _) = try await Harness.startReplayDaemon(
            "mqtt-since-daemon", trace: trace, socket: socket, arguments: ["--loop", "--speed", "8"])
        var forwarder = try Self.startForwarder(directory: directory, socket: socket, yaml: Self.yaml(port: port))
        #expect(await subscriber.wait(timeout: 30) { Self.events($0).count >= 3 })

        // The forwarder away while shakes go on: it resumes after its cursor.
        #expect(await forwarder.stop() == 0)
        let away = try await LoadTests.latestSeq(socket)
        #expect(await daemon.wait(timeout: 30) { _ in ((try? await LoadTests.latestSeq(socket)) ?? 0) >= away + 4 })
        forwarder = try Self.startForwarder(directory: directory, socket: socket, yaml: Self.yaml(port: port))
        defer { _ = forwarder.stop() }
        let target = try await LoadTests.latestSeq(socket) + 2
        #expect(
            await subscriber.wait(timeout: 30) { sub in Self.events(sub).contains { ($0["seq"] as? Int ?? 0) >= target }
            })
        let firstRun = Self.events(subscriber).compactMap { $0["seq"] as? Int }
        #expect(
            firstRun == Array(firstRun.first!...firstRun.last!),
            "gaps or repeats across the forwarder's restart: \(firstRun)")

        // The daemon restarted: a new run, its events all sent.
        _ = await daemon.stop()
        (daemon, _, _) = try await Harness.startReplayDaemon(
            "mqtt-since-daemon2", trace: trace, socket: socket, arguments: ["--loop", "--speed", "8"])
        defer { _ = daemon.stop() }
        let runs = { Set(Self.events(subscriber).compactMap { $0["run"] as? String }) }
        #expect(
            await subscriber.wait(timeout: 30) { sub in
                runs().count == 2 && Self.events(sub).count >= firstRun.count + 3
            })
        let secondRunID = Self.events(subscriber).last!["run"] as! String
        let secondRun = Self.events(subscriber).filter { $0["run"] as? String == secondRunID }.compactMap {
            $0["seq"] as? Int
        }
        #expect(secondRun.first == 1, "the new run's first events were skipped: \(secondRun)")
        #expect(secondRun == Array(1...secondRun.count), "\(secondRun)")
    }

    @Test(.enabled(if: hasMosquitto)) func aQueueAtItsLimitDropsTheOldestAndSaysSoOnce() async throws {
        let directory = try Harness.scratch("mqtt-queue")
        let port = Self.freePort()  // Nobody listens there yet.
        let (daemon, socket, _) = try await Harness.startReplayDaemon(
            "mqtt-queue-daemon", trace: trace, arguments: ["--loop", "--speed", "8"])
        defer { _ = daemon.stop() }
        let forwarder = try Self.startForwarder(
            directory: directory, socket: socket, yaml: Self.yaml(port: port, extra: "queue:\n  size: 3\n"))
        defer { _ = forwarder.stop() }
        #expect(
            await forwarder.wait(timeout: 30) { _ in Int(Self.status(directory)["dropped"] ?? "0") ?? 0 >= 5 })
        #expect(Self.status(directory)["queued"] == "3")
        #expect(Self.status(directory)["broker_connected"] == "no")
        #expect(forwarder.stderr.components(separatedBy: "the queue is full").count == 2, "\(forwarder.stderr)")
        #expect(forwarder.stderr.components(separatedBy: "cannot reach the broker").count == 2, "\(forwarder.stderr)")
        let broker = try await Self.startBroker(directory: directory, port: port)
        defer { _ = broker.stop() }
        #expect(await forwarder.wait(timeout: 60) { _ in Self.status(directory)["broker_connected"] == "yes" })
        #expect(await forwarder.wait(timeout: 10) { $0.stderr.contains("events dropped while the broker was away") })
    }

    @Test(.enabled(if: hasMosquitto)) func aBrokerOnAUnixSocket() async throws {
        let directory = try Harness.scratch("mqtt-unix")
        let port = Self.freePort()
        let path = "\(directory)/mqtt.sock"
        let broker = try await Self.startBroker(directory: directory, port: port, extra: ["listener 0 \(path)"])
        defer { _ = broker.stop() }
        let subscriber = try await Self.startSubscriber(directory: directory, port: port, topic: "shaked/dev1/event")
        defer { _ = subscriber.stop() }
        let (daemon, socket, _) = try await Harness.startReplayDaemon(
            "mqtt-unix-daemon", trace: trace, arguments: ["--loop", "--speed", "4"])
        defer { _ = daemon.stop() }
        let forwarder = try Self.startForwarder(
            directory: directory, socket: socket, yaml: "broker:\n  uri: unix:\(path)\ntopics:\n  device: dev1\n")
        defer { _ = forwarder.stop() }
        #expect(await subscriber.wait(timeout: 30) { Self.events($0).count >= 2 }, "\(forwarder.stderr)")
        #expect(Self.status(directory)["broker"] == "unix:\(path)")
    }

    // MARK: TLS and passwords

    /// A CA and a server certificate for localhost and 127.0.0.1, made with openssl.
    static func makeCertificates(_ directory: String, ca: String = "ca") async throws {
        func openssl(_ arguments: [String]) async throws {
            let result = try await Command.run("/usr/bin/openssl", arguments)
            guard result.status == 0 else { throw HarnessError("openssl \(arguments.first ?? ""): \(result.stderr)") }
        }
        try await openssl([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=\(ca)", "-keyout",
            "\(directory)/\(ca).key", "-out", "\(directory)/\(ca).pem",
        ])
        if ca != "ca" { return }
        try await openssl([
            "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", "\(directory)/server.key",
            "-out", "\(directory)/server.csr",
        ])
        try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(
            toFile: "\(directory)/san.ext", atomically: true, encoding: .utf8)
        try await openssl([
            "x509", "-req", "-in", "\(directory)/server.csr", "-CA", "\(directory)/ca.pem", "-CAkey",
            "\(directory)/ca.key", "-CAcreateserial", "-days", "2", "-extfile", "\(directory)/san.ext", "-out",
            "\(directory)/server.pem",
        ])
    }

    @Test(.enabled(if: hasMosquitto)) func tlsWithTheRightCAWorksAndAWrongCAIsRefusedClearly() async throws {
        let directory = try Harness.scratch("mqtt-tls")
        try await Self.makeCertificates(directory)
        try await Self.makeCertificates(directory, ca: "other")
        let port = Self.freePort()
        let broker = try await Self.startBroker(
            directory: directory, port: port,
            extra: [
                "cafile \(directory)/ca.pem", "certfile \(directory)/server.pem", "keyfile \(directory)/server.key",
            ])
        defer { _ = broker.stop() }
        let (daemon, socket, _) = try await Harness.startReplayDaemon(
            "mqtt-tls-daemon", trace: trace, arguments: ["--loop"])
        defer { _ = daemon.stop() }
        let good = try Self.startForwarder(
            directory: directory, socket: socket,
            yaml: "broker:\n  uri: mqtts://localhost:\(port)\n  ca_file: \(directory)/ca.pem\n", name: "good")
        defer { _ = good.stop() }
        let bad = try Self.startForwarder(
            directory: directory, socket: socket,
            yaml: "broker:\n  uri: mqtts://localhost:\(port)\n  ca_file: \(directory)/other.pem\n", name: "bad")
        defer { _ = bad.stop() }
        #expect(
            await good.wait(timeout: 30) { _ in Self.status(directory, name: "good")["broker_connected"] == "yes"
            },
            "\(good.stderr)")
        #expect(
            await bad.wait(timeout: 30) { $0.stderr.contains("the broker refused the connection") }, "\(bad.stderr)")
        #expect(bad.stderr.contains("certificate verify failed"), "\(bad.stderr)")
        #expect(bad.stderr.contains("broker.ca_file"))
        #expect(Self.status(directory, name: "bad")["broker_connected"] == "no")
        #expect(Self.status(directory, name: "bad")["last_error"]?.contains("TLS") == true)
    }

    @Test(.enabled(if: hasMosquitto)) func aBadPasswordIsRefusedClearlyAndTheRightOneFromACredentialWorks() async throws
    {
        let directory = try Harness.scratch("mqtt-password")
        let passwords = "\(directory)/passwords"
        let made = try await Command.run("/usr/bin/mosquitto_passwd", ["-b", "-c", passwords, "kiosk", "s3cret-pass"])
        #expect(made.status == 0, "\(made.stderr)")
        let port = Self.freePort()
        let broker = try await Self.startBroker(
            directory: directory, port: port, extra: ["allow_anonymous false", "password_file \(passwords)"])
        defer { _ = broker.stop() }
        let (daemon, socket, _) = try await Harness.startReplayDaemon(
            "mqtt-password-daemon", trace: trace, arguments: ["--loop"])
        defer { _ = daemon.stop() }
        try "wrong-pass\n".write(toFile: "\(directory)/wrong", atomically: true, encoding: .utf8)
        let bad = try Self.startForwarder(
            directory: directory, socket: socket,
            yaml: Self.yaml(
                port: port, device: "bad", broker: "  username: kiosk\n  password_file: \(directory)/wrong\n"),
            name: "bad")
        defer { _ = bad.stop() }
        #expect(
            await bad.wait(timeout: 30) { $0.stderr.contains("the broker refused the connection") }, "\(bad.stderr)")
        // mosquitto answers a wrong password with "not authorised".
        #expect(bad.stderr.contains("not authorised (a wrong user name or password"), "\(bad.stderr)")
        #expect(bad.stderr.contains("broker.password_file"))
        #expect(!bad.stderr.contains("wrong-pass"), "the password is in the log")
        // The right one, as systemd's LoadCredential= passes it.
        let credentials = try Harness.scratch("mqtt-credentials")
        try "s3cret-pass\n".write(toFile: "\(credentials)/mqtt-password", atomically: true, encoding: .utf8)
        let configuration = "\(directory)/good.yaml"
        try Self.yaml(
            port: port, device: "good", broker: "  username: kiosk\n  password_credential: mqtt-password\n"
        )
        .write(toFile: configuration, atomically: true, encoding: .utf8)
        let good = try DaemonProcess(
            command: [
                "/usr/bin/env", "CREDENTIALS_DIRECTORY=\(credentials)", Harness.product("shaked-mqtt"), "--config",
                configuration, "--socket", socket, "--status-file", "\(directory)/good.status",
            ], pidFile: "\(directory)/good.pid")
        defer { _ = good.stop() }
        #expect(
            await good.wait(timeout: 30) { _ in Self.status(directory, name: "good")["broker_connected"] == "yes"
            },
            "\(good.stderr)")
        #expect(!good.stderr.contains("s3cret"))
    }

    // MARK: Bad input

    /// A "broker" that answers every connection with junk and hangs up, over and over: the forwarder keeps trying
    /// with back-off, logs it once, and its memory stays flat.
    @Test(.enabled(if: hasMosquitto)) func aBrokerThatSendsGarbageIsSurvived() async throws {
        let directory = try Harness.scratch("mqtt-garbage")
        let port = Self.freePort()
        let junk = """
            import socket, os
            s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", \(port))); s.listen(16)
            n = 0
            while True:
                c, _ = s.accept(); n += 1
                c.sendall(os.urandom(4096) if n % 2 else b"\\x20\\x02\\x00\\x00" + b"\\xff" * 1000)
                c.close()
                open("\(directory)/accepted", "w").write(str(n))
            """
        try junk.write(toFile: "\(directory)/junk.py", atomically: true, encoding: .utf8)
        let fake = try DaemonProcess(
            command: ["/usr/bin/python3", "\(directory)/junk.py"], pidFile: "\(directory)/junk.pid")
        defer { _ = fake.stop() }
        #expect(await fake.wait(timeout: 10) { _ in Self.isListening(port: port) })
        let (daemon, socket, _) = try await Harness.startReplayDaemon(
            "mqtt-garbage-daemon", trace: trace, arguments: ["--loop", "--speed", "4"])
        defer { _ = daemon.stop() }
        let forwarder = try Self.startForwarder(directory: directory, socket: socket, yaml: Self.yaml(port: port))
        defer { _ = forwarder.stop() }
        let accepted = { Int((try? String(contentsOfFile: "\(directory)/accepted", encoding: .utf8)) ?? "0") ?? 0 }
        #expect(await forwarder.wait(timeout: 30) { _ in accepted() >= 5 }, "\(forwarder.stderr)")
        let pid = try #require(forwarder.daemonPID)
        #expect(kill(pid, 0) == 0, "the forwarder died: \(forwarder.stderr)")
        // Not under a sanitizer, whose allocator and shadow memory are counted too (67 MB under ThreadSanitizer).
        if !LoadTests.sanitized {
            #expect(LoadTests.residentKilobytes(pid) < 64 * 1024)
        }
        #expect(Self.status(directory)["broker_connected"] == "no")
        // One warning for the outage, not one per attempt.
        let lines = forwarder.stderr.split(separator: "\n").filter { $0.contains("broker") && $0.contains("warning") }
        #expect(lines.count <= 2, "\(forwarder.stderr)")
    }

    /// A "daemon" that says hello and then sends a 10 MB line: the forwarder refuses the line, says so, keeps its
    /// memory bounded and reconnects.
    @Test(.enabled(if: hasMosquitto)) func aTenMegabyteLineFromAFakeDaemonIsRefusedWithBoundedMemory() async throws {
        let directory = try Harness.scratch("mqtt-longline")
        let socket = "\(directory)/fake.sock"
        let fakeDaemon = """
            import socket, os
            s = socket.socket(socket.AF_UNIX); s.bind("\(socket)"); s.listen(4)
            n = 0
            while True:
                c, _ = s.accept(); n += 1
                c.sendall(b'{"event":"hello","protocol":1,"sensor":{"source":"replay"},"shaking":false,"seq":0,"run":"f"}\\n')
                try:
                    c.sendall(b'{"event":"shake","detail":"' + b"x" * (10 << 20) + b'"}\\n')
                except OSError:
                    pass
                c.close()
                open("\(directory)/served", "w").write(str(n))
            """
        try fakeDaemon.write(toFile: "\(directory)/fake.py", atomically: true, encoding: .utf8)
        let fake = try DaemonProcess(
            command: ["/usr/bin/python3", "\(directory)/fake.py"], pidFile: "\(directory)/fake.pid")
        defer { _ = fake.stop() }
        #expect(await fake.wait(timeout: 10) { _ in UnixSocket.isListening(socket) })
        let port = Self.freePort()
        let broker = try await Self.startBroker(directory: directory, port: port)
        defer { _ = broker.stop() }
        let forwarder = try Self.startForwarder(directory: directory, socket: socket, yaml: Self.yaml(port: port))
        defer { _ = forwarder.stop() }
        let served = { Int((try? String(contentsOfFile: "\(directory)/served", encoding: .utf8)) ?? "0") ?? 0 }
        #expect(await forwarder.wait(timeout: 30) { _ in served() >= 3 }, "it did not reconnect: \(forwarder.stderr)")
        let pid = try #require(forwarder.daemonPID)
        #expect(kill(pid, 0) == 0, "the forwarder died: \(forwarder.stderr)")
        // A sanitizer's allocator keeps freed memory (AddressSanitizer quarantines it, here the refused 10 MB and
        // its copies): there the figure says nothing about the forwarder, and the sanitizer checks it instead.
        if !LoadTests.sanitized {
            #expect(LoadTests.residentKilobytes(pid) < 64 * 1024)
        }
        #expect(
            forwarder.stderr.contains("the connection failed: the daemon sent a line longer than 1048576 bytes"),
            "\(forwarder.stderr)")
    }

    // MARK: Retiring and checking

    @Test(.enabled(if: hasMosquitto)) func retiringEmptiesEveryRetainedTopicOfTheDevice() async throws {
        let directory = try Harness.scratch("mqtt-retire")
        let port = Self.freePort()
        let broker = try await Self.startBroker(directory: directory, port: port)
        defer { _ = broker.stop() }
        let (daemon, socket, _) = try await Harness.startReplayDaemon(
            "mqtt-retire-daemon", trace: trace, arguments: ["--loop"])
        defer { _ = daemon.stop() }
        let forwarder = try Self.startForwarder(directory: directory, socket: socket, yaml: Self.yaml(port: port))
        #expect(await forwarder.wait(timeout: 30) { _ in Self.status(directory)["broker_connected"] == "yes" })
        #expect(await forwarder.stop() == 0)
        let retained = {
            try await Self.retained(directory: directory, port: port, topics: ["shaked/dev1/#", "homeassistant/#"]).map(
                \.topic)
        }
        #expect(try await retained().contains("homeassistant/event/shaked_dev1/shake/config"))
        #expect(try await retained().contains("shaked/dev1/availability"))
        let result = try await Command.run("shaked-mqtt", ["--config", "\(directory)/forwarder.yaml", "--retire"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try await retained() == [])
    }

    @Test func checkConfigPrintsTheSettingsAndBadOnesFailWithFileAndLine() async throws {
        let directory = try Harness.scratch("mqtt-check")
        let configuration = "\(directory)/mqtt.yaml"
        try "broker:\n  uri: mqtts://broker.example\ntopics:\n  device: kiosk\n".write(
            toFile: configuration, atomically: true, encoding: .utf8)
        let good = try await Command.run("shaked-mqtt", ["--config", configuration, "--check-config"])
        #expect(good.status == 0, "\(good.stderr)")
        #expect(good.stdout.contains("broker.uri: mqtts://broker.example:8883  (\(configuration):2)"))
        #expect(good.stdout.contains("topics: shaked/kiosk/event, shaked/kiosk/availability, shaked/kiosk/state"))
        try "topics:\n  qos: 3\n".write(toFile: configuration, atomically: true, encoding: .utf8)
        let bad = try await Command.run("shaked-mqtt", ["--config", configuration, "--check-config"])
        #expect(bad.status == 78)
        #expect(bad.stderr.contains("\(configuration):2: topics.qos: 3 is out of range"))
    }

    /// The check is the schema's rows: a line for every key with its value and where it came from, the command
    /// line's options too, so a new key shows by its row alone.
    @Test func checkConfigShowsEveryKeyOfTheSchemaAndTheCommandLine() async throws {
        let directory = try Harness.scratch("mqtt-check-schema")
        let configuration = "\(directory)/mqtt.yaml"
        try "broker:\n  cert_file: /etc/c.pem\n  key_file: /etc/c.key\ntopics:\n  phases: [ended]\n".write(
            toFile: configuration, atomically: true, encoding: .utf8)
        let result = try await Command.run(
            "shaked-mqtt",
            ["--config", configuration, "--check-config", "--log-level", "debug", "--socket", "/tmp/other.sock"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        for key in MQTTConfiguration.schema.keys {
            #expect(lines.contains { $0.hasPrefix("\(key.path): ") }, "no \(key.path): \(result.stdout)")
        }
        #expect(lines.contains("broker.key_file: /etc/c.key  (\(configuration):3)"), "\(result.stdout)")
        #expect(lines.contains("topics.phases: [ended]  (\(configuration):5)"), "\(result.stdout)")
        #expect(lines.contains("queue.size: 1000  (default)"), "\(result.stdout)")
        #expect(lines.contains("logging.level: debug  (the command line (--log-level))"), "\(result.stdout)")
        #expect(lines.contains("daemon.socket: /tmp/other.sock  (the command line (--socket))"), "\(result.stdout)")
    }

    /// Every option `shaked-mqtt --help` lists is in shaked-mqtt(8), and every key of the shipped
    /// config/mqtt.yaml is in shaked-mqtt.yaml(5) under its section, with its default.
    @Test(.enabled(if: ManPages.formattersPresent)) func theManPagesMatchTheProgramAndTheShippedFile() async throws {
        let help = try await Command.run("shaked-mqtt", ["--help"]).stdout
        let page = try await ManPages.render("shaked-mqtt.8")
        let options = ManPages.longOptions(in: help)
        #expect(options.count >= 8)
        for option in options { #expect(page.contains(option), "shaked-mqtt(8) does not mention \(option)") }
        let shipped = try String(
            contentsOf: Fixtures.repository.appendingPathComponent("config/mqtt.yaml"), encoding: .utf8)
        let configuration = try await ManPages.render("shaked-mqtt.yaml.5")
        var checked = 0
        for line in shipped.split(separator: "\n") {
            if let match = line.wholeMatch(of: /([a-z_]+):\s*/) {
                #expect(configuration.contains("\n   \(match.1)\n"), "no \(match.1) section")
                continue
            }
            guard let match = line.firstMatch(of: /^  (?:# )?([a-z_]+): ([^#]+?)\s*$/) else { continue }
            let (key, value) = (String(match.1), String(match.2))
            #expect(configuration.contains("\n       \(key)"), "shaked-mqtt.yaml(5) does not document \(key)")
            if !line.hasPrefix("  #") && !value.hasPrefix("[") {
                #expect(
                    configuration.contains("\(key) (default \(value)"),
                    "shaked-mqtt.yaml(5): \(key) should show \(value)")
            }
            checked += 1
        }
        #expect(checked >= 15)
        // And the shipped file is valid and says the defaults.
        let check = try await Command.run(
            "shaked-mqtt",
            ["--config", Fixtures.repository.appendingPathComponent("config/mqtt.yaml").path, "--check-config"])
        #expect(check.status == 0, "\(check.stderr)")
    }
}
