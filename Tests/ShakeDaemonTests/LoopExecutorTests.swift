// SPDX-License-Identifier: Apache-2.0
import NIOPosix
import Testing

@testable import ShakeDaemon

struct LoopExecutorTests {
    /// A sleep that ignored cancellation would hold a service's shutdown for the whole hour.
    @Test func aCancelledSleepEndsAtOnceWithCancellation() async {
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        let sleeper = Task { try await LoopExecutor.sleep(for: .seconds(3600), on: loop) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }

    /// The timer fires: a sleep returns without being cancelled.
    @Test func aSleepReturnsOnceItsTimeHasPassed() async throws {
        try await LoopExecutor.sleep(for: .milliseconds(1))
    }
}
