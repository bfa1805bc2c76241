// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
    import Glibc
#endif

/// The programs that hold a device node open, found in `/proc/PID/fd` (as far as permissions allow: an
/// unprivileged daemon sees its own user's processes only, unless the holder's fds are readable to it).
public enum DeviceHolders {
    /// A process holding the node.
    public struct Holder: Sendable, Hashable, CustomStringConvertible {
        public var pid: Int
        /// Its command name (`/proc/PID/comm`), when readable.
        public var command: String?

        public init(pid: Int, command: String?) {
            self.pid = pid
            self.command = command
        }

        /// `iio-sensor-proxy (pid 812)`.
        public var description: String { "\(command ?? "a process") (pid \(pid))" }
    }

    /// The processes with `node` open, skipping this one; at most `limit`, reading at most `maximumFDs`
    /// descriptors per process, so that the cost stays bounded on a busy machine.
    public static func find(
        _ node: String, procRoot: String = "/proc", limit: Int = 8, maximumFDs: Int = 4096
    ) -> [Holder] {
        guard let entries = SystemFiles.list(procRoot) else { return [] }
        let me = Int(getpid())
        var holders: [Holder] = []
        for entry in entries {
            guard let pid = Int(entry), pid != me || procRoot != "/proc" else { continue }
            let fdDirectory = "\(procRoot)/\(entry)/fd"
            guard let fds = SystemFiles.list(fdDirectory) else { continue }
            for fd in fds.prefix(maximumFDs) where link("\(fdDirectory)/\(fd)") == node {
                holders.append(Holder(pid: pid, command: command(of: entry, procRoot: procRoot)))
                break
            }
            if holders.count >= limit { break }
        }
        return holders.sorted { $0.pid < $1.pid }
    }

    /// The processes running one of `commands` (`/proc/PID/comm` is readable to every user, unlike the fds):
    /// the likely users of a device whose holder cannot be seen, or that runs its buffer without holding it open
    /// (iio-sensor-proxy opens the node only for a moment at each read).
    public static func running(_ commands: Set<String>, procRoot: String = "/proc", limit: Int = 8) -> [Holder] {
        guard let entries = SystemFiles.list(procRoot) else { return [] }
        var found: [Holder] = []
        // The kernel keeps 15 bytes of a command's name in comm: "iio-sensor-prox".
        let short = Set(commands.map { String($0.utf8.prefix(15))! })
        for entry in entries {
            guard let pid = Int(entry), let comm = SystemFiles.read("\(procRoot)/\(entry)/comm")?.trimmingWhitespace(),
                short.contains(comm), let command = command(of: entry, procRoot: procRoot), commands.contains(command)
            else { continue }
            found.append(Holder(pid: pid, command: command))
            if found.count >= limit { break }
        }
        return found.sorted { $0.pid < $1.pid }
    }

    /// Whether nobody holds the IIO device node now: an IIO character device opens once, so opening it (and
    /// closing it at once) succeeds only then. False when it is busy, or cannot be opened for another reason
    /// (no right to it: then nothing can be said).
    public static func nodeIsFree(_ node: String) -> Bool {
        let fd = open(node, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return false }
        close(fd)
        return true
    }

    /// The accelerometer's known other users.
    public static let knownUsers: Set<String> = ["iio-sensor-proxy"]

    /// What to tell the user: who holds it (or, when that cannot be seen, who probably does), and what to do.
    /// - Parameter handedOver: shaked's hand-over rule gave the device to shaked (udev's `SHAKED_OWNS=1`):
    ///   iio-sensor-proxy, started before that, still uses it and only needs a restart.
    public static func advice(
        device: String, holders: [Holder], suspects: [Holder] = [], handedOver: Bool = false
    ) -> String {
        let who: String
        if !holders.isEmpty {
            who = "is held by " + holders.map(\.description).joined(separator: ", ")
        } else if !suspects.isEmpty {
            who =
                "is in use, probably by " + suspects.map(\.description).joined(separator: ", ")
                + ", which runs its buffer"
        } else {
            who = "is held by another program (not visible to this user; run `fuser -v /dev/\(device)` as root)"
        }
        let isProxy = (holders + suspects).contains { $0.command == "iio-sensor-proxy" }
        let what =
            switch (isProxy, handedOver) {
            case (true, true):
                "shaked's hand-over rule gives the device to shaked, but iio-sensor-proxy started before it applied and still reads it: restart iio-sensor-proxy (`systemctl restart iio-sensor-proxy.service`), which then reads shaked's relay"
            case (true, false):
                "hand the device over with shaked's hand-over rule (81-shaked-iio-sensor-proxy.rules, with sensor.relay on or auto): with the rule installed, run `udevadm trigger --action=change --subsystem-match=iio`, then restart iio-sensor-proxy, which then reads shaked's relay"
            default:
                "stop that program, or choose another sensor with sensor.device"
            }
        return "/dev/\(device) \(who): \(what); shaked retries with back-off"
    }

    /// A process's command: the name it was started as (`cmdline`'s first word, without its folder), else its
    /// `comm` (at most 15 bytes).
    static func command(of entry: String, procRoot: String) -> String? {
        if let cmdline = SystemFiles.read("\(procRoot)/\(entry)/cmdline"),
            let first = cmdline.split(separator: "\0", omittingEmptySubsequences: true).first,
            let name = first.split(separator: "/").last, !name.isEmpty
        {
            return String(name)
        }
        let comm = SystemFiles.read("\(procRoot)/\(entry)/comm")?.trimmingWhitespace()
        return comm.flatMap { $0.isEmpty ? nil : $0 }
    }

    private static func link(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
