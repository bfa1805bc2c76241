// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The real daemon against hostile local clients: memory stays bounded, a fresh client is answered, the loop keeps
/// pinging the watchdog, and the log does not grow with the attack. `Benchmarks/hostile-clients.py` runs the same
/// attacks at larger sizes and prints the figures.
@Suite(.serialized)
struct HostileClientTests {
    let trace = Fixtures.path("shake-horizontal-100hz.csv")
    /// Pings every second (a quarter of it): the gaps say whether the event loop stalled.
    static let watchdogMicroseconds = 2_000_000

    init() {
        signal(SIGPIPE, SIG_IGN)  // Writing to a connection the daemon closed must not end the test run.
    }

    /// Starts the daemon replaying in a loop, with a fake notify socket and watchdog.
    func start(_ name: String, configuration: String? = nil, prefix: [String] = []) async throws -> (
        DaemonProcess, socket: String, watchdog: WatchdogPings
    ) {
        UnixSocket.raiseDescriptorLimit(to: 16384)
        let directory = try Harness.scratch(name)
        chmod(directory, 0o755)
        let socket = "\(directory)/shaked.sock"
        var arguments = ["--source", "replay:\(trace)", "--loop", "--speed", "4", "--socket", socket]
        if let configuration {
            try configuration.write(toFile: "\(directory)/shaked.yaml", atomically: true, encoding: .utf8)
            arguments += ["--config", "\(directory)/shaked.yaml"]
        }
        let watchdog = try WatchdogPings(path: "\(directory)/notify.sock")
        let daemon = try DaemonProcess(
            command: prefix
                + ["/usr/bin/env", "NOTIFY_SOCKET=\(watchdog.path)", "WATCHDOG_USEC=\(Self.watchdogMicroseconds)"]
                + [Harness.product("shaked")] + arguments,
            pidFile: "\(directory)/daemon.pid")
        let listening = await daemon.wait(timeout: 10) { _ in UnixSocket.isListening(socket) }
        #expect(listening, "the daemon did not create its socket: \(daemon.stderr)")
        return (daemon, socket, watchdog)
    }

