// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeTestSupport
import Testing

/// Who a client is comes from the kernel, as it was when the client connected: a process that gains a group
/// after connecting does not gain the rights of that group (nor does one whose pid is reused by another process).
@Suite(
    .serialized,
    .enabled(
        if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") && getgrnam("users") != nil,
        "needs root, setpriv, /usr/bin/python3 and the group users"))
struct PeerIdentityTests {
    /// Connects, reports `connected`, optionally joins `JOIN` (a gid) and reports `joined`, then asks for raw
    /// samples and prints the first line of the answer.
    static let script = """
        import json, os, socket, sys
        s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
        print("connected", os.getgroups(), flush=True)
        if len(sys.argv) > 2:
            os.setgroups([int(sys.argv[2])]); print("joined", os.getgroups(), flush=True)
        f = s.makefile("rw"); f.readline()
        f.write('{"request":"samples"}\\n'); f.flush()
        print("answer", f.readline().strip(), flush=True)
        """

    /// Whether the client has printed its whole answer line: the line can reach the pipe in more than one write,
    /// and a check made between them saw only "answer ".
    static func hasAnswered(_ stdout: String) -> Bool {
        guard let answer = stdout.range(of: "answer ") else { return false }
        return stdout[answer.upperBound...].contains("\n")
    }

    /// The client as the unprivileged user nobody, with the given groups and, with `join`, the right to
    /// change them later.
    static func client(_ socket: String, groups: [UInt32], join: UInt32?, directory: String) throws -> DaemonProcess {
        var command = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534"]
        command += groups.isEmpty ? ["--clear-groups"] : ["--groups=\(groups.map(String.init).joined(separator: ","))"]
        if join != nil { command += ["--inh-caps=+setgid", "--ambient-caps=+setgid"] }
        command += ["/usr/bin/python3", "-c", script, socket] + (join.map { [String($0)] } ?? [])
        // Started directly (no shell: the script has quotes of its own).
        return try DaemonProcess(command, pidFile: "\(directory)/no-pid-file")
    }

    @Test func groupsJoinedAfterConnectingGrantNothing() async throws {
        let users = try #require(getgrnam("users")).pointee.gr_gid
        let trace = Fixtures.path("walking.csv")
        let (daemon, socket, directory) = try await Harness.startReplayDaemon(
            "peer-groups", trace: trace, arguments: ["--loop", "--admin-group", "users"])
        defer { _ = daemon.stop(signal: SIGTERM) }

        // A member of the admin group at connect time streams samples: the group is what grants it.
        let member = try Self.client(socket, groups: [users], join: nil, directory: directory)
        defer { _ = member.stop() }
        let memberAnswered = await member.wait(timeout: 10) { Self.hasAnswered($0.stdout) }
        #expect(memberAnswered, "\(member.stdout)\(member.stderr)")
        #expect(member.stdout.contains(#"answer {"event":"ok","request":"samples"}"#), "\(member.stdout)")

        // Another connects without it and joins the group while the daemon has not yet accepted the
        // connection (it is stopped): what the daemon sees is the group list of the moment of connecting.
        let pid = try #require(daemon.daemonPID)
        #expect(kill(pid, SIGSTOP) == 0)
        let joiner = try Self.client(socket, groups: [], join: users, directory: directory)
        defer { _ = joiner.stop() }
        let joined = await joiner.wait(timeout: 10) { $0.stdout.contains("joined [\(users)]") }
        #expect(kill(pid, SIGCONT) == 0)
        #expect(joined, "\(joiner.stdout)\(joiner.stderr)")
        let joinerAnswered = await joiner.wait(timeout: 10) { Self.hasAnswered($0.stdout) }
        #expect(joinerAnswered, "\(joiner.stdout)\(joiner.stderr)")
        #expect(joiner.stdout.contains(#"answer {"event":"error","error":"forbidden""#), "\(joiner.stdout)")
    }

    /// A refused `record` leaves no file and no header behind, and says what would allow it.
    @Test func aRefusedRecordingWritesNothingAndSaysWhatWouldAllowIt() async throws {
        let (daemon, socket, directory) = try await Harness.startReplayDaemon(
            "record-refused", trace: Fixtures.path("walking.csv"), arguments: ["--loop"])
        defer { _ = daemon.stop(signal: SIGTERM) }
        chmod(directory, 0o777)
        let file = "\(directory)/refused.csv"
        let shakectl = Harness.product("shakectl")
        for out in [file, "-"] {
            let result = try await Command.run(
                "/usr/bin/setpriv",
                [
                    "--reuid=65534", "--regid=65534", "--clear-groups", shakectl, "record", "--socket", socket,
                    "--seconds", "1", "--out", out,
                ])
            #expect(result.status == 1)
            #expect(result.stdout.isEmpty, "\(result.stdout)")
            #expect(result.stderr.contains("the daemon refused"), "\(result.stderr)")
            #expect(result.stderr.contains("usermod -aG shaked-admin"), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: file))
        }
    }
}
