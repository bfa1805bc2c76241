// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
    import Glibc
#endif

/// Where the daemon's socket lives, for the daemon and its clients alike, and what may name it: one rule for the
/// command line, the configuration file and the server.
public enum SocketPath {
    /// `$SHAKED_SOCKET` when set; else `$RUNTIME_DIRECTORY/shaked.sock` (the daemon under systemd); else
    /// `/run/shaked/shaked.sock`.
    public static func `default`(environment: [String: String]) -> String {
        if let path = environment["SHAKED_SOCKET"], !path.isEmpty { return path }
        if let runtime = environment["RUNTIME_DIRECTORY"]?.split(separator: ":").first, !runtime.isEmpty {
            return String(runtime) + "/shaked.sock"
        }
        return "/run/shaked/shaked.sock"
    }

    /// Where a client looks: `$SHAKED_SOCKET` when set, else `/run/shaked/shaked.sock`. (A client's own
    /// `$RUNTIME_DIRECTORY` is its service's, not the daemon's.)
    public static func forClients(environment: [String: String]) -> String {
        if let path = environment["SHAKED_SOCKET"], !path.isEmpty { return path }
        return "/run/shaked/shaked.sock"
    }

    /// The longest path a Unix socket can have on Linux: `sun_path` less its terminating zero (107 bytes).
    public static let maxLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// Why `path` cannot name a socket file, or nil when it can: empty (which would bind an abstract socket that
    /// no file permission guards), relative, or longer than ``maxLength``.
    public static func problem(with path: String) -> String? {
        if path.isEmpty { return "empty; expected an absolute path" }
        if !path.hasPrefix("/") { return "'\(path)' is relative; expected an absolute path" }
        let length = path.utf8.count
        if length > maxLength {
            return "\(length) bytes long; a Unix socket's path has at most \(maxLength) bytes"
        }
        return nil
    }
}
