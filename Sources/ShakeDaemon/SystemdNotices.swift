// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import Logging
import ServiceLifecycle
import ShakeServer
import SystemdSupport

/// What the daemon tells systemd: READY the first time it says what it does and STATUS lines after, STOPPING
/// once (by whichever comes first of a signal, the group's shutdown and the end of `run`), and the watchdog's
/// keep-alive (``WatchdogService``).
final class SystemdNotices: Sendable {
    let notifier = ServiceNotifier()
    private let told = Locked((ready: false, stopping: false))
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// Tells systemd the daemon is up (the first time) and what it is doing (every time).
    func ready(status: String) {
        let first = told.withLock { told in
            defer { told.ready = true }
            return !told.ready
        }
        if first { notifier.ready(status: status) } else { notifier.status(status) }
    }

    /// Tells systemd STOPPING, the first time only.
    func stopping() {
        let first = told.withLock { told in
            defer { told.stopping = true }
            return !told.stopping
        }
        guard first else { return }
        logger.info("stopping")
        notifier.stopping(status: "stopping")
    }
}

/// Tells systemd STOPPING as soon as the group's shutdown begins (a replay that ended, or a signal).
struct StoppingNoticeService: Service {
    let notices: SystemdNotices

    func run() async {
        guard (try? await gracefulShutdown()) != nil else { return }
        notices.stopping()
    }
}

/// The systemd watchdog's keep-alive: from the server's event loop when there is a server, so that a hung loop
/// is restarted; else from this task. It pings every half of `WATCHDOG_USEC`, as sd_watchdog_enabled(3) asks:
/// a loop held up by a burst of work still has the other half before systemd acts. Each ping is a wake-up of an
/// otherwise idle daemon (every 10 s with the unit's `WatchdogSec=20s`).
struct WatchdogService: Service {
    let notifier: ServiceNotifier
    let server: ShakeServer?
    let logger: Logger

    /// The time between two pings for systemd's `WATCHDOG_USEC`.
    static func interval(timeout: Duration) -> Duration { timeout / 2 }

    func run() async {
        guard let timeout = notifier.watchdogTimeout else { return }
        let interval = Self.interval(timeout: timeout)
        logger.debug("watchdog keep-alive", metadata: ["interval": "\(interval)"])
        let notifier = self.notifier
        if let server {
            let pings = server.repeatOnEventLoop(every: interval) { notifier.watchdog() }
            try? await gracefulShutdown()
            pings.cancel()
        } else {
            while !Task.isShuttingDownGracefully {
                notifier.watchdog()
                guard (try? await cancelWhenGracefulShutdown({ try await LoopExecutor.sleep(for: interval) })) != nil
                else {
                    return
                }
            }
        }
    }
}
