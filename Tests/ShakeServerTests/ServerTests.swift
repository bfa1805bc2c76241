// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import ShakeClient
import ShakeDetection
import ShakeProtocol
import ShakeServer
import ShakeTestSupport
import Testing

let ended = ShakeEvent.ended(ShakeSummary(time: 3.02, began: 2.31, peak: 24.5, axis: .x, reversals: 7))

@Suite(.serialized)
struct ServerTests {
    @Test func aThousandSubscribersAllGetTheSameEvent() async throws {
        let harness = try await ServerHarness()
        var connections: [ShakeConnection] = []
        for _ in 0..<1000 {
            connections.append(try await harness.client.connect())
        }
        #expect(await ServerHarness.eventually { await harness.server.clientCount() == 1000 })
        harness.publish(.began(time: 2.31))
        harness.publish(ended)
        let seqs = try await withThrowingTaskGroup(of: [Int].self) { group in
            for connection in connections {
                group.addTask {
                    var seen: [Int] = []
                    for try await message in connection.messages {
                        if case .shake(let notification) = message {
                            seen.append(notification.seq)
                            if case .ended = notification.event { break }
                        }
                    }
                    return seen
                }
            }
            var all: [[Int]] = []
            for try await seen in group { all.append(seen) }
            return all
        }
        #expect(seqs.count == 1000)
        #expect(seqs.allSatisfy { $0 == [1, 2] })
        for connection in connections { connection.close() }
        await harness.stop()
    }

