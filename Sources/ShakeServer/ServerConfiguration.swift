// SPDX-License-Identifier: Apache-2.0
public import ShakeProtocol

/// How the server listens and treats its clients: the configuration's `clients:` limits (read through, as
/// `configuration.maxClients`) and the access rules.
@dynamicMemberLookup
public struct ServerConfiguration: Sendable, Hashable {
    /// What clients may cost.
    public var clients = ClientLimits()
    /// Who may do what.
    public var access = AccessPolicy()

    public init() {}

    public subscript<Value>(dynamicMember limit: WritableKeyPath<ClientLimits, Value>) -> Value {
        get { clients[keyPath: limit] }
        set { clients[keyPath: limit] = newValue }
    }

    /// Who gets a connection slot.
    public var slots: ClientSlots {
        ClientSlots(
            maxClients: clients.maxClients, maxPerUser: clients.maxClientsPerUser, reserved: clients.reservedClients)
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
