import Foundation

/// Taking a socket path safely.
public enum SocketFile {
    /// Why a path cannot be taken.
    public struct Unavailable: Error, Sendable, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "\(path): \(reason)" }
    }

    /// Makes `path` free to bind: a stale socket (nobody listening) is removed; a live one, or a file that is
    /// not a socket, is refused.
    public static func prepare(_ path: String) throws(Unavailable) {
        guard path.utf8.count < 108 else { throw Unavailable(path: path, reason: "path too long for a Unix socket") }
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
