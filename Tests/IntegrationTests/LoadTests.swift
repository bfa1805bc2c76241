// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeTestSupport
import Testing

/// The real daemon under load and abuse, and across a restart: afterwards its descriptors and memory are back
/// where they started, and every well-behaved subscriber got every event, in order.
@Suite(.serialized)
struct LoadTests {
    let trace = Fixtures.path("shake-horizontal-100hz.csv")

    func startDaemon(_ name: String, socket: String? = nil, arguments: [String] = []) async throws -> (
        DaemonProcess, socket: String, directory: String
    ) {
        try await Harness.startReplayDaemon(name, trace: trace, socket: socket, arguments: arguments)
    }

    /// The descriptors `pid` has open, but for its pipes to a sanitizer's symbolizer: ThreadSanitizer starts
    /// llvm-symbolizer the first time it reports or matches a suppression, and keeps two pipes to it.
    static func openDescriptors(_ pid: Int32) -> Int {
        guard let targets = descriptorTargets("/proc/\(pid)/fd") else { return -1 }
        var symbolizerPipes = Set<String>()
        for child in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int32(child) != nil {
            guard let stat = try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8),
                stat.contains("(llvm-symbolizer)"),
                Int32(stat.split(separator: ")").last?.split(separator: " ").dropFirst().first ?? "") == pid
            else { continue }
            symbolizerPipes.formUnion((descriptorTargets("/proc/\(child)/fd") ?? []).filter { $0.hasPrefix("pipe:") })
        }
        return targets.filter { !symbolizerPipes.contains($0) }.count
    }

    private static func descriptorTargets(_ directory: String) -> [String]? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return nil }
        return names.map { (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\($0)")) ?? $0 }
    }

    /// Whether this build runs under AddressSanitizer or ThreadSanitizer (the daemon is built the same way as the
    /// test runner, beside it).
    static let sanitized = dlsym(nil, "__asan_init") != nil || dlsym(nil, "__tsan_init") != nil

    /// Resident memory, kB.
    static func residentKilobytes(_ pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return -1 }
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
    }

    static func latestSeq(_ socket: String) async throws -> Int {
        let status = try await Harness.shakectl(["status", "--socket", socket, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(status.utf8)) as? [String: Any]
        return object?["seq"] as? Int ?? -1
    }

    @Test func thousandSubscribersAbusersAndChurnLeaveNothingBehind() async throws {
        UnixSocket.raiseDescriptorLimit(to: 16384)  // The daemon, started from here, inherits it.
        // Small queues, so that sample streams that never read are cut off within seconds.
        let configuration = try Harness.scratch("load-config") + "/shaked.yaml"
        try "clients:\n  queue_limit: 64\n  drop_limit: 512\n".write(
            toFile: configuration, atomically: true, encoding: .utf8)
        let (daemon, socket, _) = try await startDaemon(
            "load", arguments: ["--loop", "--speed", "4", "--config", configuration])
        defer { _ = daemon.stop() }
        let pid = try #require(daemon.daemonPID)
        // Warm up: one client in and out, so that first-use allocations are not counted as growth.
        do {
            let warm = try StreamClient(path: socket)
            _ = warm.readLine(timeout: 5)
        }
        try? await Task.sleep(for: .seconds(0.5))
        let baseDescriptors = Self.openDescriptors(pid)
        let baseMemory = Self.residentKilobytes(pid)

        // 1,000 subscribers.
        var subscribers: [StreamClient] = []
        for _ in 0..<1000 {
            let client = try StreamClient(path: socket)
            client.send(#"{"request":"subscribe"}"# + "\n")
            subscribers.append(client)
        }
        // Abusers: sample streams that never read, and 1 MB lines without a newline.
        var abusers: [StreamClient] = []
        for _ in 0..<5 {
            let client = try StreamClient(path: socket)
            client.send(#"{"request":"samples"}"# + "\n")
            abusers.append(client)
        }
        let megabyte = String(repeating: "x", count: 1 << 20)
        for _ in 0..<5 {
            let client = try StreamClient(path: socket)
            client.send(megabyte)
            abusers.append(client)
        }
        let reader = StreamClient.Reader(subscribers)
        reader.pump(seconds: 1)
        let firstSeq = try await Self.latestSeq(socket)

        // 10,000 connections in and out while the subscribers listen.
        var cycles = 0
        for _ in 0..<10_000 {
            guard let client = try? StreamClient(path: socket) else { continue }
            if cycles % 100 == 0 { reader.pump(seconds: 0) }
            _ = client
            cycles += 1
        }
        #expect(cycles == 10_000)
        reader.pump(seconds: 3)
        let lastSeq = try await Self.latestSeq(socket)
        #expect(lastSeq >= firstSeq + 4, "shakes kept being detected: \(firstSeq) -> \(lastSeq)")
        reader.pump(seconds: 10) { reader in reader.everyone(hasSeenUpTo: lastSeq) }

        // Every subscriber: every event from firstSeq + 1 to lastSeq, in order, none twice.
        var incomplete = 0
        for seqs in reader.seqs {
            let window = seqs.filter { $0 > firstSeq && $0 <= lastSeq }
            if window != Array((firstSeq + 1)...lastSeq) { incomplete += 1 }
        }
        #expect(incomplete == 0, "\(incomplete) of 1000 subscribers missed or reordered events")
        let lastStatus = ServerHarness.Log()
        let cutOff = await daemon.wait(timeout: 30) { _ in
            let status = (try? await Harness.shakectl(["status", "--socket", socket, "--json"])) ?? ""
            lastStatus.append(status)
            return status.contains(#""clients_cut_off":5"#)
        }
        #expect(cutOff, "the sample streams that never read were not cut off: \(lastStatus.current.last ?? "")")
        // Their connections end (the notice may not fit in a socket nobody reads).
        let sampleStreamsClosed = abusers.prefix(5).filter { $0.readAll(timeout: 5).ended }
        #expect(sampleStreamsClosed.count == 5, "the daemon closes sample streams that never read")
        #expect(abusers.suffix(5).allSatisfy { $0.readAll(timeout: 2).text.contains("line_too_long") })

        // Everyone leaves: descriptors back to the baseline, memory within a small bound.
        subscribers.removeAll()
        abusers.removeAll()
        reader.close()
        let settled = await daemon.wait(timeout: 60) { _ in Self.openDescriptors(pid) <= baseDescriptors }
        #expect(settled, "descriptors: \(baseDescriptors) before, \(Self.openDescriptors(pid)) after")
        let memory = Self.residentKilobytes(pid)
        print("LoadTests: RSS \(baseMemory) kB before, \(memory) kB after 1,000 subscribers and 10,000 cycles")
        // A sanitizer's allocator keeps freed memory (AddressSanitizer quarantines it) and ignores malloc_trim:
        // there the figure says nothing about the daemon.
        if !Self.sanitized {
            #expect(memory - baseMemory < 8 * 1024, "RSS grew from \(baseMemory) kB to \(memory) kB")
        }
        #expect(await daemon.stop() == 0, "\(daemon.stderr)")
    }

    @Test func listenersFollowADaemonRestartAndMissNothing() async throws {
        let (first, socket, directory) = try await startDaemon("restart", arguments: ["--loop", "--speed", "4"])
        let listener = try DaemonProcess(
            [Harness.product("shakectl"), "listen", "--socket", socket, "--json"], pidFile: "\(directory)/none")
        defer { _ = listener.stop() }
        func seqs() -> [Int] { listener.events.compactMap { $0["seq"] as? Int } }
        #expect(await listener.wait(timeout: 10) { _ in seqs().count >= 3 })
        #expect(await first.stop() == 0)
        let beforeRestart = seqs()
        // The new daemon runs a while before the listener finds it: what it emitted meanwhile comes by replay.
        let (second, _, _) = try await startDaemon("restart-2", socket: socket, arguments: ["--loop", "--speed", "4"])
        defer { _ = second.stop() }
        #expect(await listener.wait(timeout: 15) { _ in seqs().count >= beforeRestart.count + 4 }, "\(listener.stderr)")
        #expect(await second.stop() == 0)
        try? await Task.sleep(for: .seconds(0.5))
        let all = seqs()
        // The first run's events, then the second run's from seq 1: no gap, nothing twice.
        let restartIndex = all.indices.dropFirst().first { all[$0] <= all[$0 - 1] } ?? all.count
        let firstRun = Array(all[..<restartIndex])
        let secondRun = Array(all[restartIndex...])
        #expect(firstRun == Array(firstRun[0]...(firstRun.last ?? 0)), "\(all)")
        #expect(secondRun.first == 1, "the listener replayed the new daemon's events from the start: \(all)")
        #expect(secondRun == Array(1...(secondRun.last ?? 1)), "\(all)")
        #expect(listener.stderr.contains("reconnecting"))
    }
}

/// A blocking-connect, non-blocking-read client of the daemon's socket.
final class StreamClient {
    let fd: Int32
    private var buffered: [UInt8] = []

    init(path: String) throws {
        guard let fd = UnixSocket.connect(path) else {
            throw HarnessError("cannot connect to \(path): errno \(errno)")
        }
        self.fd = fd
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    deinit { close(fd) }

    /// Writes all of `text`, waiting for room as needed (gives up if the peer stops reading for 5 s).
    func send(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        var stalled = Date()
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written > 0 {
                offset += written
                stalled = Date()
            } else if errno == EAGAIN, Date().timeIntervalSince(stalled) < 5 {
                var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&descriptor, 1, 100)
            } else {
                return
            }
        }
    }

    /// Reads what is available; false at end of stream.
    @discardableResult
    func drain() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if count > 0 {
                buffered += chunk[..<count]
            } else {
                return count < 0 && errno == EAGAIN
            }
        }
    }

    func takeLines() -> [String] {
        guard let last = buffered.lastIndex(of: UInt8(ascii: "\n")) else { return [] }
        let lines = buffered[...last].split(separator: UInt8(ascii: "\n")).map {
            String(decoding: $0, as: UTF8.self)
        }
        buffered.removeSubrange(...last)
        return lines
    }

    func readLine(timeout: Double) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let open = drain()
            if let line = takeLines().first { return line }
            if !open { return nil }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 50)
        }
        return nil
    }

    /// Everything until the end of stream (or `timeout`), as text, and whether the stream ended.
    func readAll(timeout: Double) -> (text: String, ended: Bool) {
        let deadline = Date().addingTimeInterval(timeout)
        var text = ""
        while Date() < deadline {
            let open = drain()
            text += takeLines().joined(separator: "\n") + "\n"
            if !open { return (text, true) }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 50)
        }
        return (text, false)
    }

    /// Reads many clients at once with poll(2), keeping the seq numbers of the events each received.
    final class Reader {
        private var clients: [StreamClient]
        private(set) var seqs: [[Int]]

        init(_ clients: [StreamClient]) {
            self.clients = clients
            seqs = Array(repeating: [], count: clients.count)
        }

        func everyone(hasSeenUpTo seq: Int) -> Bool {
            seqs.allSatisfy { ($0.last ?? 0) >= seq }
        }

        /// Reads for `seconds` (0: once), or until `done` holds.
        func pump(seconds: Double, until done: (Reader) -> Bool = { _ in false }) {
            let deadline = Date().addingTimeInterval(seconds)
            repeat {
                var descriptors = clients.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
                let ready = poll(&descriptors, nfds_t(descriptors.count), 20)
                if ready > 0 {
                    for (index, descriptor) in descriptors.enumerated() where descriptor.revents != 0 {
                        clients[index].drain()
                        for line in clients[index].takeLines() {
                            guard let range = line.range(of: #""seq":"#) else { continue }
                            let digits = line[range.upperBound...].prefix { $0.isNumber }
                            if line.contains(#""event":"shake""#), let seq = Int(digits) { seqs[index].append(seq) }
                        }
                    }
                }
                if done(self) { return }
            } while Date() < deadline
        }

        func close() {
            clients.removeAll()
        }
    }
}
