// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
    import Glibc
#endif

/// A value that threads share, behind a lock: the one lock of the project's modules wherever threads meet. A
/// reference, so closures can hold it.
///
/// A POSIX mutex rather than Synchronization's `Mutex`: on Linux that one is a priority-inheriting futex, and when
/// a thread waits for it the kernel hands the lock straight to the waiter, with no atomic operation in user space
/// (swiftlang/swift#88440). ThreadSanitizer cannot see that hand-over, so two accesses made under such a lock from
/// two threads are reported as a race, and a suppression wide enough to hide those would hide real races too.
/// `pthread_mutex_lock` and `pthread_mutex_unlock` are what ThreadSanitizer follows. Uncontended, either costs an
/// atomic operation; contended, this one does not pass priority on, which nothing of the project relies on.
public final class Locked<Value: ~Copyable> {
    // The mutex lives at a fixed address (allocated here) for its whole life, as pthreads requires; `value` is
    // read and written only with it held.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline var value: Value

    public init(_ value: consuming Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        // A default mutex: initialising one cannot fail on Linux (no resources are taken).
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the value, the lock held; what `body` returns or throws is passed on.
    @inlinable
    public func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        lock()
        defer { unlock() }
        return try body(&value)
    }

    // Not inlined, so that the C library stays out of the module's interface; `withLock` is, so that the
    // closure and the value's type are specialised where it is called.
    @usableFromInline func lock() { pthread_mutex_lock(mutex) }
    @usableFromInline func unlock() { pthread_mutex_unlock(mutex) }
}

// The value is reached only through `withLock`, with the mutex held.
extension Locked: @unchecked Sendable where Value: Sendable & ~Copyable {}
