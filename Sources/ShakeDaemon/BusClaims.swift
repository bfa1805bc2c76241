// SPDX-License-Identifier: Apache-2.0
public import ShakeServer

/// Who claims the sensor on D-Bus: `Claim` and `Release` allowed to whoever may subscribe on the socket
/// (`access.subscribe`), decided from the credentials the bus vouches for, and the claims a narrower rule takes
/// back; who may read the properties, and who hears the signals (``audience``). No I/O: the bus service hands the
/// outcomes to the ``CaptureGate`` and the log, and addresses the signals.
public struct BusClaims: Sendable, Equatable {
    public enum Outcome: Sendable, Equatable {
        /// The client (by its unique bus name) of `user` claims the sensor.
        case claimed(client: String, user: UInt32)
        /// The client no longer claims it.
        case released(client: String)
        /// The access rules do not allow the caller, or the method is not one of the object's.
        case refused
    }

    /// Who may claim: `access.subscribe` in force.
    public private(set) var rule: PeerRule
    /// The clients that claim the sensor, by unique name, with the credentials they claimed with.
    public private(set) var claimants: [String: PeerCredentials] = [:]

    public init(rule: PeerRule) {
        self.rule = rule
    }

    /// Who hears the `Shake` signal and the properties' change notices.
    public enum Audience: Sendable, Equatable {
        /// Everyone listening: `access.subscribe` is `everyone`, so a broadcast tells nobody what they may not know.
        case everyone
        /// The claimants alone, one message each (in order of their names): every one of them is allowed, and a
        /// client the rule does not allow can hold no claim.
        case claimants([String])
    }

    /// Who hears the signals under the rule in force.
    public var audience: Audience {
        rule.everyone ? .everyone : .claimants(claimants.keys.sorted())
    }

    /// Whether `peer` may read the properties (`Get`, `GetAll`): whoever may subscribe.
    public func mayRead(_ peer: PeerCredentials) -> Bool {
        rule.allows(peer)
    }

    /// A caller as the bus recorded it at connect: its uid and its groups as one set, without saying which is the
    /// primary one (`GetConnectionCredentials`'s `UnixGroupIDs`). Every group counts as a supplementary one,
    /// which is what a rule's `group:` entries match; the primary gid is left as (gid_t)-1, which names no group.
    public static func peer(uid: UInt32, groups: [UInt32]) -> PeerCredentials {
        PeerCredentials(pid: 0, uid: uid, gid: UInt32.max, supplementaryGroups: Set(groups))
    }

    /// A call of `method` by `client`, whose credentials the bus vouches for.
    public mutating func call(_ method: String, client: String, peer: PeerCredentials) -> Outcome {
        guard rule.allows(peer) else { return .refused }
        switch method {
        case "Claim":
            claimants[client] = peer
            return .claimed(client: client, user: peer.uid)
        case "Release":
            claimants[client] = nil
            return .released(client: client)
        default:
            return .refused
        }
    }

    /// A client left the bus: its claim, if it held one, goes.
    /// - Returns: whether it held a claim.
    public mutating func left(_ client: String) -> Bool {
        claimants.removeValue(forKey: client) != nil
    }

    /// A reload changed `access.subscribe`: the claims of clients it no longer allows are dropped.
    /// - Returns: those clients, in order of their names.
    public mutating func ruleChanged(_ rule: PeerRule) -> [String] {
        self.rule = rule
        let revoked = claimants.filter { !rule.allows($0.value) }.map(\.key).sorted()
        for client in revoked { claimants[client] = nil }
        return revoked
    }

    /// The connection to the bus was lost: every claim goes with it (the names meant nothing on another bus).
    /// - Returns: the clients that held one, in order of their names.
    public mutating func busLost() -> [String] {
        defer { claimants = [:] }
        return claimants.keys.sorted()
    }
}
