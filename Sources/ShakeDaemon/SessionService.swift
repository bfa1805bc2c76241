// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import Logging
import ServiceLifecycle
import SystemdSupport

/// logind's sessions, watched by a ``SessionWatcher`` on a thread of its own and reported to the capture gate
/// (capture that follows the session, `sensor.follow_session`) and to the key presser (a user's key chords are
/// pressed only while the user is in front of seat0). When the system bus is lost, every listener counts for
/// capture, and only root's chords are pressed, until it is back and the watcher is made again.
final class SessionFollower: Sendable {
    private let watcher = Locked<SessionWatcher?>(nil)
    private let capture: CaptureSwitch
    private let keys: KeyPresser?
    private let logger: Logger
    /// Word from the watcher's thread that the connection was lost.
    private let losses = AsyncStream.makeStream(of: BusError.self, bufferingPolicy: .bufferingNewest(1))

    private init(capture: CaptureSwitch, keys: KeyPresser?, logger: Logger) {
        self.capture = capture
        self.keys = keys
        self.logger = logger
    }

    /// Follows logind's sessions whenever there is a socket: key chords need it whether capture follows
    /// sessions or not. A system bus that cannot be had is a log line; every listener then counts for capture,
    /// and only root's key chords are pressed.
    static func start(capture: CaptureSwitch, keys: KeyPresser?, logger: Logger) -> SessionFollower? {
        guard capture.gate.hasSocket else { return nil }
        let follower = SessionFollower(capture: capture, keys: keys, logger: logger)
        do {
            try follower.connect()
            return follower
        } catch {
            logger.notice(
                "no system bus: capture does not follow sessions, and only root's key chords are pressed",
                metadata: ["error": "\(error)"])
            return nil
        }
    }

    private func connect() throws(BusError) {
        let (capture, keys, logger) = (self.capture, self.keys, self.logger)
        @Sendable func list(_ users: Set<UInt32>?) -> String {
            users.map { $0.sorted().map(String.init).joined(separator: ",") } ?? "unknown"
        }
        let made = try SessionWatcher(
            logger: logger,
            presence: { present in
                logger.info(
                    "sessions changed",
                    metadata: ["present_users": "\(list(present?.users))", "seat0_user": "\(list(present?.atSeat0))"])
                // A key chord goes to the virtual keyboard, which is seat0's: only its user's are typed (a user
                // logged in over ssh has an active session too, but is not in front of it).
                keys?.sessionsChanged(presentUsers: present?.atSeat0)
                capture.update { $0.sessionsChanged(presentUsers: present?.users) }
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
