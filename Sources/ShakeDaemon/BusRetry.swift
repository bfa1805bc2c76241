// SPDX-License-Identifier: Apache-2.0
import Logging
import ServiceLifecycle
import SystemdSupport

/// Getting the system bus back after it was lost (dbus-daemon stopped or restarted): tries after half a second,
/// then twice as long after each failure, at most every 30 s — a bus that restarts is back within the first
/// tries, one that stays away costs a try every half-minute. Used by the bus and session services.
public enum BusRetry {
    /// The wait before the next try, after `failures` failed ones.
    public static func delay(afterFailures failures: Int) -> Duration {
        let milliseconds = 500 << min(max(failures, 0), 6)
        return .milliseconds(min(milliseconds, 30_000))
    }

    /// Tries `connect` until it succeeds or the group shuts down; the first failure is said in the log.
    /// - Returns: whether it connected (false: the group is shutting down).
    static func reconnect(
        for service: String, logger: Logger, _ connect: () throws(BusError) -> Void
    ) async -> Bool {
        var failures = 0
        while true {
            let wait = delay(afterFailures: failures)
            guard (try? await cancelWhenGracefulShutdown({ try await LoopExecutor.sleep(for: wait) })) != nil else {
                return false
            }
            do {
                try connect()
                return true
            } catch {
                if failures == 0 {
                    logger.notice(
                        "the system bus is not back yet: trying again, less and less often",
                        metadata: ["service": "\(service)", "error": "\(error)"])
                }
                failures += 1
            }
        }
    }
}