    /// Seconds from connecting to the status answer of a fresh client; nil if none came within `timeout`.
    static func freshStatus(_ socket: String, timeout: Double = 10) -> Double? {
        let start = Date()
        guard let client = try? StreamClient(path: socket) else { return nil }
        client.send(#"{"request":"status"}"# + "\n")
        let answered = client.readLines(timeout: timeout) { $0.contains(#""event":"status""#) }
        return answered ? Date().timeIntervalSince(start) : nil
    }

    /// How much longer the answers may take in a sanitizer build (`make sanitize`), whose daemon runs several
    /// times slower: the bounds the issue sets hold for the product's build.
    static var slowdown: Double { LoadTests.sanitized ? 10 : 1 }

    /// The longest gap between watchdog pings that the test allows: `WATCHDOG_USEC` (2 s), twice the ping
    /// interval (the daemon pings every half of it). A loop that stalls for seconds under the attack (as it did)
    /// shows at once.
    static var allowedGap: Double { Double(watchdogMicroseconds) / 1e6 }

    @Test func pipelinedRequestsThatAreNeverReadCostBoundedMemoryAndStallNobody() async throws {
        let (daemon, socket, watchdog) = try await start("pipeline")
        defer { _ = daemon.stop() }
        defer { watchdog.stop() }
        let pid = try #require(daemon.daemonPID)
        #expect(Self.freshStatus(socket) != nil)  // Warm up: first-use allocations are not growth.
        try? await Task.sleep(for: .seconds(0.5))
        let baseMemory = LoadTests.residentKilobytes(pid)
        let start = Date()

        // 300 clients with a small receive buffer, each sending 1,000 status requests and reading nothing.
        var attackers: [StreamClient] = []
        let requests = String(repeating: #"{"request":"status"}"# + "\n", count: 1000)
        for _ in 0..<300 {
            let client = try StreamClient(path: socket)
            var size: Int32 = 4096
            setsockopt(client.fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            client.send(requests)
            attackers.append(client)
        }
        var waits: [Double?] = []
        var peakMemory = baseMemory
        for _ in 0..<20 {
            waits.append(Self.freshStatus(socket))
            peakMemory = max(peakMemory, LoadTests.residentKilobytes(pid))
            try? await Task.sleep(for: .seconds(0.2))
        }
        let gap = watchdog.longestGap(since: start)
        print(
            "HostileClientTests: 300 pipelining clients: RSS +\(peakMemory - baseMemory) kB, fresh status "
                + "\(waits.map { $0.map { String(format: "%.3f", $0) } ?? "none" }) s, longest watchdog gap \(gap) s")
        // Every fresh client is answered, and the typical one at once: a loop the attack stalls shows in the
        // median. The slowest wait is a timing figure, `make bench-hostile`'s, measured with nothing else
        // running; here one wait can take a second's hiccup from the rest of the suite on two cores.
        #expect(waits.allSatisfy { $0 != nil }, "a fresh client was not answered: \(waits)")
        let median = waits.map { $0 ?? .infinity }.sorted()[waits.count / 2]
        #expect(median < 1 * Self.slowdown, "a fresh client waited: \(waits)")
        if !LoadTests.sanitized {
            #expect(peakMemory - baseMemory < 64 * 1024, "RSS grew from \(baseMemory) kB to \(peakMemory) kB")
        }
        #expect(gap < Self.allowedGap, "the watchdog was not pinged for \(gap) s")
        // The attackers are not cut off: they stalled themselves, and get their answers once they read.
        let first = try #require(attackers.first)
        var answers = 0
        _ = first.readLines(timeout: 30) { line in
            if line.contains(#""event":"status""#) { answers += 1 }
            return answers == 1000
        }
        #expect(answers == 1000)
        attackers.removeAll()
        #expect(await daemon.stop() == 0, "\(daemon.stderr)")
    }

    @Test func anEmptyLineFloodCostsTheSenderNotOthers() async throws {
        let (daemon, socket, watchdog) = try await start("empty-lines")
        defer { _ = daemon.stop() }
        defer { watchdog.stop() }
        #expect(Self.freshStatus(socket) != nil)
        let start = Date()
        // 8 connections flooding newlines, each reconnecting as soon as the daemon closes it.
        let flood = Flood(socket: socket, connections: 8, bytes: Array(repeating: UInt8(ascii: "\n"), count: 65536))
        flood.start()
        try? await Task.sleep(for: .seconds(0.5))
        var waits: [Double] = []
        for _ in 0..<20 {
            waits.append(Self.freshStatus(socket) ?? .infinity)
            try? await Task.sleep(for: .seconds(0.05))
        }
        let (sent, connections) = flood.stop()
        let median = waits.sorted()[waits.count / 2]
        print(
            "HostileClientTests: empty-line flood (\(sent) bytes over \(connections) connections): fresh status "
                + "median \(median) s")
        #expect(median < 0.05 * Self.slowdown, "fresh status under an empty-line flood: \(waits)")
        #expect(watchdog.longestGap(since: start) < Self.allowedGap)
        let status = try await Harness.shakectl(["status", "--socket", socket, "--json"])
        #expect(!status.contains(#""bad_lines":0"#), "empty lines count as bad lines: \(status)")
        #expect(await daemon.stop() == 0, "\(daemon.stderr)")
    }

    static var canSwitchUser: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
    }

    /// Runs `script` as the unprivileged user nobody (uid 65534) with `arguments`.
    static func asNobody(_ script: String, _ arguments: [String], directory: String) throws -> DaemonProcess {
        try DaemonProcess(
            ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script]
                + arguments, pidFile: "\(directory)/no-pid-file")
    }

    @Test(.enabled(if: canSwitchUser, "needs root, setpriv and python3"))
    func fiftyThousandRefusedRequestsWriteABoundedLog() async throws {
        let (daemon, socket, watchdog) = try await start("refusals")
        defer { _ = daemon.stop() }
        defer { watchdog.stop() }
        #expect(Self.freshStatus(socket) != nil)
        let linesBefore = daemon.stderr.split(separator: "\n").count
        // 100 connections of 500 simulate requests each: the daemon ends each after max_bad_lines refusals.
        let script = """
            import socket, sys
            sent = connections = answers = 0
            while sent < 50000:
                s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); connections += 1
                f = s.makefile("rb"); f.readline()
                try:
                    s.sendall(b'{"request":"simulate"}\\n' * 500)
                except OSError:
                    pass
                sent += 500
                try:
                    while f.readline():
                        answers += 1
                except ConnectionResetError:
                    pass  # The daemon closed with requests unread: the kernel resets the connection.
                s.close()
            print("sent", sent, "connections", connections, "answers", answers, flush=True)
            """
        let attacker = try Self.asNobody(script, [socket], directory: (socket as NSString).deletingLastPathComponent)
        defer { _ = attacker.stop() }
        #expect(
            await attacker.wait(timeout: 120) { $0.stdout.contains("sent 50000") },
            "\(attacker.stdout)\(attacker.stderr)")
        // Each connection was ended by the daemon after its refusals reached the bad-line limit.
        #expect(attacker.stdout.contains("connections 100 "), "\(attacker.stdout)")
        let status = try await Harness.shakectl(["status", "--socket", socket, "--json"])
        #expect(status.contains(#""requests_refused":2000"#), "20 refusals for each of 100 connections: \(status)")
        // The lines written since, but for the replayed trace's own shakes, which the looping replay logs about
        // twice a second for as long as the test runs (some 50 lines under AddressSanitizer, which takes 25 s).
        let written = daemon.stderr.split(separator: "\n").dropFirst(linesBefore)
        let logged = written.filter { !$0.hasSuffix("] shake began") && !$0.hasSuffix("] shake ended") }.count
        print(
            "HostileClientTests: 50,000 refused simulate requests: \(logged) log lines "
                + "(\(written.count - logged) of the replay's shakes besides)")
        #expect(logged < 20, "log lines for 50,000 refusals: \(daemon.stderr)")
        #expect(await daemon.stop() == 0, "\(daemon.stderr)")
        #expect(daemon.stderr.contains("more of the same warning"), "the refusals not logged are counted")
    }

    @Test(.enabled(if: canSwitchUser, "needs root, setpriv and python3"))
    func oneAccountCannotTakeEverySlot() async throws {
        let (daemon, socket, watchdog) = try await start(
            "per-user",
            configuration: "clients:\n  max_clients: 40\n  max_clients_per_user: 10\n  reserved_clients: 5\n")
        defer { _ = daemon.stop() }
        defer { watchdog.stop() }
        // nobody opens 40 connections and holds them.
        let script = """
            import socket, sys, time
            held, answers = [], {}
            for _ in range(40):
                s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); held.append(s)
                line = s.makefile("rb").readline().decode()
                kind = "hello" if '"event":"hello"' in line else "too_many_clients" if "too_many_clients" in line else line
                answers[kind] = answers.get(kind, 0) + 1
            print(sorted(answers.items()), flush=True)
            time.sleep(60)
            """
        let holder = try Self.asNobody(script, [socket], directory: (socket as NSString).deletingLastPathComponent)
        defer { _ = holder.stop() }
        #expect(await holder.wait(timeout: 30) { $0.stdout.contains("]") }, "\(holder.stdout)\(holder.stderr)")
        #expect(holder.stdout.contains("[('hello', 10), ('too_many_clients', 30)]"), "\(holder.stdout)")
        // Others still get in: root (also into the reserved slots, once the others are taken).
        var others: [StreamClient] = []
        for _ in 0..<30 {
            let client = try StreamClient(path: socket)
            #expect(client.readLine(timeout: 5)?.contains(#""event":"hello""#) == true)
            others.append(client)
        }
        let refused = try StreamClient(path: socket)
        #expect(refused.readLine(timeout: 5)?.contains("too_many_clients") == true, "40 in all")
        #expect(await daemon.stop() == 0, "\(daemon.stderr)")
    }

    /// A descriptor limit below `max_clients` that the daemon cannot raise: the clients past the room it leaves
    /// are refused with `too_many_clients`, none waits unanswered while `accept` fails, and the loop stays live.
    @Test func aDescriptorLimitBelowMaxClientsRefusesInsteadOfLeavingClientsUnanswered() async throws {
        let descriptors = 128
        let (daemon, socket, watchdog) = try await start(
            "descriptors", prefix: ["/usr/bin/prlimit", "--nofile=\(descriptors):\(descriptors)", "--"])
        defer { _ = daemon.stop() }
        defer { watchdog.stop() }
        let start = Date()
        var held: [StreamClient] = []
        var refused = 0
        var unanswered = 0
        for _ in 0..<(descriptors + 20) {
            let client = try StreamClient(path: socket)
            let line = client.readLine(timeout: 5) ?? ""
            if line.contains(#""event":"hello""#) {
                held.append(client)
            } else if line.contains("too_many_clients") {
                refused += 1
            } else {
                unanswered += 1
            }
        }
        #expect(unanswered == 0)
        #expect(held.count == descriptors - 64, "served \(held.count), refused \(refused)")
        #expect(refused == descriptors + 20 - held.count)
        #expect(watchdog.longestGap(since: start) < Self.allowedGap)
        #expect(daemon.stderr.contains("the descriptor limit allows fewer clients"), "\(daemon.stderr)")
        held.removeAll()
        #expect(await daemon.stop() == 0, "\(daemon.stderr)")
    }

    /// `--print-events` with a standard output that fails (a reader gone, a full disk): said once in the log, no
    /// spin, the socket keeps serving and events keep coming.
    @Test func aFailingStandardOutputIsLoggedOnceAndTheSocketServes() async throws {
        let directory = try Harness.scratch("stdout-full")
        let socket = "\(directory)/shaked.sock"
        let command =
            [Harness.product("shaked"), "--print-events", "--source", "replay:\(trace)", "--loop", "--speed", "4"]
            + ["--socket", socket]
        let daemon = try DaemonProcess(
            command: ["/bin/sh", "-c", "exec " + command.map { "'\($0)'" }.joined(separator: " ") + " > /dev/full"],
            pidFile: "\(directory)/daemon.pid")
        defer { _ = daemon.stop() }
        let ended = await daemon.wait(timeout: 30) { $0.stderr.components(separatedBy: "shake ended").count > 3 }
        #expect(ended, "\(daemon.stderr)")
        #expect(daemon.stderr.components(separatedBy: "events are no longer printed").count == 2, "\(daemon.stderr)")
        #expect(Self.freshStatus(socket) != nil)
        let pid = try #require(daemon.daemonPID)
        // No spin: the daemon uses a small part of a core (it replays at 400 Hz).
        let before = Self.cpuSeconds(pid)
        try? await Task.sleep(for: .seconds(2))
        let used = Self.cpuSeconds(pid) - before
        #expect(used < 1, "CPU seconds in 2 s: \(used)")
        #expect(await daemon.stop() == 0, "\(daemon.stderr)")
    }

    /// User and system CPU time of `pid`, seconds.
    static func cpuSeconds(_ pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let fields = stat.split(separator: ")").last?.split(separator: " "), fields.count > 13,
            let user = Double(fields[11]), let system = Double(fields[12])
        else { return -1 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// A client that shuts down its sending side (`nc -N`, socat) keeps its subscription until it closes.
    @Test func aHalfClosedClientKeepsItsSubscription() async throws {
        let (daemon, socket, watchdog) = try await start("half-closed")
        defer { _ = daemon.stop() }
        defer { watchdog.stop() }
        let client = try StreamClient(path: socket)
        #expect(client.readLine(timeout: 5)?.contains(#""event":"hello""#) == true)
        client.send(#"{"request":"subscribe","phases":["ended"]}"# + "\n" + #"{"request":"status"}"# + "\n")
        shutdown(client.fd, Int32(SHUT_WR))
        var lines: [String] = []
        _ = client.readLines(timeout: 30) { line in
            lines.append(line)
            return line.contains(#""phase":"ended""#)
        }
        #expect(lines.contains { $0.contains(#""event":"status""#) }, "requests sent before the shutdown: \(lines)")
        #expect(lines.contains { $0.contains(#""phase":"ended""#) }, "events after the shutdown: \(lines)")
        #expect(await daemon.stop() == 0, "\(daemon.stderr)")
    }
}

extension StreamClient {
    /// Reads line by line (every line, in order) until `done` says so, the stream ends or `timeout` passes.
    /// - Returns: whether `done` said so.
    func readLines(timeout: Double, until done: (String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let open = drain()
            for line in takeLines() where done(line) { return true }
            if !open { return false }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 50)
        }
        return false
    }
}

/// Collects the daemon's watchdog pings as they come, on a thread of its own.
final class WatchdogPings: @unchecked Sendable {
    private let socket: DatagramSocket
    private let lock = NSLock()
    private var pings: [Date] = []
    private var stopped = false
    var path: String { socket.path }

    init(path: String) throws {
        socket = try DatagramSocket(path: path)
        Thread.detachNewThread { [self] in
            while !lock.withLock({ stopped }) {
                if let message = socket.receive(), String(decoding: message, as: UTF8.self).contains("WATCHDOG=1") {
                    lock.withLock { pings.append(Date()) }
                }
            }
        }
    }

    func stop() {
        lock.withLock { stopped = true }
    }

    /// The longest time without a ping from `start` (counting the last ping before it) until now.
    func longestGap(since start: Date) -> Double {
        let times = lock.withLock { pings }
        let window = times.filter { $0 >= start } + [Date()]
        var previous = times.last { $0 < start } ?? start
        var longest = 0.0
        for time in window {
            longest = max(longest, time.timeIntervalSince(previous))
            previous = time
        }
        return longest
    }
}

/// Connections that keep writing `bytes`, reconnecting whenever the daemon closes one, on a thread of their own.
final class Flood: @unchecked Sendable {
    let socket: String
    let connections: Int
    let bytes: [UInt8]
    private let lock = NSLock()
    private var running = true
    private var sent = 0
    private var opened = 0
    private var thread: Thread?
    private let done = DispatchSemaphore(value: 0)

    init(socket: String, connections: Int, bytes: [UInt8]) {
        self.socket = socket
        self.connections = connections
        self.bytes = bytes
    }

    func start() {
        Thread.detachNewThread { [self] in
            var descriptors: [Int32] = []
            while lock.withLock({ running }) {
                while descriptors.count < connections, let fd = UnixSocket.connect(socket) {
                    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                    descriptors.append(fd)
                    lock.withLock { opened += 1 }
                }
                var open: [Int32] = []
                for fd in descriptors {
                    let written = bytes.withUnsafeBytes {
                        Glibc.send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL))
                    }
                    if written > 0 {
                        lock.withLock { sent += written }
                        open.append(fd)
                    } else if written < 0 && errno == EAGAIN {
                        open.append(fd)
                    } else {
                        close(fd)
                    }
                }
                descriptors = open
                if open.count == connections { usleep(1000) }
            }
            for fd in descriptors { close(fd) }
            done.signal()
        }
    }

    /// Stops flooding. - Returns: the bytes sent and the connections opened.
    func stop() -> (sent: Int, connections: Int) {
        lock.withLock { running = false }
        done.wait()
        return lock.withLock { (sent, opened) }
    }
}
