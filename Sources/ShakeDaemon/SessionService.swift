import Logging
import ServiceLifecycle
import SystemdSupport

/// Capture that follows the session (`sensor.follow_session`): logind's sessions, watched on a thread of the
/// ``SessionWatcher``'s own, reported to the capture gate; stopped with the group.
struct SessionService: Service {
    let watcher: SessionWatcher

    /// Follows logind's sessions when `sensor.follow_session` is on and capture depends on listeners at all; a
    /// system bus that cannot be had is a log line, and every listener then counts.
    static func watcher(capture: CaptureSwitch, logger: Logger) -> SessionWatcher? {
        let gate = capture.gate
        guard gate.followSession, gate.hasSocket && !gate.printEvents else { return nil }
        do {
            return try SessionWatcher(logger: logger) { present in
                logger.info(
                    "sessions changed",
                    metadata: [
                        "present_users":
                            "\(present.map { $0.sorted().map(String.init).joined(separator: ",") } ?? "unknown")"
                    ])
                capture.update { $0.sessionsChanged(presentUsers: present) }
            }
        } catch {
            logger.notice(
                "capture does not follow sessions: the system bus cannot be had", metadata: ["error": "\(error)"])
            return nil
        }
    }

    func run() async {
        try? await gracefulShutdown()
        watcher.close()
    }
}
