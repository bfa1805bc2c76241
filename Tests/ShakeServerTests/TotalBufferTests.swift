// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeDetection
import ShakeServer
import ShakeTestSupport
import Testing

/// The budget for all clients together (`total_buffer`) counts what the server holds for them: bytes waiting in
/// queues and bytes handed to sockets that have not taken them yet. Lines a reading client's socket takes at once
/// cost nothing and leave the count where it was, however many there were.
struct TotalBufferTests {
    /// The `events_dropped` counter, from a `status` answer read by `client`.
    static func eventsDropped(asking client: RawClient) throws -> Int {
        client.write(#"{"request":"status"}"# + "\n")
        let line = try #require(client.readLine(containing: #""event":"status""#))
        let status = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let counters = try #require(status["counters"] as? [String: Any])
        return try #require(counters["events_dropped"] as? Int)
    }

    /// A configuration where the total budget (8 KiB) is the only limit in reach: a client's own buffer and
    /// queue hold far more than it.
    static var onlyTheTotalLimits: ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.totalBuffer = 8 * 1024
        configuration.clientBuffer = 64 * 1024
        configuration.queueLimit = 100_000
        configuration.dropLimit = 1_000_000
        return configuration
    }

    /// Publishes `rounds` times ten events, numbered on from `published`, each ten read by `reader` before the
    /// next (which its socket holds even when the reader is slow to run).
    static func publishInTens(_ rounds: Int, on harness: ServerHarness, readBy reader: RawClient, published: inout Int)
    {
        for _ in 0..<rounds {
            for _ in 0..<10 {
                published += 1
                harness.publish(.began(time: Double(published)))
            }
            #expect(reader.readLine(containing: #""seq":\#(published),"#) != nil)
        }
    }

    @Test func aClientThatStopsReadingAfterThousandsOfDeliveredEventsMeetsTheTotalBudget() async throws {
        let harness = try await ServerHarness(configuration: Self.onlyTheTotalLimits)
        let reader = try RawClient(path: harness.path)
        #expect(reader.readLine(containing: #""event":"hello""#) != nil)
        // Thousands of events the reader's socket takes as they come (ten at a time, which its socket holds even
        // when the reader is slow to run): nothing is owed for them.
        var published = 0
        Self.publishInTens(200, on: harness, readBy: reader, published: &published)
        #expect(try Self.eventsDropped(asking: reader) == 0)

        // A client that never reads: once its socket is full, what it is owed soon passes the total budget,
        // and the events it would get are dropped from then on.
        let sleeper = try RawClient(path: harness.path)
        #expect(await ServerHarness.eventually { await harness.server.clientCount() == 2 })
        // The reader is owed nothing: its events are not held back.
        Self.publishInTens(30, on: harness, readBy: reader, published: &published)
        #expect(try Self.eventsDropped(asking: reader) > 0)
        withExtendedLifetime(sleeper) {}
        await harness.stop()
    }

    /// What the kernel did not take at once is owed only until it takes it: a client that stopped reading until
    /// the server held more than the whole budget for it, then reads everything, is owed nothing again. Its
    /// waiting request is answered, and it gets every event from then on, none dropped.
    @Test func aClientThatCatchesUpIsOwedNothingAgain() async throws {
        let harness = try await ServerHarness(configuration: Self.onlyTheTotalLimits)
        let sleeper = try RawClient(path: harness.path)
        #expect(sleeper.readLine(containing: #""event":"hello""#) != nil)
        let observer = try RawClient(path: harness.path)
        #expect(observer.readLine(containing: #""event":"hello""#) != nil)
        // The sleeper does not read: its socket fills, then the bytes the server holds for it pass the budget.
        // The observer reads along, ten events at a time.
        var published = 0
        Self.publishInTens(200, on: harness, readBy: observer, published: &published)
        let droppedWhileAsleep = try TotalBufferTests.eventsDropped(asking: observer)
        #expect(droppedWhileAsleep > 0)
        // It asks, then reads: the question is read once everything held for it was taken.
        sleeper.write(#"{"request":"status"}"# + "\n")
        #expect(sleeper.readLine(containing: #""event":"status""#) != nil)
        // Nothing is owed any more, to it or in all: its events go out one by one, none dropped.
        for _ in 0..<20 {
            published += 1
            harness.publish(.began(time: Double(published)))
            let line = try #require(sleeper.readLine())
            #expect(line.contains(#""seq":\#(published),"#), "\(line)")
        }
        #expect(try TotalBufferTests.eventsDropped(asking: observer) == droppedWhileAsleep)
        await harness.stop()
    }
}
