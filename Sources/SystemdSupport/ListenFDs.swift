// SPDX-License-Identifier: Apache-2.0
/// Sockets passed by systemd's socket activation (`LISTEN_FDS`, `LISTEN_PID`, `LISTEN_FDNAMES`).
///
/// Passed descriptors start at 3. They are meant for this process only when `LISTEN_PID` is its pid, so a child
/// that inherits the environment does not take them.
public struct ListenFDs: Sendable, Hashable {
    /// The first passed descriptor.
    public static let start: Int32 = 3

    public var descriptors: [Int32]
    public var names: [String]

    /// Reads the environment.
    /// - Parameters:
    ///   - environment: the process environment.
    ///   - pid: this process's id.
    /// - Returns: nil when nothing was passed to this process.
    public static func from(environment: [String: String], pid: Int32) -> ListenFDs? {
        guard let count = environment["LISTEN_FDS"].flatMap({ Int32($0) }), count > 0, count < 1024,
            let owner = environment["LISTEN_PID"].flatMap({ Int32($0) }), owner == pid
        else { return nil }
        let names =
            environment["LISTEN_FDNAMES"].map {
                $0.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            } ?? []
        return ListenFDs(descriptors: (0..<count).map { start + $0 }, names: names)
    }

    /// The environment variables to remove once the descriptors are taken, so children do not see them.
    public static let variables = ["LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"]
}
