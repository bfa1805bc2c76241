// SPDX-License-Identifier: Apache-2.0
import CThreads
import Synchronization
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// The one wake-up primitive of the blocking threads: an eventfd that becomes readable when ``signal()`` is called,
/// for a thread that waits in poll(2) on it beside a library's own descriptors (sd-bus's, a sensor buffer's).
///
/// Used two ways:
/// - as a **stop signal**: signalled once and left so; ``isSignalled`` stays true and every wait, now and later,
///   returns at once (capture's stop, the idle wait's end, a back-off cut short);
/// - as a **doorbell**: the waiter, woken, calls ``consume()`` and then looks at what it was woken for (the work
///   handed to a bus thread): a signal given after that look wakes the next wait.
public final class Wakeup: Sendable {
    /// The eventfd; -1 when the system gave none (out of descriptors), and then waits only time out.
    private let descriptor: Int32
    private let signalled = Atomic<Bool>(false)

    public init() {
        descriptor = shaked_eventfd()
    }

    deinit {
        if descriptor >= 0 { try? FileDescriptor(rawValue: descriptor).close() }
    }

    /// The descriptor to poll for readability alongside others (-1 when there is none, which poll(2) ignores).
    public var fileDescriptor: Int32 { descriptor }

    /// Whether ``signal()`` has been called (since the last ``consume()``).
    public var isSignalled: Bool { signalled.load(ordering: .acquiring) }

    /// Wakes the waits. Safe to call from any thread, any number of times: the eventfd's counter adds up the
    /// signals and one read takes them all. Not from a signal handler: a failed write is a thrown error, which
    /// allocates.
    public func signal() {
        signalled.store(true, ordering: .releasing)
        guard descriptor >= 0 else { return }
        var one: UInt64 = 1
        _ = try? withUnsafeBytes(of: &one) { try FileDescriptor(rawValue: descriptor).write($0) }
    }

    /// Takes the signals given so far back: the descriptor is no longer readable until the next ``signal()``.
    public func consume() {
        signalled.store(false, ordering: .releasing)
        guard descriptor >= 0 else { return }
        var count: UInt64 = 0
        _ = try? withUnsafeMutableBytes(of: &count) { try FileDescriptor(rawValue: descriptor).read(into: $0) }
    }

    /// Sleeps for `duration` unless signalled first.
    /// - Returns: true when signalled (stop), false when the time passed.
    @discardableResult
    public func sleep(for duration: Duration) -> Bool {
        if isSignalled { return true }
        var descriptors = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        let ready = Readiness.wait(&descriptors, timeout: duration)
        return isSignalled || (try? ready.get()).map { $0 > 0 } ?? false
    }

    /// A duration in whole milliseconds for poll(2), rounded up so that short waits still wait; at most
    /// `Int32.max` (24 days: the caller waits again), never negative.
    public static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        guard seconds < Int64(Int32.max) / 1000 else { return Int32.max }
        let ms = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: max(0, ms))
    }
}
