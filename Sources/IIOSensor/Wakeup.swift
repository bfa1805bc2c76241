// SPDX-License-Identifier: Apache-2.0
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A stop signal that blocking waits can watch: a pipe that becomes readable once ``signal()`` is called.
///
/// Signal handlers and other threads call ``signal()``; the capture loop's waits (a buffer's poll, the polled
/// driver's sleep, the rescan interval) return at once when it has been.
public final class Wakeup: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32
    private let signalled = Atomic<Bool>(false)

    public init() {
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            }
        } else {
            fds = [-1, -1]
        }
        readEnd = fds[0]
        writeEnd = fds[1]
    }

    deinit {
        if readEnd >= 0 { close(readEnd) }
        if writeEnd >= 0 { close(writeEnd) }
    }

    /// The descriptor to poll for readability alongside others.
    public var fileDescriptor: Int32 { readEnd }

    /// Whether ``signal()`` has been called.
    public var isSignalled: Bool { signalled.load(ordering: .acquiring) }

    /// Wakes every wait, now and later. Safe to call from any thread, more than once.
    public func signal() {
        guard !signalled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Sleeps for `duration` unless signalled first.
    /// - Returns: true when signalled (stop), false when the time passed.
    @discardableResult
    public func sleep(for duration: Duration) -> Bool {
        if isSignalled { return true }
        var descriptor = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
        let deadline = ContinuousClock.now + duration
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            if remaining <= .zero { return isSignalled }
            let result = poll(&descriptor, 1, Wakeup.milliseconds(remaining))
            if result > 0 || isSignalled { return true }
            if result == 0 { return false }
            if errno != EINTR { return isSignalled }
        }
    }

    /// A duration in whole milliseconds for poll(2), rounded up so that short waits still wait.
    public static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        let ms = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: max(0, ms))
    }
}
