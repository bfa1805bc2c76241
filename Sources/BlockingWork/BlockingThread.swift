// SPDX-License-Identifier: Apache-2.0
import CThreads

#if canImport(Glibc)
    import Glibc
#endif

/// A thread of its own for work that blocks in a C library (libiio's reads, sd-bus's and libmosquitto's waits),
/// which must not hold a thread of Swift's cooperative pool: started and named here, and joined by its completion
/// (its end signals the joiners; nothing polls).
///
/// A POSIX thread, not Foundation's `Thread`, so that no classic Foundation is linked. Its owner stops the work by
/// its own means (a ``Wakeup``, a flag) and then joins: ``join()`` from a thread, `await` ``join()`` from a task,
/// ``join(timeout:)`` where an end is not certain.
public final class BlockingThread: Sendable {
    /// The name `ps -L`, `top -H` and the journal show; the kernel keeps its first 15 bytes.
    public let name: String
    private let completion = Completion()
    /// The thread's own id, recorded by the thread as it begins; nil before that.
    private let identity = Locked<pthread_t?>(nil)

    /// The part of the name the kernel keeps: its first 15 bytes, cut at a character's boundary.
    public static func kernelName(_ name: String) -> String {
        var kept = ""
        for character in name {
            guard kept.utf8.count + String(character).utf8.count <= 15 else { break }
            kept.append(character)
        }
        return kept
    }

    private init(name: String) {
        self.name = name
    }

    /// Starts a thread named `name` running `body`.
    /// - Returns: the thread, or nil when the system could not start one (out of threads or memory).
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) -> BlockingThread? {
        final class Start {
            let thread: BlockingThread
            var body: (@Sendable () -> Void)?
            init(_ thread: BlockingThread, _ body: @escaping @Sendable () -> Void) {
                self.thread = thread
                self.body = body
            }
        }
        let thread = BlockingThread(name: name)
        let start = Unmanaged.passRetained(Start(thread, body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        // Detached: its end is known through `completion`, so no pthread_join is owed.
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var id = pthread_t()
        let started = pthread_create(
            &id, &attributes,
            { raw in
                guard let raw else { return nil }
                let start = Unmanaged<Start>.fromOpaque(raw).takeRetainedValue()
                let thread = start.thread
                let me = pthread_self()
                thread.identity.withLock { $0 = me }
                _ = shaked_name_thread(BlockingThread.kernelName(thread.name))
                start.body?()
                // What the body held goes before the joiners are told, so that they may count on it being gone.
                start.body = nil
                // The id goes too: once this thread has ended the system gives it to a later thread (a detached
                // thread's stack is reused, and the id is its address), which must not pass for this one.
                thread.identity.withLock { $0 = nil }
                thread.completion.finish()
                return nil
            }, start)
        guard started == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            return nil
        }
        return thread
    }

    /// Whether the body has returned.
    public var isFinished: Bool { completion.isFinished }

    /// Whether the caller is this thread (whose join would wait for itself).
    private var isCurrent: Bool {
        guard let id = identity.withLock({ $0 }) else { return false }
        return pthread_equal(id, pthread_self()) != 0
    }

    /// Blocks until the body has returned. Called on the thread itself (a handler run by the body that closes its
    /// owner), it returns at once: the body is still on the stack below.
    public func join() {
        guard !isCurrent else { return }
        completion.wait()
    }

    /// Blocks until the body has returned or `timeout` has passed; at once on the thread itself (false).
    /// - Returns: whether the body has returned.
    @discardableResult
    public func join(timeout: Duration) -> Bool {
        guard !isCurrent else { return false }
        return completion.wait(timeout: timeout)
    }

    /// Suspends the task until the body has returned, holding no thread meanwhile.
    public func join() async {
        await completion.wait()
    }
}
