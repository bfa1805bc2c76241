// SPDX-License-Identifier: Apache-2.0
import ShakeProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// Taking a socket path safely.
public enum SocketFile {
    /// Why a path cannot be taken.
    public struct Unavailable: Error, Sendable, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "\(path): \(reason)" }
    }

    /// Creates the listening socket at `path`, safely, and returns its descriptor (listening, close-on-exec).
    ///
    /// - The folder must not let others replace what is in it: writable by users other than its owner and group
    ///   is refused unless the sticky bit is set (as on /tmp).
    /// - A stale socket (nobody listening) is removed; a live one, or a file that is not a socket, is refused.
    /// - The file is given its mode and group before the socket listens, so nobody can connect to it while it
    ///   is open to more than `mode` allows (a connection to a socket that does not listen yet is refused). The
    ///   umask is left alone: it is the whole process's, and changing it around `bind` would change the mode of
    ///   whatever another thread creates meanwhile. The group is changed with a call that does not follow a
    ///   symbolic link swapped in there; the folder check above keeps others from swapping the file at all.
    public static func listen(
        at path: String, mode: UInt32, group: UInt32?, backlog: Int32 = 512
    ) throws(Unavailable) -> Int32 {
        if let problem = SocketPath.problem(with: path) { throw Unavailable(path: path, reason: problem) }
        try checkFolder(of: path)
        try prepare(path)
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw Unavailable(path: path, reason: "socket: \(String(cString: strerror(errno)))")
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw Unavailable(path: path, reason: "cannot bind: \(reason)")
        }
        guard fchmodat(AT_FDCWD, path, mode_t(mode & 0o777), 0) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            unlink(path)
            throw Unavailable(path: path, reason: "cannot give the socket its mode: \(reason)")
        }
        if let group, fchownat(AT_FDCWD, path, uid_t.max, gid_t(group), AT_SYMLINK_NOFOLLOW) != 0 {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            unlink(path)
            throw Unavailable(path: path, reason: "cannot give the socket the group \(group): \(reason)")
        }
        guard Glibc.listen(descriptor, backlog) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            unlink(path)
            throw Unavailable(path: path, reason: "cannot listen: \(reason)")
        }
        return descriptor
    }

    /// Refuses a folder where other users could replace the socket file (rename or delete it, put a link there).
    static func checkFolder(of path: String) throws(Unavailable) {
        let folder = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        var status = stat()
        guard stat(folder.isEmpty ? "/" : folder, &status) == 0 else {
            throw Unavailable(path: path, reason: "its folder cannot be read: \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw Unavailable(path: path, reason: "\(folder) is not a folder")
        }
        let sticky = status.st_mode & S_ISVTX != 0
        if status.st_mode & S_IWOTH != 0 && !sticky {
            throw Unavailable(
                path: path,
                reason: "\(folder) is writable by every user and has no sticky bit: anyone could replace the socket")
        }
    }

    /// Makes `path` (already checked by ``listen(at:mode:group:backlog:)``) free to bind: a stale socket (nobody
    /// listening) is removed; a live one, or a file that is not a socket, is refused.
    static func prepare(_ path: String) throws(Unavailable) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }  // Nothing there.
        guard status.st_mode & S_IFMT == S_IFSOCK else {
            throw Unavailable(path: path, reason: "exists and is not a socket; refusing to replace it")
        }
        if isListening(path) {
            throw Unavailable(path: path, reason: "another daemon is already listening there")
        }
        guard unlink(path) == 0 || errno == ENOENT else {
            throw Unavailable(path: path, reason: "cannot remove the stale socket: \(String(cString: strerror(errno)))")
        }
    }

    /// Whether something accepts connections on the socket at `path`.
    static func isListening(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.prefix(buffer.count - 1).enumerated() { buffer[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0
    }
}
