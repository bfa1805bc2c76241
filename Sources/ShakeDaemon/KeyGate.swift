// SPDX-License-Identifier: Apache-2.0
public import ShakeDetection
public import UInput

/// Which key chords the daemon presses for an event, and for whom: the subscribers that asked for a chord
/// (`{"request":"key"}`), the user logind says is in front of seat0 (the virtual keyboard's seat), the event, and a rate limit. No I/O and
/// no clock of its own: the key service asks it at the moment it would press, with the time, and types what it
/// returns.
///
/// The rules, each of which keeps a subscriber from typing anywhere but into its own user's session:
/// - a chord is pressed only for an event of a phase its subscriber named, and only while that subscriber's
///   user has the active, unlocked session of seat0 (``presentUsers``); while logind cannot be asked (no system bus,
///   logind gone) nobody's but root's is pressed. Root's are pressed without a session: root may open
///   /dev/uinput itself.
/// - a simulated shake presses only the chords of the user who asked for the simulation;
/// - presses are rate-limited per user (``perUser``) and for everyone together (``overall``): past the limit
///   a press is dropped and counted, not delayed.
public struct KeyGate: Sendable, Equatable {
    /// A connection, as the server numbers it.
    public typealias Connection = UInt64

    /// What a connection asked for: its user (from the kernel, at connect), its chord and the phases that press it.
    public struct Subscription: Sendable, Hashable {
        public var user: UInt32
        public var chord: KeyChord
        public var phases: Set<ShakeEvent.Phase>

        public init(user: UInt32, chord: KeyChord, phases: Set<ShakeEvent.Phase>) {
            self.user = user
            self.chord = chord
            self.phases = phases
        }
    }

    /// Where an event comes from.
    public enum Origin: Sendable, Hashable {
        /// The sensor or a replayed trace.
        case live
        /// A simulated shake, asked for by this user (nil: the kernel did not say who).
        case simulated(by: UInt32?)
    }

    /// What became of one subscriber's chord for an event.
    public enum Outcome: String, Sendable, Hashable {
        /// Typed.
        case pressed
        /// Not typed: the subscriber's user does not have the active, unlocked session of seat0 (or logind cannot
        /// say).
        case away
        /// Not typed: past the rate limit.
        case rateLimited = "rate_limited"
    }

    /// One subscriber's chord for one event.
    public struct Decision: Sendable, Hashable {
        public var connection: Connection
        public var user: UInt32
        public var chord: KeyChord
        public var outcome: Outcome

        public init(connection: Connection, user: UInt32, chord: KeyChord, outcome: Outcome) {
            self.connection = connection
            self.user = user
            self.chord = chord
            self.outcome = outcome
        }
    }

    /// A token bucket's size: `burst` presses at once, then `perSecond` a second.
    public struct Limit: Sendable, Hashable {
        public var burst: Int
        public var perSecond: Double

        public init(burst: Int, perSecond: Double) {
            self.burst = burst
            self.perSecond = perSecond
        }
    }

    /// Each user's presses: a shake (a `began` and an `ended`) twice over, then two a second. A person shakes a
    /// device a few times a minute at most.
    public static let perUser = Limit(burst: 4, perSecond: 2)
    /// Everybody's presses together.
    public static let overall = Limit(burst: 8, perSecond: 4)

    /// The connections that asked for a chord.
    public private(set) var subscriptions: [Connection: Subscription] = [:]
    /// The users with the active, unlocked session of seat0, as logind says; nil while that is not known.
    public private(set) var presentUsers: Set<UInt32>?
    /// Presses decided since the gate was made.
    public private(set) var pressed = 0
    /// Presses dropped by the rate limit since the gate was made.
    public private(set) var dropped = 0
    /// Dropped presses not yet reported by ``dropsToLog(now:)``.
    private var droppedUnlogged = 0
    private var lastDropLog: ContinuousClock.Instant?
    /// How often dropped presses are logged at most (the others counted into the next line).
    public static let logInterval = Duration.seconds(10)

