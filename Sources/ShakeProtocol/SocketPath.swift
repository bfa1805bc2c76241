/// Where the daemon's socket lives, for the daemon and its clients alike.
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
}