    @Test func helloStatusAndSubscribeFilter() async throws {
        let harness = try await ServerHarness()
        let connection = try await harness.client.connect()
        #expect(connection.hello.sensor.name == "fake")
        #expect(connection.hello.seq == 0)
        try await connection.send(.subscribe(phases: [.ended]))
        try await connection.send(.status)
        var iterator = connection.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .ok(request: "subscribe"))
        guard case .status(let status) = try await iterator.next() else {
            Issue.record("no status")
            return
        }
        // The others: the connection asking is not counted among the subscribers it asks about.
        #expect(status.subscribers == 0 && status.counters["samples"] == 42 && status.seq == 0)
        harness.publish(.began(time: 1))
        harness.publish(ended)
        guard case .shake(let notification) = try await iterator.next() else {
            Issue.record("no event")
            return
        }
        #expect(notification.event == ended)  // began was filtered out
        #expect(notification.seq == 2)
        #expect(notification.timestamp.hasSuffix("Z") && notification.timestamp.count == 24)
        connection.close()
        await harness.stop()
    }

    @Test func replayGivesExactlyWhatWasMissed() async throws {
        var configuration = ServerConfiguration()
        configuration.replayCapacity = 8
        let harness = try await ServerHarness(configuration: configuration)
        for index in 1...6 { harness.publish(.began(time: Double(index))) }
        #expect(await ServerHarness.eventually { await harness.server.latestSeq() == 6 })
        let connection = try await harness.client.connect()
        try await connection.send(.replay(since: 3))
        var seqs: [Int] = []
        for try await message in connection.messages {
            if case .shake(let notification) = message { seqs.append(notification.seq) }
            if case .replayed(let since, let count, let complete) = message {
                #expect(since == 3 && count == 3 && complete)
                break
            }
        }
        #expect(seqs == [4, 5, 6])
        // Past the ring's capacity, the answer says it is incomplete.
        for index in 7...20 { harness.publish(.began(time: Double(index))) }
        #expect(await ServerHarness.eventually { await harness.server.latestSeq() == 20 })
        try await connection.send(.replay(since: 2))
        seqs = []
        var complete = true
        for try await message in connection.messages {
            if case .shake(let notification) = message, notification.seq > 6 { seqs.append(notification.seq) }
            if case .replayed(_, _, let done) = message {
                complete = done
                if seqs.count >= 8 { break }
            }
        }
        #expect(seqs.suffix(8) == Array(13...20))
        #expect(!complete)
        connection.close()
        await harness.stop()
    }

    @Test func everyBadLineGetsAnErrorAndOthersAreNotDisturbed() async throws {
        var configuration = ServerConfiguration()
        configuration.maxBadLines = 10
        configuration.maxLineLength = 1024
        let harness = try await ServerHarness(configuration: configuration)
        let bystander = try await harness.client.connect()
        let raw = try RawClient(path: harness.path)
        #expect(raw.readLine()?.contains(#""event":"hello""#) == true)
        let lines = [
            "not json", "[1]", #"{"request":"fly"}"#, #"{"request":1}"#, #"{"request":"replay"}"#,
            #"{"request":"status","x":1}"#, String(repeating: "x", count: 5000), "",
        ]
        let codes = [
            "not_json", "not_an_object", "unknown_request", "wrong_type", "missing_field", "unknown_field",
            "line_too_long", "empty_line",
        ]
        for (line, code) in zip(lines, codes) {
            raw.write(line + "\n")
            #expect(raw.readLine()?.contains(#""error":"\#(code)""#) == true, "\(code)")
        }
        raw.write(#"{"request":"status"}"# + "\n")
        #expect(raw.readLine()?.contains(#""event":"status""#) == true)
        // Two more bad lines pass the limit: the client is told and disconnected.
        raw.write("x\ny\n")
        #expect(raw.readLine(containing: "too_many_errors") != nil)
        #expect(raw.readLine() == nil)
        // The bystander still gets events.
        harness.publish(ended)
        var iterator = bystander.messages.makeAsyncIterator()
        guard case .shake(let notification) = try await iterator.next() else {
            Issue.record("the bystander got nothing")
            return
        }
        #expect(notification.seq == 1)
        bystander.close()
        await harness.stop()
    }

    @Test func aMegabyteLineWithoutNewlineCostsNothing() async throws {
        let harness = try await ServerHarness()
        let raw = try RawClient(path: harness.path)
        _ = raw.readLine()
        raw.write(String(repeating: "a", count: 1 << 20))
        #expect(raw.readLine()?.contains("line_too_long") == true)
        raw.write("\n" + #"{"request":"status"}"# + "\n")
        #expect(raw.readLine(containing: #""event":"status""#) != nil)
        await harness.stop()
    }

    @Test func aSubscriberThatNeverReadsDelaysNobodyAndIsCutOff() async throws {
        var configuration = ServerConfiguration()
        configuration.queueLimit = 64
        configuration.dropLimit = 500
        let harness = try await ServerHarness(configuration: configuration)
        let stalled = try RawClient(path: harness.path)  // never reads
        let reader = try await harness.client.connect()
        let count = 5000
        let progress = ServerHarness.Counter()
        let received = Task {
            var last = 0
            for try await message in reader.messages {
                if case .shake(let notification) = message {
                    #expect(notification.seq == last + 1)
                    last = notification.seq
                    progress.set(last)
                    if last == count { break }
                }
            }
            return last
        }
        // Batches of 100, each once the reader has the one before: a pace the reader follows however slow the
        // build, so that it never falls behind itself. The stalled client never reads: a server that waited for
        // it would never get a batch to the reader, however long the deadline.
        for batch in 0..<(count / 100) {
            for index in 0..<100 { harness.publish(.began(time: Double(batch * 100 + index))) }
            let delivered = await ServerHarness.eventually { progress.current == (batch + 1) * 100 }
            #expect(delivered, "batch \(batch) did not reach the reader")
            if !delivered { break }
        }
        #expect(try await received.value == count)
        // The stalled client fell past the drop limit and was disconnected.
        #expect(await ServerHarness.eventually { await harness.server.clientCount() == 1 })
        _ = stalled
        reader.close()
        await harness.stop()
    }

    @Test func aSlowReaderIsToldHowManyItLost() async throws {
        var configuration = ServerConfiguration()
        configuration.queueLimit = 16
        configuration.dropLimit = 1_000_000
        let harness = try await ServerHarness(configuration: configuration)
        let slow = try RawClient(path: harness.path)
        _ = slow.readLine()
        // Enough events to fill the socket buffers and the queue.
        for index in 0..<20_000 { harness.publish(.began(time: Double(index))) }
        #expect(await ServerHarness.eventually { await harness.server.latestSeq() == 20_000 })
        let dropped = slow.readLine(containing: #""event":"dropped""#)
        #expect(dropped != nil)
        // After the notice come the newest events, ending with the last one.
        #expect(slow.readLine(containing: #""seq":20000"#) != nil)
        await harness.stop()
    }

    @Test func tooManyClientsAreRefusedPolitely() async throws {
        var configuration = ServerConfiguration()
        configuration.maxClients = 3
        let harness = try await ServerHarness(configuration: configuration)
        let clients = try (0..<3).map { _ in try RawClient(path: harness.path) }
        for client in clients { #expect(client.readLine()?.contains("hello") == true) }
        let extra = try RawClient(path: harness.path)
        #expect(extra.readLine()?.contains(#""error":"too_many_clients""#) == true)
        #expect(extra.readLine() == nil)
        await harness.stop()
    }

    @Test func simulateAndSamplesAreForPrivilegedPeersOnly() async throws {
        // This process is allowed (root, or listed); a peer that is neither is refused.
        var configuration = ServerConfiguration()
        configuration.access.samples = PeerRule(users: [getuid()], groups: [])
        configuration.access.simulate = PeerRule(users: [getuid()], groups: [])
        let harness = try await ServerHarness(configuration: configuration)
        try await harness.client.simulate()
        #expect(harness.simulated.current == 1)
        harness.server.publish(sample: Sample(time: 1, x: 0, y: 0, z: 9.81))  // nobody asked yet: nothing sent
        let samples = harness.client.samples()
        // The stream is on once the server counts it: one sample then reaches it.
        #expect(await ServerHarness.eventually { harness.sampleStreams.current == 1 })
        harness.server.publish(sample: Sample(time: 2, x: 1, y: 2, z: 3))
        var iterator = samples.makeAsyncIterator()
        let first = try await iterator.next()
        #expect(first?.acceleration == Vector3(x: 1, y: 2, z: 3))
        await harness.stop()
    }

    @Test(
        .enabled(
            if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")))
    func aPeerWithoutRightsIsRefused() async throws {
        let harness = try await ServerHarness()  // Default: privileged = root only.
        chmod(harness.path, 0o666)
        let script = """
            import socket,sys
            s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f=s.makefile('rw')
            f.readline()
            for r in ['{"request":"samples"}','{"request":"simulate"}','{"request":"status"}']:
                f.write(r+'\\n'); f.flush(); print(f.readline().strip())
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = [
            "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script, harness.path,
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        await process.exited()
        let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(
            separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.first?.contains(#""error":"forbidden""#) == true)
        #expect(lines.dropFirst().first?.contains(#""error":"forbidden""#) == true)
        #expect(lines.last?.contains(#""event":"status""#) == true)
        #expect(harness.simulated.current == 0)
        await harness.stop()
    }

    @Test func aStaleSocketIsReplacedAndALiveOneRefused() async throws {
        let harness = try await ServerHarness()
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let second = ShakeServer(hooks: .init(status: { .init(sensor: .none, shaking: false) }), logger: logger)
        await #expect(throws: SocketFile.Unavailable.self) { try await second.start(.path(harness.path)) }
        await second.shutdown()
        // Leave a stale socket file behind: a socket bound, never listening.
        await harness.server.shutdown()
        let stale = try #require(UnixSocket.bind(harness.path, type: Int32(SOCK_STREAM.rawValue)))
        close(stale)
        let third = ShakeServer(hooks: .init(status: { .init(sensor: .none, shaking: false) }), logger: logger)
        try await third.start(.path(harness.path))
        let connection = try await ShakeClient(socketPath: harness.path).connect()
        #expect(connection.hello.sensor.source == "none")
        connection.close()
        await third.shutdown()
        // A regular file is never replaced.
        #expect(FileManager.default.createFile(atPath: harness.path, contents: Data("keep".utf8)))
        let fourth = ShakeServer(hooks: .init(status: { .init(sensor: .none, shaking: false) }), logger: logger)
        await #expect(throws: SocketFile.Unavailable.self) { try await fourth.start(.path(harness.path)) }
        await fourth.shutdown()
        #expect(FileManager.default.contents(atPath: harness.path) == Data("keep".utf8))
        try? FileManager.default.removeItem(atPath: (harness.path as NSString).deletingLastPathComponent)
    }

    /// A `key` request reaches the daemon with the connection's number and the user the kernel named (never one
    /// the client says); the daemon's report reaches that connection only; closing ends the key.
    @Test func aKeyRequestIsHandedOnWithThePeersUserAndEndsWithTheConnection() async throws {
        let harness = try await ServerHarness()
        let other = try RawClient(path: harness.path)
        #expect(other.readLine()?.contains(#""event":"hello""#) == true)
        let connection: String
        do {
            let client = try RawClient(path: harness.path)
            #expect(client.readLine()?.contains(#""event":"hello""#) == true)
            client.write(#"{"request":"key","chord":"bad"}"# + "\n")
            #expect(client.readLine()?.contains(#""error":"bad_value""#) == true)
            client.write(#"{"request":"key","chord":"ctrl+z","phases":["began","ended"]}"# + "\n")
            #expect(client.readLine() == #"{"event":"ok","request":"key"}"#)
            let keys = harness.keys.current
            #expect(keys.count == 1 && keys.first?.hasSuffix(" \(getuid()) ctrl+z began,ended") == true, "\(keys)")
            connection = try #require(keys.first?.split(separator: " ").dropFirst().first).description
            harness.server.send(
                .key(.init(seq: 7, chord: "ctrl+z", result: .pressed)), toConnection: UInt64(connection) ?? 0)
            #expect(client.readLine() == #"{"event":"key","seq":7,"chord":"ctrl+z","result":"pressed"}"#)
            // The other connection asked for nothing and hears nothing of it.
            other.write(#"{"request":"status"}"# + "\n")
            #expect(other.readLine()?.contains(#""event":"status""#) == true)
        }
        // The client is closed: its key ends.
        #expect(await ServerHarness.eventually { harness.keys.current.last == "ended \(connection)" })
        // A simulation is asked for by a user too.
        try await harness.client.simulate()
        #expect(harness.keys.current.last == "simulate by \(getuid())")
        await harness.stop()
    }

    /// A reload that no longer allows `key` ends the key and says so; the connection stays, and a new `key` is
    /// refused. The peer is nobody (root is always allowed).
    @Test(
        .enabled(
            if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")))
    func aReloadThatNarrowsKeyEndsIt() async throws {
        let harness = try await ServerHarness()
        chmod(harness.path, 0o666)
        let script = """
            import socket,sys
            s=socket.socket(socket.AF_UNIX); s.settimeout(20); s.connect(sys.argv[1]); f=s.makefile('rw')
            f.readline()
            f.write('{"request":"key","chord":"undo"}\\n'); f.flush(); print(f.readline().strip(), flush=True)
            print(f.readline().strip(), flush=True)
            f.write('{"request":"key","chord":"undo"}\\n'); f.flush(); print(f.readline().strip(), flush=True)
            f.write('{"request":"status"}\\n'); f.flush(); print(f.readline().strip(), flush=True)
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = [
            "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script, harness.path,
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        #expect(await ServerHarness.eventually { harness.keys.current.contains { $0.hasSuffix(" 65534 undo ended") } })
        var narrower = ServerConfiguration()
        narrower.access.key = .rootOnly
        await harness.server.update(narrower)
        await process.exited()
        let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(
            separator: "\n")
        #expect(lines.count == 4, "\(lines)")
        #expect(lines.first == #"{"event":"ok","request":"key"}"#)
        #expect(lines.dropFirst().first?.contains("no longer allowed to have keys pressed") == true, "\(lines)")
        #expect(lines.dropFirst(2).first?.contains(#""error":"forbidden""#) == true, "\(lines)")
        #expect(lines.last?.contains(#""event":"status""#) == true, "\(lines)")
        #expect(harness.keys.current.last?.hasPrefix("ended ") == true, "\(harness.keys.current)")
        await harness.stop()
    }

    /// The daemon's capture gate hears each subscriber's user (capture can follow that user's session).
    @Test func subscribersAreReportedWithTheirUsers() async throws {
        let harness = try await ServerHarness()
        try await harness.client.withUpdates(reconnect: false) { updates in
            var iterator = updates.makeAsyncIterator()
            guard case .connected = try await iterator.next() else {
                Issue.record("the first update is not connected")
                return
            }
            #expect(await ServerHarness.eventually { harness.listenerUsers.current == [getuid()] })
        }
        #expect(await ServerHarness.eventually { harness.listenerUsers.current.isEmpty })
        await harness.stop()
    }

    /// A connection that asks for the status and leaves never keeps the sensor capturing (with the relay reading
    /// alone, it would restart the capture twice at another rate); one that says nothing does, once its grace is
    /// over. The second connection comes after the first has left, and its report after the first one's grace
    /// has ended: only its own two reports are there.
    @Test func aStatusAloneKeepsNoCaptureAndASilentConnectionDoesAfterItsGrace() async throws {
        let harness = try await ServerHarness()
        _ = try await harness.client.status()
        #expect(await ServerHarness.eventually { await harness.server.clientCount() == 0 })
        let silent = try await harness.client.connect()
        #expect(await ServerHarness.eventually { harness.listenerReports.current == ["1"] })
        await silent.closeAndWait()
        #expect(await ServerHarness.eventually { harness.listenerReports.current == ["1", "0"] })
        await harness.stop()
    }

    /// Asking for events keeps capture on at once, without waiting for the grace; leaving gives it back.
    @Test func aSubscriptionKeepsCaptureUntilItLeaves() async throws {
        let harness = try await ServerHarness()
        try await harness.client.withUpdates(phases: [.ended], reconnect: false) { updates in
            var iterator = updates.makeAsyncIterator()
            guard case .connected = try await iterator.next() else {
                Issue.record("the first update is not connected")
                return
            }
            #expect(await ServerHarness.eventually { harness.listenerReports.current == ["1"] })
        }
        #expect(await ServerHarness.eventually { harness.listenerReports.current == ["1", "0"] })
        await harness.stop()
    }
}

@Suite(.serialized)
struct ClientTests {
    @Test func updatesSurviveADaemonRestartAndMissNothing() async throws {
        let harness = try await ServerHarness()
        let client = harness.client
        let received = ServerHarness.Counter()
        let collected = Task {
            var seqs: [(run: Int, seq: Int)] = []
            var run = 0
            for try await update in client.updates() {
                switch update {
                case .connected: run += 1
                case .shake(let notification):
                    seqs.append((run, notification.seq))
                    received.set(seqs.count)
                    if seqs.count == 5 { return seqs }
                default: break
                }
            }
            return seqs
        }
        #expect(await ServerHarness.eventually { harness.listeners.current == 1 })
        harness.publish(.began(time: 1))
        harness.publish(ended)
        // The restart comes once the client has both events (a client that is still subscribing when the daemon
        // goes has not received them yet).
        #expect(await ServerHarness.eventually { received.current == 2 })
        await harness.server.shutdown()
        // A new daemon run on the same path publishes three events before the client is back.
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let restarted = ShakeServer(hooks: .init(status: { .init(sensor: .none, shaking: false) }), logger: logger)
        try await restarted.start(.path(harness.path))
        restarted.publish(.began(time: 10), seq: 1)
        restarted.publish(.began(time: 11), seq: 2)
        restarted.publish(.began(time: 12), seq: 3)
        // A deadline, so that a client that missed something fails the test instead of waiting forever.
        #expect(await ServerHarness.eventually { received.current == 5 })
        if received.current < 5 { collected.cancel() }
        let seqs = try await collected.value
        #expect(seqs.map(\.seq) == [1, 2, 1, 2, 3])
        #expect(seqs.map(\.run) == [1, 1, 2, 2, 2])
        await restarted.shutdown()
        try? FileManager.default.removeItem(atPath: (harness.path as NSString).deletingLastPathComponent)
    }

    @Test func connectingToNothingSaysWhy() async {
        do {
            _ = try await ShakeClient(socketPath: "/nonexistent/shaked.sock").connect()
            Issue.record("connected to nothing")
        } catch let error as ClientError {
            #expect(error.description.contains("/nonexistent/shaked.sock"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
