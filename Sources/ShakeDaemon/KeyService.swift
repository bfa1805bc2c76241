import Logging
import ServiceLifecycle
import ShakeDetection
import ShakeProtocol
import ShakeServer
import UInput

/// The key chords subscribers asked the daemon to press (`{"request":"key"}`): the ``KeyGate`` that decides, fed
/// by the server's loop (requests, connections closing), the session follower (who is in front of a seat) and the
/// event path; and the work it hands to the ``KeyService``, which owns the virtual keyboard.
final class KeyPresser: Sendable {
    /// What the key service does next.
    enum Work: Sendable {
        /// A subscription came: make the keyboard if there is none.
        case subscriptionsChanged
        /// An event was published: press what the gate decides at that moment.
        case event(ShakeEvent.Phase, seq: Int, origin: KeyGate.Origin)
    }

    private let gate = Locked(KeyGate())
    /// Events wait here for the key service; a service that falls behind by this many loses the oldest (they
    /// would be past the rate limit anyway).
    private let work = AsyncStream.makeStream(of: Work.self, bufferingPolicy: .bufferingNewest(64))

    var queue: AsyncStream<Work> { work.stream }

    /// A connection of `user` asks for `chord` on `phases` (on the server's loop). - Returns: nil when accepted,
    /// else the error to answer with.
    func subscribe(
        connection: UInt64, user: UInt32, chord text: String, phases: Set<ShakeEvent.Phase>
    ) -> RequestError? {
        let chord: KeyChord
        do {
            chord = try KeyChord(parsing: text)
        } catch {
            return RequestError(code: "bad_value", message: error.description)
        }
        gate.withLock { $0.subscribe(connection, KeyGate.Subscription(user: user, chord: chord, phases: phases)) }
        work.continuation.yield(.subscriptionsChanged)
        return nil
    }

    /// A connection closed or may no longer ask.
    func ended(connection: UInt64) {
        gate.withLock { _ = $0.unsubscribe(connection) }
    }

    /// logind's sessions changed (on the session follower's thread): from now on, chords are pressed for these
    /// users only (and root).
    func sessionsChanged(presentUsers: Set<UInt32>?) {
        gate.withLock { $0.sessionsChanged(presentUsers: presentUsers) }
    }

    /// An event was published with `seq`: the key service presses what it concerns.
    func published(_ phase: ShakeEvent.Phase, seq: Int, origin: KeyGate.Origin) {
        guard hasSubscriptions else { return }
        work.continuation.yield(.event(phase, seq: seq, origin: origin))
    }

    var hasSubscriptions: Bool { gate.withLock { !$0.subscriptions.isEmpty } }

    /// The decisions for an event, made now, against the sessions as they are now; and dropped presses to log.
    func decide(_ phase: ShakeEvent.Phase, origin: KeyGate.Origin) -> (decisions: [KeyGate.Decision], dropped: Int?) {
        gate.withLock { gate in
            let now = ContinuousClock.now
            return (gate.decide(phase, origin: origin, now: now), gate.dropsToLog(now: now))
        }
    }

    /// The keyboard cannot be made: every subscription ends. - Returns: the connections that had one.
    func endAll() -> [UInt64] {
        gate.withLock { gate in
            let connections = gate.subscriptions.keys.sorted()
            for connection in connections { gate.unsubscribe(connection) }
            return connections
        }
    }

    /// No more work: the service's loop ends.
    func finish() {
        work.continuation.finish()
    }
}

/// The daemon's virtual keyboard: made through /dev/uinput (which the service may write as a member of
/// shaked-uinput) when the first chord is asked for, and kept until the daemon stops (made and removed with each
/// subscriber, a client that comes and goes would have the daemon add and remove input devices as fast as it
/// likes, a udev event and a compositor's hotplug each); presses what the ``KeyGate`` decides for each event, at
/// the moment of pressing, and tells each subscriber what became of its chord. Its writes are quick and never
/// block (the device is opened non-blocking), on this task, not the server's loop.
struct KeyService: Service {
    let presser: KeyPresser
    let server: ShakeServer?
    let uinputPath: String
    let logger: Logger

    /// Every key a chord can name: the keyboard is made once with all of them, whatever chords come later.
    static let keys: [UInt16] = Array(Set(KeyChord.modifierNames.values).union(KeyChord.keyNames.values)).sorted()

    func run() async {
        var keyboard: VirtualKeyboard?
        for await work in presser.queue.cancelOnGracefulShutdown() {
            keyboard = keep(keyboard)
            guard case .event(let phase, let seq, let origin) = work, let current = keyboard else { continue }
            let (decisions, dropped) = presser.decide(phase, origin: origin)
            for decision in decisions {
                var result = ServerMessage.KeyReport.Result(decision.outcome)
                if decision.outcome == .pressed {
                    do {
                        try current.send(decision.chord)
                        logger.info(
                            "pressed a subscriber's key chord",
                            metadata: [
                                "client_uid": "\(decision.user)", "chord": "\(decision.chord)", "seq": "\(seq)",
                                "phase": "\(phase.rawValue)",
                            ])
                    } catch {
                        result = .failed
                        logger.warning(
                            "cannot press a key chord", metadata: ["chord": "\(decision.chord)", "error": "\(error)"])
                    }
                }
                server?.send(
                    .key(.init(seq: seq, chord: decision.chord.description, result: result)),
                    toConnection: decision.connection)
            }
            if let dropped {
                logger.warning(
                    "key presses dropped: past the rate limit",
                    metadata: [
                        "count": "\(dropped)", "per_user": "\(KeyGate.perUser.burst)",
                        "overall": "\(KeyGate.overall.burst)",
                    ])
            }
        }
        keyboard?.close()
    }

    /// The keyboard, once somebody has asked for a chord. One that cannot be made ends every subscription, each
    /// told why; the next request tries again.
    private func keep(_ keyboard: VirtualKeyboard?) -> VirtualKeyboard? {
        guard keyboard == nil, presser.hasSubscriptions else { return keyboard }
        do {
            let made = try VirtualKeyboard(name: "shaked keyboard", chords: [], keys: Self.keys, path: uinputPath)
            logger.info(
                "made the virtual keyboard for key chords", metadata: ["input": "\(made.systemName ?? "unknown")"])
            return made
        } catch {
            logger.error(
                "cannot make the virtual keyboard; no key chord is pressed",
                metadata: ["error": "\(error)", "path": "\(uinputPath)"])
            for connection in presser.endAll() {
                server?.send(
                    .error(code: "key_unavailable", message: "the daemon cannot make its virtual keyboard: \(error)"),
                    toConnection: connection)
            }
            return nil
        }
    }
}

extension ServerMessage.KeyReport.Result {
    init(_ outcome: KeyGate.Outcome) {
        switch outcome {
        case .pressed: self = .pressed
        case .away: self = .away
        case .rateLimited: self = .rateLimited
        }
    }
}
