// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import Synchronization
import Testing

struct TaskWaitTests {
    /// A wait that returned before the task had ended (or without waiting at all) would give no result, or one
    /// without the task's last steps.
    @Test func theCallerGetsWhatTheTaskReturnedOnceItHasEnded() {
        let steps = Atomic<Int>(0)
        let value = TaskWait.result {
            for _ in 0..<1000 {
                await Task.yield()
                steps.add(1, ordering: .relaxed)
            }
            return steps.load(ordering: .relaxed) * 2
        }
        #expect(value == 2000)
        #expect(steps.load(ordering: .relaxed) == 1000)
    }
}
