// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
    import Glibc
#endif

/// A one-shot latch: ``finish()`` once, and every wait, before or after it, returns. Synchronous waits block on a
/// condition variable (timed ones against the monotonic clock); asynchronous ones are continuations resumed by
/// ``finish()``, so no thread of the cooperative pool is held while they wait.
final class Completion: @unchecked Sendable {
    // `@unchecked`: `finished` and `waiters` are read and written only with `mutex` held; the mutex and the
    // condition live at fixed addresses (allocated here) for their whole life, as pthreads requires.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var finished = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    var isFinished: Bool { locked { finished } }

    /// Releases every wait, present and future. A second call does nothing.
    func finish() {
        let resumed: [CheckedContinuation<Void, Never>] = locked {
            guard !finished else { return [] }
            finished = true
            pthread_cond_broadcast(condition)
            defer { waiters.removeAll() }
            return waiters
        }
        for waiter in resumed { waiter.resume() }
    }

    /// Blocks until ``finish()`` has been called.
    func wait() {
        locked {
            while !finished { pthread_cond_wait(condition, mutex) }
        }
    }

    /// Blocks until ``finish()`` has been called or `timeout` has passed. - Returns: whether it was.
    func wait(timeout: Duration) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        // At most a year ahead: further is "no limit" in effect, and cannot overflow the clock's seconds.
        let (seconds, attoseconds) = min(max(timeout, .zero), .seconds(365 * 86400)).components
        let nanoseconds = Int(deadline.tv_nsec) + Int(attoseconds / 1_000_000_000)
        deadline.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
        deadline.tv_nsec = nanoseconds % 1_000_000_000
        return locked {
            while !finished {
                if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { return finished }
            }
            return true
        }
    }

    /// Suspends until ``finish()`` has been called.
    func wait() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let now = locked {
                if finished { return true }
                waiters.append(waiter)
                return false
            }
            if now { waiter.resume() }
        }
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }
}
