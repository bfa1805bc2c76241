// SPDX-License-Identifier: Apache-2.0
import BlockingWork
public import NIOCore
import NIOPosix

/// Where the daemon's tasks and timers run: on NIO's event loops, never on Swift's default global executor.
///
/// On Linux that executor is libdispatch's worker pool, which, once it has started a worker, keeps a timer of
/// its own on its manager thread for the rest of the process's life: a look at its workers every second (its
/// monitor of stalled pools), one wake-up a second whatever the daemon does — five times the budget of a daemon
/// that relays an unclaimed sensor. `Task.sleep` is served by that pool too, and the async `main` of a command
/// runs on libdispatch's main queue, which its workers drain. So the daemon starts from a synchronous `main`
/// (``run(_:)``), installs NIO's singleton event loop group as the global executor before any task exists, and
/// sleeps on event loops' timers (``sleep(for:on:)``): an idle loop sleeps in `epoll_wait` without a timeout.
public enum LoopExecutor {
    /// Installs NIO's singleton event loops as Swift concurrency's global executor, runs `body` as a task there
    /// and blocks the calling thread (the main thread, before any task was created) until it returns. Should the
    /// installation fail (another executor installed first), the tasks run on the default executor: the same
    /// work, with libdispatch's wake-ups.
    public static func run(_ body: @escaping @Sendable () async -> Int32) -> Int32 {
        _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        return TaskWait.result(of: body)
    }

    /// Suspends for `duration` on a timer of `loop` (by default one of NIO's singleton loops): the daemon's
    /// `Task.sleep`, which would start libdispatch's workers.
    /// - Throws: `CancellationError` when the task is cancelled first (the timer is cancelled with it).
    public static func sleep(for duration: Duration, on loop: (any EventLoop)? = nil) async throws {
        let loop = loop ?? MultiThreadedEventLoopGroup.singleton.any()
        let scheduled = loop.scheduleTask(in: TimeAmount(duration)) {}
        do {
            try await withTaskCancellationHandler {
                try await scheduled.futureResult.get()
            } onCancel: {
                scheduled.cancel()
            }
        } catch {
            throw CancellationError()
        }
    }
}
