// SPDX-License-Identifier: Apache-2.0
/// Who gets one of the server's connection slots. No I/O: the server counts its clients by user and asks.
///
/// One account may hold at most ``maxPerUser`` connections, so it cannot take every slot; and the last
/// ``reserved`` slots are kept for root and the admin accounts, so that an administrator can still connect (and
/// see what is going on) while others hold the rest. Root has no per-user limit.
public struct ClientSlots: Sendable, Hashable {
    /// Most clients connected at once.
    public var maxClients: Int
    /// Most connections one user (uid) may hold at once; root is not limited.
    public var maxPerUser: Int
    /// Slots out of ``maxClients`` only root and admin accounts may take.
    public var reserved: Int

    public init(maxClients: Int, maxPerUser: Int, reserved: Int) {
        self.maxClients = maxClients
        self.maxPerUser = maxPerUser
        self.reserved = reserved
    }

    /// Why a connection gets no slot.
    public enum Refusal: Sendable, Equatable {
        /// Every slot open to this peer is taken.
        case full(limit: Int)
        /// Its user already holds the most connections one user may.
        case perUser(limit: Int)
    }

    /// Whether a new connection gets a slot, given the clients connected and how many of them its user holds.
    /// - Parameters:
    ///   - root: the peer is uid 0.
    ///   - admin: the peer is root or belongs to an admin account (may take the reserved slots).
    /// - Returns: nil when it gets one.
    public func refusal(connected: Int, sameUser: Int, root: Bool, admin: Bool) -> Refusal? {
        if connected >= maxClients { return .full(limit: maxClients) }
        if !root && sameUser >= maxPerUser { return .perUser(limit: maxPerUser) }
        let open = admin ? maxClients : max(0, maxClients - reserved)
        if connected >= open { return .full(limit: open) }
        return nil
    }
}
