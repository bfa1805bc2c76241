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

    /// Ten stops in a row: a forwarder that did not wait would lose the race against its closing connection now
    /// and then (about one stop in two, measured), and the test with it.
    ///
    /// It waits for the forwarder to connect and subscribe however long that takes: a forwarder that never does
    /// meets the time limit. Its tasks run on Swift's cooperative pool, which the whole suite shares: while other
    /// tests held the pool's threads in blocking waits, it waited for most of the run (457-487 s of 476-495 s);
    /// since they await instead, 29-39 s.
    @Test(.timeLimit(.minutes(15))) func runReturnsOnlyOnceItsConnectionToTheDaemonIsClosed() async throws {
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
        for round in 1...10 {
            let (stopRequests, stopNow) = AsyncStream.makeStream(of: Void.self)
            let forwarder = Forwarder(settings: settings, logger: Self.quiet)
            let running = Task {
                try await forwarder.run(socket: socket) {
                    for await _ in stopRequests { return }
                }
            }
            // The daemon's side of the subscription, once the forwarder has subscribed; the forwarder is stopped
            // whatever came of it.
            let accepted = await Self.acceptSubscriber(on: listener)
            // What the check below looks for is there while the forwarder runs.
            if case .success = accepted {
                #expect(Self.descriptors(connectedTo: socket).count == 1, "stop \(round): no connection found")
            }
            stopNow.yield()
            try await running.value
            let subscriber = try accepted.get()
            defer { close(subscriber) }
            // Closed by now: no descriptor of this process is connected to the daemon's socket any more. (Not the
            // end of the stream at the daemon's side: a child another test forks at that moment holds a copy of
            // every descriptor until its exec, and the end comes only then — seen once on a loaded machine.)
            let open = Self.descriptors(connectedTo: socket)
            #expect(open.isEmpty, "stop \(round): the connection to the daemon was still open when run returned")
            if !open.isEmpty { break }
        }
    }

    /// This process's descriptors whose peer is the Unix socket bound at `path`: a client's connections to it
    /// (the listener is connected to nobody, and an accepted connection's peer has no name).
    static func descriptors(connectedTo path: String) -> [Int32] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.compactMap { Int32($0) }.filter { descriptor in
            var address = sockaddr_un()
            var length = socklen_t(MemoryLayout<sockaddr_un>.size)
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
            }
            guard named == 0, address.sun_family == sa_family_t(AF_UNIX) else { return false }
            let peer = withUnsafeBytes(of: address.sun_path) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            return peer == path
        }
    }

    /// Accepts a connection on `listener`, greets it as the daemon does, and reads its first request line (the
    /// subscribe), on a thread of its own: accept and read block. A connection closed before its request (the
    /// client's reconnecting) is let go for the next. - Returns: the subscribed connection, or why there is none.
    static func acceptSubscriber(on listener: Int32) async -> Result<Int32, Refusal> {
        let hello = ServerMessage.hello(.init(sensor: SensorInfo(source: "replay"), shaking: false, seq: 0, run: "r1"))
        let greeting = Array((hello.line + "\n").utf8)
        return await withCheckedContinuation { (done: CheckedContinuation<Result<Int32, Refusal>, Never>) in
            Thread.detachNewThread {
                for _ in 0..<5 {
                    let connection = retryingInterrupts { accept(listener, nil, nil) }
                    guard connection >= 0 else { return done.resume(returning: .failure(.init("accept", errno))) }
                    let sent = retryingInterrupts {
                        greeting.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    }
                    var byte: UInt8 = 0
                    var count = sent == greeting.count ? 1 : 0
                    while count == 1 && byte != UInt8(ascii: "\n") {
                        count = retryingInterrupts { recv(connection, &byte, 1, 0) }
                    }
                    if count == 1 { return done.resume(returning: .success(connection)) }
                    let failure = Refusal("greeting or reading the request", count < 0 ? errno : 0)
                    close(connection)
                    if count < 0 { return done.resume(returning: .failure(failure)) }
                }
                done.resume(returning: .failure(.init("five connections closed before subscribing", 0)))
            }
        }
    }

    struct Refusal: Error, CustomStringConvertible {
        let description: String
        init(_ step: String, _ code: Int32) { description = code == 0 ? step : "\(step): errno \(code)" }
    }

    /// `call`, again while a signal interrupts it.
    static func retryingInterrupts<T: BinaryInteger>(_ call: () -> T) -> T {
        while true {
            let result = call()
            if result >= 0 || errno != EINTR { return result }
        }
    }
}
