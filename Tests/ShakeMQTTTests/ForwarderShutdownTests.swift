// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import ShakeConfig
import ShakeMQTT
import ShakeProtocol
import ShakeTestSupport
import Testing

/// The forwarder stops in order: when `run` returns, its subscription to the daemon is closed, so that a process
/// that exits right after (`shaked-mqtt` on SIGTERM) leaves nothing of it behind — no socket, and nothing still
/// being torn down on an event loop, which LeakSanitizer reported as leaked at exit.
struct ForwarderShutdownTests {
    static let quiet: Logger = {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return logger
    }()

    /// 25 stops in a row: a forwarder that did not wait would lose the race against its closing connection now
    /// and then (about one stop in two, measured), and the test with it.
    @Test func runReturnsOnlyOnceItsConnectionToTheDaemonIsClosed() async throws {
        let directory = try Scratch.directory("forwarder-stop")
        let socket = directory + "/shaked.sock"
        let listener = try #require(UnixSocket.bind(socket, type: Int32(SOCK_STREAM.rawValue)))
        defer { close(listener) }
        #expect(listen(listener, 1) == 0)
        var configuration = MQTTConfiguration()
        // Nobody listens there: the session keeps retrying, which does not hold the forwarder's stop.
        configuration.broker.address = .unix(path: directory + "/no-broker.sock")
        let settings = ForwarderSettings(
            configuration: configuration, device: "kiosk1", deviceName: "Kiosk", password: nil, sensitivity: nil,
            statusPath: nil, cursorPath: nil, version: "test")
        for round in 1...25 {
            let (stopRequests, stopNow) = AsyncStream.makeStream(of: Void.self)
            let forwarder = Forwarder(settings: settings, logger: Self.quiet)
            let running = Task {
                try await forwarder.run(socket: socket) {
                    for await _ in stopRequests { return }
                }
            }
            // The daemon's side of the subscription, once the forwarder has subscribed.
            let subscriber = try #require(await Self.acceptSubscriber(on: listener))
            defer { close(subscriber) }
            stopNow.yield()
            try await running.value
            // Closed by now: the end of the stream is there to read at once. Open, the read would find nothing.
            var byte: UInt8 = 0
            let count = recv(subscriber, &byte, 1, Int32(MSG_DONTWAIT))
            #expect(count == 0, "stop \(round): the connection to the daemon was still open when run returned")
            if count != 0 { break }
        }
    }

    /// Accepts one connection on `listener`, greets it as the daemon does, and reads its first request line (the
    /// subscribe), on a thread of its own: accept and read block. - Returns: the connection, or nil.
    static func acceptSubscriber(on listener: Int32) async -> Int32? {
        let hello = ServerMessage.hello(.init(sensor: SensorInfo(source: "replay"), shaking: false, seq: 0, run: "r1"))
        return await withCheckedContinuation { (done: CheckedContinuation<Int32?, Never>) in
            Thread.detachNewThread {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { return done.resume(returning: nil) }
                // A forwarder that never subscribes fails the test instead of holding it.
                UnixSocket.setReceiveTimeout(connection, seconds: 30)
                let greeting = Array((hello.line + "\n").utf8)
                guard greeting.withUnsafeBytes({ send(connection, $0.baseAddress, $0.count, 0) }) == greeting.count
                else {
                    close(connection)
                    return done.resume(returning: nil)
                }
                var byte: UInt8 = 0
                while recv(connection, &byte, 1, 0) == 1 {
                    if byte == UInt8(ascii: "\n") { return done.resume(returning: connection) }
                }
                close(connection)
                done.resume(returning: nil)
            }
        }
    }
}
