// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeTestSupport
import Testing

/// A running program (the daemon, usually under umockdev-run) whose output is collected as it comes.
final class DaemonProcess: Sendable {
    private let process: Process
    /// An `NSLock` rather than a `Mutex`: on Linux, ThreadSanitizer does not see a `Mutex` passed from one thread
    /// to another that waited for it (the kernel hands it over), and reports the two output handlers as a race.
    private final class Output: @unchecked Sendable {
        private let lock = NSLock()
        private var text = (stdout: "", stderr: "")

        func withLock<Result>(_ body: (inout (stdout: String, stderr: String)) -> Result) -> Result {
            lock.withLock { body(&text) }
        }
    }
    private let collected = Output()
    /// A file the daemon's shell writes its process id into (`echo $$`), to signal the daemon itself.
    let pidFile: String

    /// With `unreadStandardOutput`: the pipe the program writes its standard output to, which nobody reads.
    private let unread: Pipe?

    /// Starts `arguments` (the first is the program's path). With `unreadStandardOutput`, its standard output is
    /// a pipe of one page that nobody reads (kept open, so a write blocks instead of failing), not collected.
    init(_ arguments: [String], pidFile: String, unreadStandardOutput: Bool = false) throws {
        self.pidFile = pidFile
        process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        let stdout = Pipe()
        let stderr = Pipe()
        if unreadStandardOutput {
            // F_SETPIPE_SZ: the smallest pipe the kernel makes, a page, fills after a few dozen lines.
            _ = fcntl(stdout.fileHandleForWriting.fileDescriptor, 1031, 4096)
            unread = stdout
        } else {
            unread = nil
        }
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        let output = collected
        // At the end of the output (empty data) the handler is removed: that cancels Foundation's dispatch source,
        // which would otherwise keep a duplicate of the descriptor open until the test run exits.
        if !unreadStandardOutput {
            stdout.fileHandleForReading.readabilityHandler = { handle in
                let data = handle.availableData
                if data.isEmpty { handle.readabilityHandler = nil }
                output.withLock { $0.stdout += String(decoding: data, as: UTF8.self) }
            }
        }
        stderr.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil }
            output.withLock { $0.stderr += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
    }

    /// Starts `command` through a shell that writes its process id to `pidFile` and then becomes the command,
    /// so that signals reach the command itself. `prefix` runs the shell (`setsid`, say).
    convenience init(
        command: [String], pidFile: String, prefix: [String] = [], unreadStandardOutput: Bool = false
    ) throws {
        let quoted = command.map { "'\($0)'" }.joined(separator: " ")
        try self.init(
            prefix + ["/bin/sh", "-c", "echo $$ > '\(pidFile)'; exec \(quoted)"], pidFile: pidFile,
            unreadStandardOutput: unreadStandardOutput)
    }

    var stdout: String { collected.withLock { $0.stdout } }
    var stderr: String { collected.withLock { $0.stderr } }

