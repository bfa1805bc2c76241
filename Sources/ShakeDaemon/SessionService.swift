import Logging
import ServiceLifecycle
import SystemdSupport

/// Capture that follows the session (`sensor.follow_session`): logind's sessions, watched by a
/// ``SessionWatcher`` on a thread of its own and reported to the capture gate. When the system bus is lost,
/// every listener counts until it is back and the watcher is made again.
final class SessionFollower: Sendable {
    private let watcher = Locked<SessionWatcher?>(nil)
    private let capture: CaptureSwitch
    private let logger: Logger
    /// Word from the watcher's thread that the connection was lost.
    private let losses = AsyncStream.makeStream(of: BusError.self, bufferingPolicy: .bufferingNewest(1))

    private init(capture: CaptureSwitch, logger: Logger) {
        self.capture = capture
        self.logger = logger
    }

    /// Follows logind's sessions when `sensor.follow_session` is on and capture depends on listeners at all; a
    /// system bus that cannot be had is a log line, and every listener then counts.
    static func start(capture: CaptureSwitch, logger: Logger) -> SessionFollower? {
        let gate = capture.gate
        guard gate.followSession, gate.hasSocket && !gate.printEvents else { return nil }
        let follower = SessionFollower(capture: capture, logger: logger)
        do {
            try follower.connect()
            return follower
        } catch {
            logger.notice(
                "capture does not follow sessions: the system bus cannot be had", metadata: ["error": "\(error)"])
            return nil
        }
    }

    private func connect() throws(BusError) {
        let (capture, logger) = (self.capture, self.logger)
        let made = try SessionWatcher(
            logger: logger,
            report: { present in
                logger.info(
                    "sessions changed",
                    metadata: [
                        "present_users":
                            "\(present.map { $0.sorted().map(String.init).joined(separator: ",") } ?? "unknown")"
                    ])
                capture.update { $0.sessionsChanged(presentUsers: present) }
            },
            lost: { [weak self] error in self?.losses.continuation.yield(error) })
        watcher.withLock { $0 = made }
    }

    /// Until the group shuts down: when the bus is lost (the watcher has said so and reported that it cannot
    /// tell), a new watcher as soon as the bus is back.
    func keepFollowing() async {
        for await _ in losses.stream.cancelOnGracefulShutdown() {
            watcher.withLock { $0 = nil }
            guard
                await BusRetry.reconnect(for: "sessions", logger: logger, { () throws(BusError) in try connect() })
            else { return }
            logger.notice("the system bus is back: capture follows sessions again")
        }
    }

    func close() {
        watcher.withLock { $0 }?.close()
    }
}

/// The session follower's service: stopped with the group.
struct SessionService: Service {
    let sessions: SessionFollower

    func run() async {
        await sessions.keepFollowing()
        sessions.close()
    }
}
