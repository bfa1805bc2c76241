// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeDetection
import ShakeProtocol
import ShakeServer
import ShakeTestSupport
import Testing

/// A new configuration applied to a running server (the daemon's SIGHUP reload).
struct ServerUpdateTests {
    @Test func subscribersStayAndTheReplayRingKeepsItsNewestEvents() async throws {
        var configuration = ServerConfiguration()
        configuration.replayCapacity = 8
        let harness = try await ServerHarness(configuration: configuration)
        let subscriber = try RawClient(path: harness.path)
        #expect(subscriber.readLine()?.contains(#""event":"hello""#) == true)
        subscriber.write(#"{"request":"subscribe"}"# + "\n")
        #expect(subscriber.readLine()?.contains(#""request":"subscribe""#) == true)
        for second in 1...6 {
            let seq = harness.publish(.began(time: Double(second)))
            #expect(seq == second)
        }
        configuration.replayCapacity = 3
        configuration.maxBadLines = 2
        await harness.server.update(configuration)
        harness.publish(.began(time: 7))
        for seq in 1...7 {
            #expect(subscriber.readLine()?.contains(#""seq":\#(seq)"#) == true, "event \(seq) after the update")
        }
        // Only the newest three are left to replay: 5, 6 and 7.
        subscriber.write(#"{"request":"replay","since":0}"# + "\n")
        let replayed = (0..<4).compactMap { _ in subscriber.readLine() }
        #expect(
            replayed.prefix(3).map { $0.contains(#""seq":5"#) || $0.contains(#""seq":6"#) || $0.contains(#""seq":7"#) }
                == [true, true, true])
        #expect(replayed.last?.contains(#""complete":false"#) == true)
        // The new bad-line limit applies to a connected client.
        subscriber.write("nonsense\nnonsense\n")
        #expect(subscriber.readLine(containing: "too_many_errors") != nil)
        await harness.stop()
    }

    /// A reloaded `max_line_length` applies to connections already open, from their next line on.
    @Test func aNewLineLengthAppliesToConnectedClients() async throws {
        let harness = try await ServerHarness()
        let client = try RawClient(path: harness.path)
        #expect(client.readLine()?.contains(#""event":"hello""#) == true)
        // 600 bytes: a valid status request under the default limit.
        client.write(#"{"request":"status"\#(String(repeating: " ", count: 580))}"# + "\n")
        #expect(client.readLine()?.contains(#""event":"status""#) == true)
        var configuration = ServerConfiguration()
        configuration.maxLineLength = 300
        await harness.server.update(configuration)
        client.write(#"{"request":"status"\#(String(repeating: " ", count: 580))}"# + "\n")
        #expect(client.readLine()?.contains(#""error":"line_too_long""#) == true)
        await harness.stop()
    }

    @Test(
        .enabled(
            if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")))
    func revokedRightsTakeEffectOnConnectedClients() async throws {
        var configuration = ServerConfiguration()
        configuration.access.samples = PeerRule(users: [65534], groups: [])
        let harness = try await ServerHarness(configuration: configuration)
        chmod(harness.path, 0o666)
        // A peer (uid 65534) streams samples, then waits for what the server says next.
        let script = """
            import socket,sys
            s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f=s.makefile('rw')
            f.readline()
            f.write('{"request":"samples"}\\n'); f.flush(); print(f.readline().strip(), flush=True)
            for line in f:
                if '"sample"' not in line:
                    print(line.strip(), flush=True)
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = [
            "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script, harness.path,
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // The peer's sample stream is on before access narrows.
        #expect(await ServerHarness.eventually { harness.sampleStreams.current == 1 })
        harness.server.publish(sample: Sample(time: 1, x: 0, y: 0, z: 9.81))
        // Samples revoked: the stream stops with an error, the connection stays.
        configuration.access.samples = .rootOnly
        await harness.server.update(configuration)
        #expect(await harness.server.clientCount() == 1)
        // Subscribing revoked for everyone but root: the peer is told and disconnected.
        configuration.access.subscribe = .rootOnly
        await harness.server.update(configuration)
        await process.exited()
        let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .split(separator: "\n").map(String.init)
        #expect(lines.first?.contains(#""request":"samples""#) == true)
        #expect(lines.dropFirst().first?.contains("no longer allowed to stream samples") == true)
        #expect(lines.last?.contains("no longer allowed to subscribe") == true)
        #expect(await ServerHarness.eventually { await harness.server.clientCount() == 0 })
        await harness.stop()
    }
}
