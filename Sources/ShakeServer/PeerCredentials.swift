import Foundation
public import Logging

/// The process at the other end of a Unix socket, as the kernel reports it.
public struct PeerCredentials: Sendable, Hashable, CustomStringConvertible {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32
    /// The peer's supplementary groups (from `/proc/PID/status`), read when it connects.
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

    /// The supplementary groups of a process, from the `Groups:` line of `/proc/PID/status`.
    static func supplementaryGroups(of pid: Int32) -> Set<UInt32> {
        guard pid > 0, let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Groups:") })
        else { return [] }
        return Set(
            line.dropFirst("Groups:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { UInt32($0) }
        )
    }
}

/// The layout of Linux's `struct ucred`, which Swift's Glibc hides behind `_GNU_SOURCE`.
struct UnixCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}
