// SPDX-License-Identifier: Apache-2.0
public import Logging
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// The process at the other end of a Unix socket, as the kernel reports it.
public struct PeerCredentials: Sendable, Hashable, CustomStringConvertible {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32
    /// The peer's supplementary groups, as the kernel recorded them when it connected (`SO_PEERGROUPS`).
    public var supplementaryGroups: Set<UInt32>

    public init(pid: Int32, uid: UInt32, gid: UInt32, supplementaryGroups: Set<UInt32> = []) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.supplementaryGroups = supplementaryGroups
    }

    public var description: String { "pid \(pid) uid \(uid) gid \(gid)" }

    /// Log metadata naming the peer (journal fields `CLIENT_PID`, `CLIENT_UID`, `CLIENT_GID`).
    public var metadata: Logger.Metadata {
        ["client_pid": "\(pid)", "client_uid": "\(uid)", "client_gid": "\(gid)"]
    }

}

/// Reads a connected Unix socket's peer as the kernel recorded it when the peer called `connect`: `SO_PEERCRED`
/// for pid, uid and gid, `SO_PEERGROUPS` for the supplementary groups. Nothing is read from `/proc`, where a pid
/// may by then name another process (one that exited and whose pid was reused, or one that changed its groups
/// since).
enum PeerCredentialsReader {
    /// Linux's `SO_PEERGROUPS` (since 4.13), which Swift's Glibc does not name.
    static let peerGroupsOption: Int32 = 59
    /// Most supplementary groups read; a peer with more gets none counted (refused rather than guessed).
    static let maxGroups = 1024

    /// Nothing: asks whether the group list is empty (the kernel refuses a zero-length buffer otherwise).
    struct NoGroups {}
    /// Room for ``maxGroups`` group ids.
    struct Groups {
        var ids: InlineArray<1024, UInt32> = .init(repeating: 0)
    }

    /// The peer of `channel`, or nil when the kernel does not say (not a Unix socket).
    static func read(_ provider: any SocketOptionProvider, on loop: any EventLoop) -> EventLoopFuture<PeerCredentials?>
    {
        let level = SocketOptionLevel(SOL_SOCKET)
        let credentials =
            provider.unsafeGetSocketOption(level: level, name: .init(SO_PEERCRED))
            as EventLoopFuture<
                UnixCredentials
            >
        return credentials.flatMap { raw in
            groups(provider, loop: loop).map { groups in
                PeerCredentials(pid: raw.pid, uid: raw.uid, gid: raw.gid, supplementaryGroups: groups)
            }
        }.map(Optional.some).recover { _ in nil }
    }

    /// The supplementary groups. The kernel keeps them sorted and writes as many as there are, so in the zeroed
    /// buffer a 0 can only be a real group when it comes first; an empty list is told apart from `[0]` by asking
    /// with no room at all first. More than ``maxGroups`` (ERANGE) counts as none.
    private static func groups(_ provider: any SocketOptionProvider, loop: any EventLoop) -> EventLoopFuture<
        Set<UInt32>
    > {
        let level = SocketOptionLevel(SOL_SOCKET)
        let name = SocketOptionName(peerGroupsOption)
        let empty = provider.unsafeGetSocketOption(level: level, name: name) as EventLoopFuture<NoGroups>
        return empty.map { _ in Set<UInt32>() }.flatMapError { _ in
            let all = provider.unsafeGetSocketOption(level: level, name: name) as EventLoopFuture<Groups>
            return all.map { buffer in
                var groups = Set<UInt32>()
                for index in 0..<maxGroups {
                    let id = buffer.ids[index]
                    if id == 0 && index > 0 { break }
                    groups.insert(id)
                }
                return groups
            }.recover { _ in [] }
        }
    }
}

/// The layout of Linux's `struct ucred`, which Swift's Glibc hides behind `_GNU_SOURCE`.
struct UnixCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}
