// SPDX-License-Identifier: Apache-2.0
import Logging
import ServiceLifecycle
import UnixSignals

#if canImport(Glibc)
    import Glibc
#endif

/// The signals that stop the daemon, SIGTERM and SIGINT: trapped as `Daemon.run` begins (before the socket exists
/// and READY is sent, so that one that comes before the services run still stops the daemon gracefully), then,
/// while the group runs, each shuts it down gracefully and tells systemd STOPPING at once.
struct StopSignals {
    private let signals: UnixSignalsSequence

    /// A parent may hand down blocked signals (a socket activator that execs us does): unblock the ones the
    /// daemon must hear, or SIGTERM would never arrive. SIGHUP is ignored until the reload service traps it, so
    /// that an early one does not kill the daemon; SIGPIPE always, as sockets report a closed peer themselves.
    /// Then SIGTERM and SIGINT are trapped.
    static func trap() async -> StopSignals {
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for number in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&unblock, number) }
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        signal(SIGPIPE, SIG_IGN)
        signal(SIGHUP, SIG_IGN)
        return StopSignals(signals: await UnixSignalsSequence(trapping: .sigterm, .sigint))
    }

    /// Runs the group until it ends; a stop signal shuts it down gracefully.
    func run(_ group: ServiceGroup, notices: SystemdNotices, logger: Logger) async {
        let signals = self.signals
        await withDiscardingTaskGroup { tasks in
            tasks.addTask {
                for await signal in signals {
                    logger.info("stopping on a signal", metadata: ["signal": "\(signal)"])
                    // Now: a signal before the group runs shuts it down before any service starts.
                    notices.stopping()
                    await group.triggerGracefulShutdown()
                }
            }
            do {
                try await group.run()
            } catch {
                logger.error("stopped on an error", metadata: ["error": "\(error)"])
            }
            tasks.cancelAll()
        }
    }
}