    /// The event lines printed so far, as JSON objects.
    var events: [[String: Any]] {
        stdout.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    /// `began`, `ended`, `cancelled(interrupted)`...
    var outline: [String] {
        events.map { event in
            let phase = event["phase"] as? String ?? "?"
            if phase == "cancelled" { return "cancelled(\(event["reason"] as? String ?? "?"))" }
            return phase
        }
    }

    /// Waits until `condition` holds or `timeout` seconds pass, without holding a thread of Swift's cooperative
    /// pool: the tests run on it, in-process ones (the MQTT forwarder's) need it too, and it has a thread a core.
    /// - Returns: whether it held.
    @discardableResult
    func wait(timeout: Double, until condition: (DaemonProcess) async -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(timeout)
        while ContinuousClock.now < deadline {
            if await condition(self) { return true }
            if !process.isRunning { return await condition(self) }
            try? await Task.sleep(for: Self.pollInterval)
        }
        return await condition(self)
    }

    /// How often an asynchronous wait looks again at what it waits for.
    static let pollInterval = Duration.milliseconds(20)

    /// The daemon's own process id, once its shell has written it.
    var daemonPID: Int32? {
        (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap {
            Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    /// Sends `signal` to the daemon and waits for everything to exit. - Returns: the exit status.
    func stop(signal: Int32 = SIGTERM, timeout: Double = 10) -> Int32 {
        guard process.isRunning else { return exitStatus() }
        if let pid = daemonPID {
            kill(pid, signal)
        } else {
            process.terminate()
        }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning {
            // Whatever ignores the signal is killed: a stuck child must not hang the run.
            if let pid = daemonPID { kill(pid, SIGKILL) }
            kill(process.processIdentifier, SIGKILL)
            let killDeadline = Date().addingTimeInterval(5)
            while process.isRunning, Date() < killDeadline { Thread.sleep(forTimeInterval: 0.02) }
            if !process.isRunning { _ = exitStatus() }
            return -1
        }
        // Let the pipes drain.
        Thread.sleep(forTimeInterval: 0.1)
        return exitStatus()
    }

    /// Sends `signal` to the daemon and waits for everything to exit, without holding a thread of the pool (the
    /// synchronous ``stop(signal:timeout:)`` remains for `defer`, which cannot wait). - Returns: the exit status.
    func stop(signal: Int32 = SIGTERM, timeout: Double = 10) async -> Int32 {
        guard process.isRunning else { return exitStatus() }
        if let pid = daemonPID {
            kill(pid, signal)
        } else {
            process.terminate()
        }
        if await !exited(within: timeout) {
            // Whatever ignores the signal is killed: a stuck child must not hang the run.
            if let pid = daemonPID { kill(pid, SIGKILL) }
            kill(process.processIdentifier, SIGKILL)
            if await exited(within: 5) { _ = exitStatus() }
            return -1
        }
        // Let the pipes drain.
        try? await Task.sleep(for: .milliseconds(100))
        return exitStatus()
    }

    /// Whether the program exited within `seconds`.
    private func exited(within seconds: Double) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: Self.pollInterval) }
        return !process.isRunning
    }

    /// The status of the program, which has exited. Foundation's `Process` and its run-loop source hold each
    /// other until `waitUntilExit()` is called (it returns at once now): without it neither is ever freed.
    private func exitStatus() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// Paths and helpers for the tests: the built products, a scratch folder, umockdev-run.
enum Harness {
    static let umockdevRun: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") + ["/usr/bin"] {
            let candidate = "\(directory)/umockdev-run"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }()

    static var hasUmockdev: Bool {
        if umockdevRun == nil {
            print(
                "IntegrationTests: skipping the umockdev tests: umockdev-run is not installed (apt-get install umockdev)"
            )
        }
        return umockdevRun != nil
    }

    static func product(_ name: String) -> String {
        Command.productsDirectory.appendingPathComponent(name).path
    }

    /// Starts `shaked` replaying `trace` with a socket (by default in a fresh folder), and waits for the socket.
    static func startReplayDaemon(
        _ name: String, trace: String, socket: String? = nil, arguments: [String] = []
    ) async throws -> (DaemonProcess, socket: String, directory: String) {
        let directory = try scratch(name)
        let socket = socket ?? "\(directory)/shaked.sock"
        let daemon = try DaemonProcess(
            command: [product("shaked"), "--source", "replay:\(trace)", "--socket", socket] + arguments,
            pidFile: "\(directory)/daemon.pid")
        let listening = await daemon.wait(timeout: 10) { _ in UnixSocket.isListening(socket) }
        #expect(listening, "the daemon did not create its socket: \(daemon.stderr)")
        return (daemon, socket, directory)
    }

    /// A new, empty folder for one test.
    static func scratch(_ name: String) throws -> String {
        try Scratch.directory(name)
    }

    /// Runs shakectl and fails on a non-zero status.
    @discardableResult
    static func shakectl(_ arguments: [String]) throws -> String {
        let result = try Command.run("shakectl", arguments)
        guard result.status == 0 else {
            throw HarnessError(
                "shakectl \(arguments.joined(separator: " ")) failed (\(result.status)): \(result.stderr)")
        }
        return result.stdout
    }

    /// Runs shakectl and fails on a non-zero status, without holding a thread of the pool while it runs.
    @discardableResult
    static func shakectl(_ arguments: [String]) async throws -> String {
        let result = try await Command.run("shakectl", arguments)
        guard result.status == 0 else {
            throw HarnessError(
                "shakectl \(arguments.joined(separator: " ")) failed (\(result.status)): \(result.stderr)")
        }
        return result.stdout
    }

    /// Starts the daemon under umockdev-run on a simulated device; `setup` may name extra shell lines run first.
    static func startDaemon(
        directory: String, scripts: [String], daemonArguments: [String] = [], deviceFile: Bool = true
    ) throws -> DaemonProcess {
        let pidFile = "\(directory)/daemon.pid"
        let testbedFile = "\(directory)/testbed"
        let daemon = ([product("shaked"), "--print-events", "--no-socket", "--log-level", "debug"] + daemonArguments)
            .map { "'\($0)'" }.joined(separator: " ")
        let shell = "echo $$ > '\(pidFile)'; echo \"$UMOCKDEV_DIR\" > '\(testbedFile)'; exec \(daemon)"
        var arguments = [umockdevRun!]
        if deviceFile { arguments += ["--device", "\(directory)/device.umockdev"] }
        for script in scripts {
            arguments += ["--script", "/dev/\(script)=\(directory)/\(script).script"]
        }
        arguments += ["--", "/bin/sh", "-c", shell]
        return try DaemonProcess(arguments, pidFile: pidFile)
    }
}

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
