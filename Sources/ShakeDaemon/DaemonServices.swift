import Logging
import ServiceLifecycle
import ShakeServer
import SystemdSupport
import UnixSignals

#if canImport(Glibc)
    import Glibc
#endif

// The daemon's long-running parts, each a `Service` under one `ServiceGroup` (see `Daemon.run`). The group starts
// them in the order listed there and shuts them down gracefully in reverse: the stopping notice, the source, the
// simulations, the reload, the watchdog, the session watcher, the D-Bus object, and the server last, so that
// whatever the source ends with still reaches the clients (as signals too).

/// Tells systemd STOPPING as soon as the group's shutdown begins (a replay that ended, or a signal).
struct StoppingNoticeService: Service {
    let announce: @Sendable () -> Void

    func run() async {
        guard (try? await gracefulShutdown()) != nil else { return }
        announce()
    }
}

/// The source of samples on its one blocking thread: capture from a sensor (libiio blocks) or a replayed trace.
/// The thread is the service's own: started by `run`, stopped on graceful shutdown (or cancellation), and
/// joined before `run` returns.
struct SourceService: Service {
    let daemon: Daemon

    func run() async {
        let daemon = self.daemon
        await withTaskCancellationOrGracefulShutdownHandler {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                let started = startThread(name: "shaked-source") {
                    daemon.runSource()
                    done.resume()
                }
                // Without a thread of its own (the system out of threads), the source runs here rather than never.
                if !started {
                    daemon.runSource()
                    done.resume()
                }
            }
        } onCancelOrGracefulShutdown: {
            daemon.stopSource()
        }
    }
}

/// Simulated shakes (`{"request":"simulate"}`), one at a time, as child work of the group: a shutdown waits
/// for the one in progress to stop, so nothing is published after the server closes.
struct SimulateService: Service {
    let requests: AsyncStream<Void>
    let simulate: @Sendable () async -> Void

    func run() async {
        for await _ in requests.cancelOnGracefulShutdown() {
            await simulate()
        }
    }
}

/// SIGHUP: reads the configuration again. The signal is trapped before the group starts (the daemon may say it is
/// ready before this service runs), so none is lost in between.
struct ReloadService: Service {
    let hangUps: UnixSignalsSequence
    let reload: @Sendable () async -> Void

    func run() async {
        for await _ in hangUps.cancelOnGracefulShutdown() {
            await reload()
        }
    }
}

/// The systemd watchdog's keep-alive: from the server's event loop when there is a server, so that a hung loop
/// is restarted; else from this task. It pings every quarter of `WATCHDOG_USEC`, twice as often as systemd asks,
/// so that a loop held up by a burst of work (up to a quarter of the timeout) still never leaves a gap past half.
struct WatchdogService: Service {
    let notifier: ServiceNotifier
    let server: ShakeServer?
    let logger: Logger

    func run() async {
        guard let timeout = notifier.watchdogTimeout else { return }
        let interval = timeout / 4
        logger.debug("watchdog keep-alive", metadata: ["interval": "\(interval)"])
        let notifier = self.notifier
        if let server {
            let pings = server.repeatOnEventLoop(every: interval) { notifier.watchdog() }
            try? await gracefulShutdown()
            pings.cancel()
        } else {
            while !Task.isShuttingDownGracefully {
                notifier.watchdog()
                guard (try? await cancelWhenGracefulShutdown({ try await Task.sleep(for: interval) })) != nil else {
                    return
                }
            }
        }
    }
}

/// The socket server: already listening when the group starts (a socket that cannot be had stops the daemon
/// before anything runs); closed last, after what the source ended with was published.
struct ServerService: Service {
    let server: ShakeServer

    func run() async {
        try? await gracefulShutdown()
        await server.shutdown()
    }
}

/// The shake object on the system bus: offered before the group starts (like the socket), closed after the source
/// ended, so that the last events still go out as signals.
struct BusService: Service {
    let bus: BusObject

    func run() async {
        try? await gracefulShutdown()
        bus.close()
    }
}

/// logind's sessions, followed for the capture gate (`sensor.follow_session`); stopped with the group.
struct SessionService: Service {
    let watcher: SessionWatcher

    func run() async {
        try? await gracefulShutdown()
        watcher.close()
    }
}
