import Foundation
import ShakeDetection
import ShakeServer
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

    @Test func aClientThatStopsReadingAfterThousandsOfDeliveredEventsMeetsTheTotalBudget() async throws {
        var configuration = ServerConfiguration()
        // The total is the only limit in reach: a client's own buffer and queue hold far more than it.
        configuration.totalBuffer = 8 * 1024
        configuration.clientBuffer = 64 * 1024
        configuration.queueLimit = 100_000
        configuration.dropLimit = 1_000_000
        let harness = try await ServerHarness(configuration: configuration)
        let reader = try RawClient(path: harness.path)
        #expect(reader.readLine(containing: #""event":"hello""#) != nil)
        // Thousands of events the reader's socket takes as they come (ten at a time, which its socket holds even
        // when the reader is slow to run): nothing is owed for them.
        var published = 0
        for _ in 0..<200 {
            for _ in 0..<10 {
                published += 1
                harness.server.publish(.began(time: Double(published)))
            }
            #expect(reader.readLine(containing: #""seq":\#(published),"#) != nil)
        }
        #expect(try Self.eventsDropped(asking: reader) == 0)

        // A client that never reads: once its socket is full, what it is owed soon passes the total budget,
        // and the events it would get are dropped from then on.
        let sleeper = try RawClient(path: harness.path)
        #expect(await ServerHarness.eventually { await harness.server.clientCount() == 2 })
        for _ in 0..<30 {
            for _ in 0..<10 {
                published += 1
                harness.server.publish(.began(time: Double(published)))
            }
            // The reader is owed nothing: its events are not held back.
            #expect(reader.readLine(containing: #""seq":\#(published),"#) != nil)
        }
        #expect(try Self.eventsDropped(asking: reader) > 0)
        withExtendedLifetime(sleeper) {}
        await harness.stop()
    }
}
