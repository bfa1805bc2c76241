// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import Synchronization
import Testing

struct TaskWaitTests {
    final class Steps: Sendable {
        let count = Atomic<Int>(0)
    }

    /// A wait that returned before the task had ended (or without waiting at all) would give no result, or one
    /// without the task's last steps.
    ///
    /// The wait blocks its caller, so it is made from a thread of its own, as the daemon's `main` makes it from
    /// the main thread: made from the test's own thread, one of Swift's cooperative pool, it would hold that
    /// thread (of one a core) while the task it waits for needs the pool, as every other test does.
    @Test func theCallerGetsWhatTheTaskReturnedOnceItHasEnded() async throws {
        let steps = Steps()
        let value = Mutex<Int?>(nil)
        let caller = try #require(
            BlockingThread.start(name: "test-task-wait") {
                let result = TaskWait.result {
                    for _ in 0..<1000 {
                        await Task.yield()
                        steps.count.add(1, ordering: .relaxed)
                    }
                    return steps.count.load(ordering: .relaxed) * 2
                }
                value.withLock { $0 = result }
            })
        await caller.join()
        #expect(value.withLock { $0 } == 2000)
        #expect(steps.count.load(ordering: .relaxed) == 1000)
    }
}
