// SPDX-License-Identifier: Apache-2.0

/// A synchronous caller waiting for asynchronous work: the daemon's `main`, which is synchronous so that nothing
/// of Swift's default executors runs before it has chosen where its tasks run, starts its work as a task and
/// blocks until the task returns. The caller's thread waits on a condition variable; nothing polls.
public enum TaskWait {
    /// Runs `body` as a task on the global executor and blocks the calling thread until it returns.
    /// - Returns: what `body` returned.
    public static func result<Value: Sendable>(of body: @escaping @Sendable () async -> Value) -> Value {
        let completion = Completion()
        let result = Locked<Value?>(nil)
        Task {
            let value = await body()
            result.withLock { $0 = value }
            completion.finish()
        }
        completion.wait()
        // Set before the completion finished, which the wait saw.
        return result.withLock { $0 }!
    }
}
