// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import ShakeClient
import ShakeProtocol
import ShakeServer
import ShakeTestSupport
import Synchronization
import Testing

/// Creating the socket file: the real length limit, paths that are not files, folders others could tamper with,
/// the mode from before anyone can connect, and the process's umask left alone.
@Suite(.serialized)
struct SocketFileTests {
    static func folder(_ name: String, length: Int? = nil) throws -> String {
        var path = try Scratch.directory(name)
        if let length { path += "/" + String(repeating: "d", count: max(1, length - path.utf8.count - 1)) }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        chmod(path, 0o755)
        return path
    }

    static func server() -> ShakeServer {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return ShakeServer(hooks: .init(status: { .init(sensor: .none, shaking: false) }), logger: logger)
    }

    @Test func theRuleNamesTheRealLimit() {
        #expect(SocketPath.maxLength == 107)
        #expect(SocketPath.problem(with: "/run/shaked/shaked.sock") == nil)
        #expect(SocketPath.problem(with: "") == "empty; expected an absolute path")
        #expect(SocketPath.problem(with: "shaked.sock") == "'shaked.sock' is relative; expected an absolute path")
        let long = "/" + String(repeating: "x", count: 107)
        #expect(SocketPath.problem(with: long) == "108 bytes long; a Unix socket's path has at most 107 bytes")
        #expect(SocketPath.problem(with: String(long.dropLast())) == nil)
    }

    /// 104 to 107 bytes are valid on Linux, though shorter than other systems allow: the daemon binds them.
    @Test(arguments: [104, 107])
    func aPathUpToTheLimitIsServed(length: Int) async throws {
        let folder = try Self.folder("long\(length)", length: length - 12)
        let path = folder + "/shaked.sock"
        let padded =
            path.utf8.count < length
            ? folder + "/" + String(repeating: "s", count: length - folder.utf8.count - 1) : path
        #expect(padded.utf8.count == length)
        let server = Self.server()
        try await server.start(.path(padded, mode: 0o600))
        let connection = try await ShakeClient(socketPath: padded).connect()
        #expect(connection.hello.sensor.source == "none")
        connection.close()
        await server.shutdown()
        try? FileManager.default.removeItem(atPath: folder)
    }

    @Test func theModeHoldsFromTheStartAndTheGroupIsSet() async throws {
        let folder = try Self.folder("mode")
        let path = folder + "/shaked.sock"
        let server = Self.server()
        let group = getgid()
        try await server.start(.path(path, mode: 0o640, group: group))
        var info = stat()
        #expect(lstat(path, &info) == 0)
        #expect(info.st_mode & S_IFMT == S_IFSOCK)
        #expect(info.st_mode & 0o777 == 0o640)
        #expect(info.st_gid == group)
        await server.shutdown()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// The umask belongs to the whole process: a socket made by setting it around `bind` gave whatever another
    /// thread created in that moment the socket's mode (a test folder came out writable by everyone). A thread
    /// reads the umask from /proc while sockets are made, many times, and it must never change.
    @Test func makingTheSocketLeavesTheProcessUmaskAlone() async throws {
        let folder = try Self.folder("umask")
        let path = folder + "/shaked.sock"
        @Sendable func currentUmask() -> String? {
            guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
            return status.split(separator: "\n").first { $0.hasPrefix("Umask:") }.map(String.init)
        }
        let before = currentUmask()
        #expect(before != nil)
        final class Watch: Sendable {
            let seen = Mutex<Set<String>>([])
            let done = Atomic(false)
        }
        let watch = Watch()
        // Ends when the watcher's last look is recorded.
        let (finished, ending) = AsyncStream<Never>.makeStream()
        let watcher = Thread {
            while !watch.done.load(ordering: .relaxed) {
                if let value = currentUmask() { _ = watch.seen.withLock { $0.insert(value) } }
            }
            ending.finish()
        }
        watcher.start()
        for _ in 0..<40 {
            let server = Self.server()
            try await server.start(.path(path, mode: 0o600))
            await server.shutdown()
        }
        watch.done.store(true, ordering: .relaxed)
        for await _ in finished {}
        #expect(watch.seen.withLock { $0 } == [before!])
        #expect(currentUmask() == before)
        try? FileManager.default.removeItem(atPath: folder)
    }

    @Test func aFolderEveryoneMayWriteIsRefusedUnlessSticky() async throws {
        let folder = try Self.folder("open")
        let path = folder + "/shaked.sock"
        chmod(folder, 0o777)
        let server = Self.server()
        await #expect {
            try await server.start(.path(path))
        } throws: { error in
            "\(error)".contains("writable by every user and has no sticky bit")
        }
        await server.shutdown()
        #expect(!FileManager.default.fileExists(atPath: path))
        chmod(folder, 0o1777)  // As /tmp: others cannot remove or rename what is not theirs.
        let sticky = Self.server()
        try await sticky.start(.path(path))
        await sticky.shutdown()
        try? FileManager.default.removeItem(atPath: folder)
    }

    @Test(arguments: ["", "relative.sock"])
    func aPathThatIsNotAFileIsRefused(path: String) async {
        let server = Self.server()
        await #expect(throws: SocketFile.Unavailable.self) { try await server.start(.path(path)) }
        await server.shutdown()
    }
}
