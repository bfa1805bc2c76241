// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeClient
import ShakeDetection
import ShakeProtocol
import ShakeServer
import ShakeTestSupport
import Testing

/// A `ShakeConnection`'s socket is owned by a task of its own: closing ends it even while the consumer does not
/// read, sends after the close fail cleanly, and dropping the connection without closing it closes the socket.
struct ConnectionLifetimeTests {
    func configuration() -> ServerConfiguration {
        var configuration = ServerConfiguration()
        // Small queue, no cut-off: a client that does not read stays connected and is dropped events.
        configuration.queueLimit = 16
        configuration.dropLimit = 1_000_000
        return configuration
    }

    @Test func closingWhileTheConsumerDoesNotReadEndsTheMessagesAndFailsLaterSends() async throws {
        let harness = try await ServerHarness(configuration: configuration())
        let connection = try await harness.client.connect()
        try await connection.send(.subscribe(phases: []))
        #expect(await ServerHarness.eventually { harness.listeners.current == 1 })
        // Far more than the client's buffers hold: its reader ends up waiting for a consumer that never comes.
        for batch in 0..<20 {
            for index in 1...50 { harness.publish(.began(time: Double(batch * 50 + index))) }
            _ = await harness.server.clientCount()
            try await Task.sleep(nanoseconds: 2_000_000)
        }
        // Returns although the reader is held up: closing lets it go, and the socket is closed on return.
        await connection.closeAndWait()
        #expect(await ServerHarness.eventually { await harness.server.clientCount() == 0 })
        // What was read before the close is still delivered, in order, then the stream ends without an error.
        var shakes = 0
        var last = 0
        for try await message in connection.messages {
            guard case .shake(let notification) = message else { continue }
            #expect(notification.seq > last)
            last = notification.seq
            shakes += 1
        }
        #expect(shakes > 0)
        #expect(shakes < 1000)
        await #expect(throws: ClientError.closed) { try await connection.send(.status) }
        await harness.stop()
    }

    @Test func aConnectionDroppedWithoutClosingIsClosed() async throws {
        let harness = try await ServerHarness(configuration: configuration())
        do {
            let connection = try await harness.client.connect()
            try await connection.send(.subscribe(phases: []))
            #expect(await ServerHarness.eventually { harness.listeners.current == 1 })
            harness.publish(.began(time: 1))
            var iterator = connection.messages.makeAsyncIterator()
            let (ok, seq) = try await Self.okAndFirstShake(&iterator)
            #expect(ok)
            #expect(seq == 1)
            // The connection goes out of scope here, never closed.
        }
        #expect(await ServerHarness.eventually { await harness.server.clientCount() == 0 })
        await harness.stop()
    }

    @Test func keepingOnlyTheMessagesKeepsTheConnectionOpen() async throws {
        let harness = try await ServerHarness(configuration: configuration())
        let messages = try await {
            let connection = try await harness.client.connect()
            try await connection.send(.subscribe(phases: []))
            return connection.messages
        }()
        #expect(await ServerHarness.eventually { harness.listeners.current == 1 })
        harness.publish(.began(time: 1))
        var iterator = messages.makeAsyncIterator()
        let (ok, seq) = try await Self.okAndFirstShake(&iterator)
        #expect(ok)
        #expect(seq == 1, "no event through the kept stream")
        #expect(await harness.server.clientCount() == 1)
        await harness.stop()
    }

    /// Two tasks reading one connection's messages at once: one of them is refused with `ConcurrentReadError`
    /// (whichever asks while the other waits), the other goes on reading. It used to leave one waiting for ever.
    @Test func aSecondTaskReadingTheMessagesAtOnceIsRefused() async throws {
        let harness = try await ServerHarness(configuration: configuration())
        let connection = try await harness.client.connect()
        let (outcomes, report) = AsyncStream.makeStream(of: String.self)
        func reader() -> Task<Void, Never> {
            Task {
                do {
                    for try await message in connection.messages {
                        if case .status = message { report.yield("status") }
                    }
                    report.yield("end")
                } catch is ConcurrentReadError {
                    report.yield("refused")
                } catch {
                    report.yield("\(error)")
                }
            }
        }
        var next = outcomes.makeAsyncIterator()
        let first = reader()
        try await connection.send(.status)
        #expect(await next.next() == "status")
        let second = reader()
        try await connection.send(.status)
        let two = [await next.next(), await next.next()]
        #expect(two.contains("refused"))
        #expect(two.contains("status"))
        await connection.closeAndWait()
        #expect(await next.next() == "end")
        await first.value
        await second.value
        await harness.stop()
    }

    /// The next two messages, in whichever order they come: every connection gets events from the moment it is
    /// accepted (protocol.md, `subscribe`), so an event published while the subscribe is handled may come before
    /// its `ok`. - Returns: whether the `ok` came, and the seq of the shake that came.
    static func okAndFirstShake(
        _ iterator: inout ShakeConnection.Messages.Iterator
    ) async throws -> (ok: Bool, seq: Int?) {
        var ok = false
        var seq: Int?
        for _ in 0..<2 {
            switch try await iterator.next() {
            case .ok(let request)?: ok = ok || request == "subscribe"
            case .shake(let notification)?: seq = notification.seq
            default: break
            }
        }
        return (ok, seq)
    }
}
