// SPDX-License-Identifier: Apache-2.0
/// Whether the sensor should capture, and why: capture runs only while somebody listens, and, with
/// `sensor.follow_session`, only for listeners whose user has an active, unlocked session (root's listeners
/// always count). No I/O: the daemon starts or stops capture as the returned actions say.
public struct CaptureGate: Sendable, Equatable {
    /// Why capture is on (or, with ``nobody`` and ``sessionsAway``, off).
    public enum Reason: String, Sendable, Equatable {
        /// Events go to standard output (`--print-events`).
        case printEvents = "events are printed"
        /// Without a socket, the daemon exists to capture.
        case noSocket = "there is no socket"
        /// `sensor.always_on`.
        case alwaysOn = "capture is always on"
        case subscribers = "a client is subscribed"
        /// A D-Bus client called `Claim` and has neither released nor left the bus.
        case busClaims = "a D-Bus client claims the sensor"
        case sampleStreams = "a client streams samples"
        /// Only the relay to iio-sensor-proxy reads the sensor: capture at the low rate that serves it.
        case relay = "the orientation relay reads the sensor"
        /// Clients listen, but every one of their users' sessions is locked or in the background.
        case sessionsAway = "the listeners' sessions are locked or inactive"
        /// The relay is on, but nothing reads its input device: no client claims the accelerometer from
        /// iio-sensor-proxy (``RelayDemand``).
        case relayUnread = "nobody reads the orientation relay"
        case nobody = "nobody is listening"

        /// Whether capture runs for this reason.
        public var captures: Bool { self != .nobody && self != .sessionsAway && self != .relayUnread }
    }

    public enum Action: Sendable, Equatable {
        case startCapture(Reason)
        case stopCapture
        /// Capture goes on at the other rate (low for the relay alone, the configured one for clients).
        case changeRate(Reason)
    }

    public let printEvents: Bool
    public let hasSocket: Bool
    /// `sensor.follow_session`.
    public let followSession: Bool
    public private(set) var alwaysOn: Bool
    /// The user of each socket subscriber; nil when the kernel did not say.
    public private(set) var subscriberUsers: [UInt32?] = []
    public var subscribers: Int { subscriberUsers.count }
    public private(set) var sampleStreams = 0
    /// The D-Bus clients that claim the sensor: unique bus name → user.
    public private(set) var busClaims: [String: UInt32] = [:]
    /// The users with an active, unlocked session, as logind says; nil while that is not known (no logind), when
    /// every listener counts.
    public private(set) var presentUsers: Set<UInt32>?
    /// Whether the relay to iio-sensor-proxy is on (it needs a few readings a second).
    public private(set) var relay: Bool
    /// Whether something reads the relay's input device (iio-sensor-proxy does while a client claims the
    /// accelerometer); true until the relay can tell.
    public private(set) var relayRead = true
    /// Whether capture was last told to run.
    public private(set) var isCapturing: Bool
    /// Whether capture was last told to run at the relay's low rate.
    public private(set) var isLowRate: Bool

    public init(
        printEvents: Bool, hasSocket: Bool, alwaysOn: Bool, relay: Bool = false, followSession: Bool = false
    ) {
        self.printEvents = printEvents
        self.hasSocket = hasSocket
        self.alwaysOn = alwaysOn
        self.relay = relay
        self.followSession = followSession
        isCapturing = false
        isLowRate = false
        isCapturing = reason.captures
        isLowRate = reason == .relay
    }

    /// Whether a listener of `user` keeps capture on: always, unless sessions are followed and known, the user is
    /// not root, and has no active, unlocked session. A listener whose user is unknown counts.
    public func counts(_ user: UInt32?) -> Bool {
        guard followSession, let presentUsers, let user, user != 0 else { return true }
        return presentUsers.contains(user)
    }

    /// The first reason that holds, in the order above.
    public var reason: Reason {
        if printEvents { return .printEvents }
        if !hasSocket { return .noSocket }
        if alwaysOn { return .alwaysOn }
        if subscriberUsers.contains(where: counts) { return .subscribers }
        if busClaims.values.contains(where: counts) { return .busClaims }
        // A sample stream is a deliberate recording (admin-only): it does not follow sessions.
        if sampleStreams > 0 { return .sampleStreams }
        if relay && relayRead { return .relay }
        if !subscriberUsers.isEmpty || !busClaims.isEmpty { return .sessionsAway }
        return relay ? .relayUnread : .nobody
    }

    /// Whether capture should run now.
    public var wantsCapture: Bool { reason.captures }

    /// Whether capture should run at the relay's low rate rather than the configured one: only the relay reads.
    public var wantsLowRate: Bool { reason == .relay }

    /// The server's clients that want events (by user) or samples changed.
    public mutating func listenersChanged(subscribers: [UInt32?], sampleStreams: Int) -> Action? {
        subscriberUsers = subscribers
        self.sampleStreams = max(0, sampleStreams)
        return settle()
    }

    /// The server's count of clients that want events or samples changed, their users unknown.
    public mutating func listenersChanged(subscribers: Int, sampleStreams: Int) -> Action? {
        listenersChanged(subscribers: Array(repeating: nil, count: max(0, subscribers)), sampleStreams: sampleStreams)
    }

    /// A D-Bus client (by its unique name) of `user` called `Claim`; a second claim from the same client counts
    /// once.
    public mutating func claimed(by client: String, user: UInt32) -> Action? {
        busClaims[client] = user
        return settle()
    }

    /// A D-Bus client called `Release`, or left the bus; a client that holds no claim changes nothing.
    public mutating func released(by client: String) -> Action? {
        busClaims[client] = nil
        return settle()
    }

    /// logind's sessions changed: the users with an active, unlocked session, or nil when logind cannot say.
    public mutating func sessionsChanged(presentUsers: Set<UInt32>?) -> Action? {
        self.presentUsers = presentUsers
        return settle()
    }

    /// The relay was turned on (its uinput device exists) or off (it could not be made, or the sensor went).
    public mutating func relayChanged(_ relay: Bool) -> Action? {
        self.relay = relay
        return settle()
    }

    /// Something began or stopped reading the relay's input device (``RelayDemand``).
    public mutating func relayReadChanged(_ read: Bool) -> Action? {
        relayRead = read
        return settle()
    }

    /// A reload changed `sensor.always_on`.
    public mutating func alwaysOnChanged(_ alwaysOn: Bool) -> Action? {
        self.alwaysOn = alwaysOn
        return settle()
    }

    private mutating func settle() -> Action? {
        let reason = self.reason
        let lowRate = reason == .relay
        defer { isLowRate = isCapturing && lowRate }
        switch (isCapturing, reason.captures) {
        case (false, true):
            isCapturing = true
            return .startCapture(reason)
        case (true, false):
            isCapturing = false
            return .stopCapture
        case (true, true) where lowRate != isLowRate:
            return .changeRate(reason)
        default:
            return nil
        }
    }
}
