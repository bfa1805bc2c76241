// SPDX-License-Identifier: Apache-2.0
import ShakeDetection
import ShakeServer
import ShakeTestSupport
import Testing

/// The server's life: started once, shut down once, and nothing handed to its loop after it stopped.
struct ServerLifecycleTests {
    @Test func startingTwiceIsRefusedAndShuttingDownTwiceIsHarmless() async throws {
        let harness = try await ServerHarness()
        #expect(harness.server.lifecycle == .running)
        await #expect(throws: ShakeServer.AlreadyStarted(lifecycle: .running)) {
            try await harness.server.start(.path(harness.path + "-other"))
        }
        await harness.stop()
        #expect(harness.server.lifecycle == .stopped)
        await harness.server.shutdown()
        #expect(harness.server.lifecycle == .stopped)
        await #expect(throws: ShakeServer.AlreadyStarted(lifecycle: .stopped)) {
            try await harness.server.start(.path(harness.path))
        }
    }

    @Test func publishingAfterShutdownIsIgnored() async throws {
        let harness = try await ServerHarness()
        harness.publish(.began(time: 1))
        await harness.stop()
        // The loop is gone: nothing is handed to it.
        harness.publish(.began(time: 2))
        harness.server.publish(sample: Sample(time: 2, x: 0, y: 0, z: 9.81))
        #expect(harness.server.lifecycle == .stopped)
    }

    @Test func aServerNeverStartedShutsDown() async {
        let server = ShakeServer(
            hooks: .init(status: { .init(sensor: .none, shaking: false) }), logger: .init(label: "t"))
        #expect(server.lifecycle == .notStarted)
        await server.shutdown()
        #expect(server.lifecycle == .stopped)
    }
}