    private var userBuckets: [UInt32: Bucket] = [:]
    private var everyone = Bucket(limit: KeyGate.overall)

    public init() {}

    /// Whether a chord of `user` may be typed now: root always, others only with seat0's active, unlocked session.
    public func isPresent(_ user: UInt32) -> Bool {
        user == 0 || presentUsers?.contains(user) == true
    }

    /// A connection asked for a chord; a second request replaces the first. Its user's rate limit goes on from
    /// where it was.
    public mutating func subscribe(_ connection: Connection, _ subscription: Subscription) {
        subscriptions[connection] = subscription
        if userBuckets[subscription.user] == nil {
            userBuckets[subscription.user] = Bucket(limit: Self.perUser)
        }
    }

    /// A connection closed, or may no longer ask. - Returns: whether it had asked for a chord.
    @discardableResult
    public mutating func unsubscribe(_ connection: Connection) -> Bool {
        guard let gone = subscriptions.removeValue(forKey: connection) else { return false }
        if !subscriptions.values.contains(where: { $0.user == gone.user }) {
            userBuckets[gone.user] = nil
        }
        return true
    }

    /// logind's sessions changed: the users with seat0's active, unlocked session, or nil when logind cannot say.
    public mutating func sessionsChanged(presentUsers: Set<UInt32>?) {
        self.presentUsers = presentUsers
    }

    /// The chords an event of `phase` concerns and what becomes of each, at `now`: the presses the caller must
    /// make right away (``Outcome/pressed``), and the others with why. Subscribers the event does not concern (a
    /// phase they did not name, another user's simulation) are left out. In the order of their connections.
    public mutating func decide(
        _ phase: ShakeEvent.Phase, origin: Origin, now: ContinuousClock.Instant
    ) -> [Decision] {
        var decisions: [Decision] = []
        for (connection, subscription) in subscriptions.sorted(by: { $0.key < $1.key }) {
            guard subscription.phases.contains(phase) else { continue }
            if case .simulated(let requester) = origin, requester != subscription.user { continue }
            var decision = Decision(
                connection: connection, user: subscription.user, chord: subscription.chord, outcome: .pressed)
            if !isPresent(subscription.user) {
                decision.outcome = .away
            } else if everyone.take(now: now, peek: true), userBuckets[subscription.user]?.take(now: now) == true {
                _ = everyone.take(now: now)
                pressed += 1
            } else {
                decision.outcome = .rateLimited
                dropped += 1
                droppedUnlogged += 1
            }
            decisions.append(decision)
        }
        return decisions
    }

    /// Dropped presses to log now: the first after a quiet interval at once, then at most one line per
    /// ``logInterval`` with the count since the last line; nil when there is nothing to log yet.
    public mutating func dropsToLog(now: ContinuousClock.Instant) -> Int? {
        guard droppedUnlogged > 0 else { return nil }
        if let last = lastDropLog, now - last < Self.logInterval { return nil }
        defer {
            droppedUnlogged = 0
            lastDropLog = now
        }
        return droppedUnlogged
    }

    /// A token bucket: full at first, refilled with time, never above its burst.
    private struct Bucket: Sendable, Equatable {
        let limit: Limit
        var tokens: Double
        var updated: ContinuousClock.Instant?

        init(limit: Limit) {
            self.limit = limit
            tokens = Double(limit.burst)
        }

        /// Takes a token if there is one (with `peek`, only says whether there is).
        mutating func take(now: ContinuousClock.Instant, peek: Bool = false) -> Bool {
            if let updated, now > updated {
                let elapsed = now - updated
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
                tokens = min(Double(limit.burst), tokens + seconds * limit.perSecond)
            }
            if updated.map({ now > $0 }) ?? true { updated = now }
            guard tokens >= 1 else { return false }
            if !peek { tokens -= 1 }
            return true
        }
    }
}
