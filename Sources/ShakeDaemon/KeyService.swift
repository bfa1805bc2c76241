// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import Logging
import ServiceLifecycle
import ShakeDetection
import ShakeProtocol
import ShakeServer
import UInput

/// The key chords subscribers asked the daemon to press (`{"request":"key"}`): the ``KeyGate`` that decides, fed
/// by the server's loop (requests, connections closing), the session follower (who is in front of seat0) and the
/// event path; and the work it hands to the ``KeyService``, which owns the virtual keyboard.
final class KeyPresser: Sendable {
    /// What the key service does next.
    enum Work: Sendable {
        /// A chord was asked for while there is no keyboard: make one.
        case makeKeyboard
        /// An event was published: press what the gate decides at that moment.
        case event(ShakeEvent.Phase, seq: Int, origin: KeyGate.Origin)
    }

    /// Where the keyboard is.
    private enum Keyboard: Sendable {
        case none
        /// The key service was asked to make it.
        case asked
        case made
        /// It could not be made, for this reason, at this time: requests are refused with that until
        /// ``retryAfter`` has passed, so that a client asking again and again costs one try (and one log line)
        /// an interval.
        case failed(String, ContinuousClock.Instant)
    }

    private struct State: Sendable {
        var gate = KeyGate()
        var keyboard = Keyboard.none
    }

    private let state = Locked(State())
    /// Events wait here for the key service; a service that falls behind by this many loses the oldest (they
    /// would be past the rate limit anyway).
    private let work = AsyncStream.makeStream(of: Work.self, bufferingPolicy: .bufferingNewest(64))
    /// How long a keyboard that could not be made is not tried again.
    static let retryAfter = Duration.seconds(10)

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
        let now = ContinuousClock.now
        let (refusal, make) = state.withLock { state -> (RequestError?, Bool) in
            if case .failed(let reason, let at) = state.keyboard, now - at < Self.retryAfter {
                return (RequestError(code: "key_unavailable", message: reason), false)
            }
            state.gate.subscribe(connection, KeyGate.Subscription(user: user, chord: chord, phases: phases))
            switch state.keyboard {
            case .none, .failed:
                state.keyboard = .asked
                return (nil, true)
            case .asked, .made:
                return (nil, false)
            }
        }
        if make { work.continuation.yield(.makeKeyboard) }
        return refusal
    }

    /// A connection closed or may no longer ask.
    func ended(connection: UInt64) {
        state.withLock { _ = $0.gate.unsubscribe(connection) }
    }

    /// logind's sessions changed (on the session follower's thread): from now on, chords are pressed for these
    /// users only (and root).
    func sessionsChanged(presentUsers: Set<UInt32>?) {
        state.withLock { $0.gate.sessionsChanged(presentUsers: presentUsers) }
    }

    /// An event was published with `seq`: the key service presses what it concerns.
    func published(_ phase: ShakeEvent.Phase, seq: Int, origin: KeyGate.Origin) {
        guard state.withLock({ !$0.gate.subscriptions.isEmpty }) else { return }
        work.continuation.yield(.event(phase, seq: seq, origin: origin))
    }

    /// The decisions for an event, made now, against the sessions as they are now; and dropped presses to log.
    func decide(_ phase: ShakeEvent.Phase, origin: KeyGate.Origin) -> (decisions: [KeyGate.Decision], dropped: Int?) {
        state.withLock { state in
            let now = ContinuousClock.now
            return (state.gate.decide(phase, origin: origin, now: now), state.gate.dropsToLog(now: now))
        }
    }

    /// Whether the key service was asked to make the keyboard and has not yet (an event may come first, should the
    /// queue have lost the request).
    var keyboardAsked: Bool {
        state.withLock {
            if case .asked = $0.keyboard { return true }
            return false
        }
    }

    /// The keyboard was made.
    func keyboardMade() {
        state.withLock { $0.keyboard = .made }
    }

    /// The keyboard cannot be made: every subscription ends, and requests are refused for a while.
    /// - Returns: the connections that had one.
    func keyboardFailed(_ reason: String) -> [UInt64] {
        state.withLock { state in
            state.keyboard = .failed(reason, ContinuousClock.now)
            let connections = state.gate.subscriptions.keys.sorted()
            for connection in connections { state.gate.unsubscribe(connection) }
            return connections
        }
    }

    /// For `status`: chords pressed, and presses dropped by the rate limit.
    var counters: [String: Int] {
        state.withLock { ["keys_pressed": $0.gate.pressed, "keys_dropped": $0.gate.dropped] }
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
            if keyboard == nil, presser.keyboardAsked { keyboard = make() }
            guard case .event(let phase, let seq, let origin) = work, let keyboard else { continue }
            press(phase, seq: seq, origin: origin, on: keyboard)
        }
        keyboard?.close()
    }

    /// Presses what the gate decides for the event now, and tells each subscriber it concerns.
    private func press(_ phase: ShakeEvent.Phase, seq: Int, origin: KeyGate.Origin, on keyboard: VirtualKeyboard) {
        let (decisions, dropped) = presser.decide(phase, origin: origin)
        for decision in decisions {
            var result = ServerMessage.KeyReport.Result(decision.outcome)
            if decision.outcome == .pressed {
                do {
                    try keyboard.send(decision.chord)
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

    /// Makes the keyboard. One that cannot be made ends every subscription, each told why; requests are refused
    /// with the same reason for ``KeyPresser/retryAfter``, then it is tried again.
    private func make() -> VirtualKeyboard? {
        do {
            let made = try VirtualKeyboard(name: "shaked keyboard", chords: [], keys: Self.keys, path: uinputPath)
            presser.keyboardMade()
            logger.info(
                "made the virtual keyboard for key chords", metadata: ["input": "\(made.systemName ?? "unknown")"])
            return made
        } catch {
            logger.error(
                "cannot make the virtual keyboard; no key chord is pressed",
                metadata: ["error": "\(error)", "path": "\(uinputPath)"])
            let reason = "the daemon cannot make its virtual keyboard: \(error)"
            for connection in presser.keyboardFailed(reason) {
                server?.send(.error(code: "key_unavailable", message: reason), toConnection: connection)
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

/// Every event is offered to the key chords: a live one to everyone's, a simulated one to the asker's alone.
extension KeyPresser: EventConsumer {
    func consume(_ event: PublishedEvent) {
        let origin: KeyGate.Origin =
            switch event.origin {
            case .live: .live
            case .simulated(let requester): .simulated(by: requester)
            }
        published(event.event.phase, seq: event.seq, origin: origin)
    }
}
