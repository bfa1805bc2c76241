// SPDX-License-Identifier: Apache-2.0
/// What one client, or all of them, may cost the daemon: the `clients:` section of the configuration, which the
/// server takes as it is. The allowed ranges are the configuration schema's (`ShakedConfiguration.schema`).
public struct ClientLimits: Sendable, Hashable {
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

    public init() {}
}
