// SPDX-License-Identifier: Apache-2.0
public import SystemPackage

#if canImport(Glibc)
    public import Glibc
#endif

/// poll(2), the one wait of the blocking threads on several descriptors (a library's and a ``Wakeup``'s), in one
/// place: an interrupted wait (EINTR) waits again for the time left, as swift-system's calls retry theirs.
public enum Readiness {
    /// Waits until one of `descriptors` is ready or `timeout` (nil: no limit) has passed; their `revents` say which.
    /// - Returns: how many are ready (0: the time passed), or the error poll(2) gave.
    public static func wait(_ descriptors: inout [pollfd], timeout: Duration?) -> Result<Int32, Errno> {
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now + max($0, .zero) }
        while true {
            let milliseconds = deadline.map { Wakeup.milliseconds(clock.now.duration(to: $0)) } ?? -1
            let ready = descriptors.withUnsafeMutableBufferPointer {
                poll($0.baseAddress, nfds_t($0.count), milliseconds)
            }
            if ready >= 0 { return .success(ready) }
            let error = Errno(rawValue: errno)
            guard error == .interrupted else { return .failure(error) }
            if let deadline, clock.now >= deadline { return .success(0) }
        }
    }
}
