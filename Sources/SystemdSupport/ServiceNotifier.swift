// SPDX-License-Identifier: Apache-2.0
import CSystemd

#if canImport(Glibc)
    import Glibc
#endif

/// Tells systemd how the service is doing (`sd_notify`): ready, reloading, stopping, alive (the watchdog).
///
/// Outside systemd (`NOTIFY_SOCKET` unset) every call does nothing, so the daemon calls them unconditionally.
public struct ServiceNotifier: Sendable {
    public init() {}

    /// Whether systemd listens for notifications.
    public var isActive: Bool { getenv("NOTIFY_SOCKET") != nil }

    /// The watchdog's timeout set by `WatchdogSec=` for this process, or nil when there is none.
    public var watchdogTimeout: Duration? {
        var microseconds: UInt64 = 0
        guard sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
        return .microseconds(Int64(clamping: microseconds))
    }

    /// Start-up is complete (or a reload is), with an optional status line for `systemctl status`.
    public func ready(status: String? = nil) {
        send(["READY=1"] + (status.map { ["STATUS=\($0)"] } ?? []))
    }

    /// A reload begins; ``ready(status:)`` ends it.
    public func reloading() {
        send(["RELOADING=1", "MONOTONIC_USEC=\(Self.monotonicMicroseconds())"])
    }

    /// Shutdown begins.
    public func stopping(status: String? = nil) {
        send(["STOPPING=1"] + (status.map { ["STATUS=\($0)"] } ?? []))
    }

    /// A keep-alive ping for the watchdog.
    public func watchdog() {
        send(["WATCHDOG=1"])
    }

    /// A free-form status line for `systemctl status`.
    public func status(_ text: String) {
        send(["STATUS=\(text)"])
    }

    /// Sends the assignments, one per line; newlines inside a value would split it, so they become spaces.
    public func send(_ assignments: [String]) {
        let state = assignments.map { $0.replacingNewlines() }.joined(separator: "\n")
        _ = sd_notify(0, state)
    }

    static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
    }
}

extension String {
    fileprivate func replacingNewlines() -> String {
        String(map { $0 == "\n" ? " " : $0 })
    }
}
