// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeClient
import ShakeDetection
import ShakeServer
import ShakeTestSupport
import Testing

/// A consumer that stops reading holds the client back, and the client holds the socket back: the daemon's
/// queue for it fills and drops, and the consumer is told. Without backpressure the client would read all of it
/// into memory and nothing would be dropped.
struct ClientBackpressureTests {
    static let count = 10_000

    /// Waits until the server's loop has handled what was published, then gives the client a moment to read.
    static func pause(_ harness: ServerHarness) async throws {
        _ = await harness.server.clientCount()
        try await Task.sleep(nanoseconds: 2_000_000)
    }

    func configuration() -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.queueLimit = 16
        configuration.dropLimit = 1_000_000
        configuration.access.samples = PeerRule(users: [getuid()], groups: [])
        return configuration
    }

    @Test func aConsumerThatSleepsThrough10000EventsSeesDroppedAndEverythingIsAccountedFor() async throws {
        let harness = try await ServerHarness(configuration: configuration())
        let count = Self.count
        try await harness.client.withUpdates(reconnect: false) { updates in
            var iterator = updates.makeAsyncIterator()
            guard case .connected = try await iterator.next() else {
                Issue.record("the first update is not connected")
                return
            }
            #expect(await ServerHarness.eventually { harness.listeners.current == 1 })
            // The consumer takes nothing while every event is published, at a pace a client that read
            // regardless would keep up with.
            for batch in 0..<(count / 100) {
                for index in 1...100 { harness.publish(.began(time: Double(batch * 100 + index))) }
                try await Self.pause(harness)
            }
            #expect(await ServerHarness.eventually { await harness.server.latestSeq() == count })
            var received = 0
            var dropped = 0
            var last = 0
            while last < count, let update = try await iterator.next() {
                switch update {
                case .shake(let notification):
                    #expect(notification.seq > last)
                    received += 1
                    last = notification.seq
                case .dropped(let lost):
                    dropped += lost
                default:
                    break
                }
            }
            #expect(last == count)
            #expect(dropped > 0)
            #expect(received + dropped == count)
            // What the client held while its consumer slept is bounded by the socket's and the queues' room.
            #expect(received < count / 2)
        }
        await harness.stop()
    }

    @Test func aConsumerThatSleepsThrough10000SamplesGetsOnlyWhatTheBuffersHeld() async throws {
        let harness = try await ServerHarness(configuration: configuration())
        let count = Self.count
        try await harness.client.withSamples { samples in
            var iterator = samples.makeAsyncIterator()
            // A sample once the server counts the stream; then the consumer sleeps while the rest are published.
            #expect(await ServerHarness.eventually { harness.sampleStreams.current == 1 })
            harness.server.publish(sample: Sample(time: 0, x: 0, y: 0, z: 9.81))
            _ = try await iterator.next()
            for batch in 0..<(count / 100) {
                for index in 1...100 {
                    harness.server.publish(sample: Sample(time: Double(batch * 100 + index), x: 0, y: 0, z: 9.81))
                }
                try await Self.pause(harness)
            }
            var received = 0
            while let sample = try await iterator.next() {
                guard sample.time > 0 else { continue }
                received += 1
                if sample.time == Double(count) { break }
            }
            #expect(received < count / 2)
        }
        await harness.stop()
    }
}
