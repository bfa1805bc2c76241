// SPDX-License-Identifier: Apache-2.0
/// How the server listens and treats its clients.
public struct ServerConfiguration: Sendable, Hashable {
    /// Most clients connected at once; more are refused with an error line.
    public var maxClients = 2048
    /// Messages buffered for a client that does not read; past this the oldest are dropped (and counted).
    public var queueLimit = 256
    /// Dropped messages after which a client that does not read is disconnected.
    public var dropLimit = 4096
    /// The longest request line, in bytes.
    public var maxLineLength = 4096
    /// Bad lines (not JSON, unknown requests...) a client may send before it is disconnected.
    public var maxBadLines = 20
    /// Recent events kept for `replay`.
    public var replayCapacity = 1024
    /// Most connections one user (uid) may hold at once; root is not limited.
    public var maxClientsPerUser = 256
    /// Connection slots (out of ``maxClients``) kept for root and the admin accounts.
    public var reservedClients = 32
    /// Bytes the daemon holds for one client that does not read (answers and events waiting, and what the
    /// kernel has not taken yet); past it events to it are dropped and its requests are not read.
    public var clientBuffer = 64 * 1024
    /// Bytes the daemon holds for all clients together; past it, clients that are owed anything get no more
    /// events and have their requests left unread, until the total is back under three quarters of it.
    public var totalBuffer = 16 * 1024 * 1024
    /// Who may do what.
    public var access = AccessPolicy()

    public init() {}

    /// Who gets a connection slot.
    public var slots: ClientSlots {
        ClientSlots(maxClients: maxClients, maxPerUser: maxClientsPerUser, reserved: reservedClients)
    }
}

/// Who may use the socket: decided from the peer's credentials (SO_PEERCRED), never from what it says.
public struct AccessPolicy: Sendable, Hashable {
    /// Who may subscribe to events and ask for status and replay (beyond being able to open the socket).
    public var subscribe = PeerRule.everyone
    /// Who may stream raw samples: raw accelerometer data can leak what a person types.
    public var samples = PeerRule.rootOnly
    /// Who may inject simulated shakes, which every subscriber receives.
    public var simulate = PeerRule.rootOnly
    /// Who may have the daemon press a key chord (`key`): into their own session only, while it is active and
    /// unlocked, so everyone by default.
    public var key = PeerRule.everyone

    public init() {}

    /// What a connected peer loses under this policy.
    public enum Revocation: Sendable, Equatable {
        /// It may no longer subscribe: it is told and disconnected.
        case disconnect
        /// It may no longer stream samples: its stream stops, the connection stays.
        case stopSamples
    }

    /// Whether `peer` is an administrator: root, or allowed to stream samples or to simulate by a rule that does
    /// not allow everyone (by default, the group shaked-admin). Administrators may take the reserved slots.
    public func isAdmin(_ peer: PeerCredentials) -> Bool {
        peer.uid == 0 || (!samples.everyone && samples.allows(peer)) || (!simulate.everyone && simulate.allows(peer))
    }

    /// What a connected peer (streaming samples or not) loses under this policy; nil: nothing.
    public func revocation(for peer: PeerCredentials, wantsSamples: Bool) -> Revocation? {
        if !subscribe.allows(peer) { return .disconnect }
        if wantsSamples && !samples.allows(peer) { return .stopSamples }
        return nil
    }
}

/// A set of peers: everyone, or the listed users and groups. Root is always allowed.
public struct PeerRule: Sendable, Hashable {
    public var everyone: Bool
    public var users: Set<UInt32>
    public var groups: Set<UInt32>

    public init(users: Set<UInt32>, groups: Set<UInt32>) {
        everyone = false
        self.users = users
        self.groups = groups
    }

    public static let rootOnly = PeerRule(users: [], groups: [])

    public static let everyone: PeerRule = {
        var rule = PeerRule(users: [], groups: [])
        rule.everyone = true
        return rule
    }()

    public func allows(_ peer: PeerCredentials) -> Bool {
        everyone || peer.uid == 0 || users.contains(peer.uid) || groups.contains(peer.gid)
            || !groups.isDisjoint(with: peer.supplementaryGroups)
    }
}
