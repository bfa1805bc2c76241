// SPDX-License-Identifier: Apache-2.0
public import Foundation
import Subprocess
import SystemPackage

/// Runs one of the package's executables, as a user would from a shell.
public struct Command: Sendable {
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// The folder holding the built products: the test runner's own folder.
    public static let productsDirectory: URL = {
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = runner.deletingLastPathComponent()
        // On some platforms the runner lives inside a bundle; climb out of it.
        while directory.pathExtension == "xctest" || directory.lastPathComponent == "Contents"
            || directory.lastPathComponent == "MacOS"
        {
            directory = directory.deletingLastPathComponent()
        }
        return directory
    }()

    /// Runs `executable` (a product name, or an absolute path) with `arguments`, feeding `input` on standard input.
    public static func run(
        _ executable: String, _ arguments: [String], input: String = "", environment: [String: String] = [:]
    ) throws -> Result {
        let process = Process()
        process.executableURL =
            executable.hasPrefix("/")
            ? URL(fileURLWithPath: executable) : productsDirectory.appendingPathComponent(executable)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        // Read both pipes while the process runs so that neither fills up.
        let group = DispatchGroup()
        nonisolated(unsafe) var out = Data()
        nonisolated(unsafe) var err = Data()
        group.enter()
        DispatchQueue.global().async {
            out = stdout.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        group.enter()
        DispatchQueue.global().async {
            err = stderr.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        process.waitUntilExit()
        group.wait()
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: out, as: UTF8.self),
            stderr: String(decoding: err, as: UTF8.self))
    }

    /// Runs `executable` as ``run(_:_:input:environment:)`` does, without holding a thread of Swift's cooperative
    /// pool while it runs: swift-subprocess collects the output and waits for the exit (shakectl's `exec` runs its
    /// commands so). The pool has a thread a core, and every test and in-process part under test (the MQTT
    /// forwarder's tasks) runs on it: a test that blocks it while a program runs (a package build: minutes) holds
    /// them all up. (Foundation's `Process` with its readability and termination handlers lost the end of some of
    /// 200 programs run at once: their callers waited for ever.)
    public static func run(
        _ executable: String, _ arguments: [String], input: String = "", environment: [String: String] = [:]
    ) async throws -> Result {
        let path =
            executable.hasPrefix("/") ? executable : productsDirectory.appendingPathComponent(executable).path
        var variables: [Subprocess.Environment.Key: String?] = [:]
        for (key, value) in environment { variables[Subprocess.Environment.Key(stringLiteral: key)] = value }
        let result = try await Subprocess.run(
            .path(FilePath(path)), arguments: Arguments(arguments), environment: .inherit.updating(variables),
            input: .string(input), output: .string(limit: outputLimit), error: .string(limit: outputLimit))
        let status: Int32
        switch result.terminationStatus {
        case .exited(let code): status = Int32(code)
        case .signaled(let signal): status = 128 + Int32(signal)
        }
        return Result(
            status: status, stdout: result.standardOutput, stderr: result.standardError)
    }

    /// The most of a program's standard output or error that ``run(_:_:input:environment:)`` keeps (a package
    /// build's log is a few megabytes).
    static let outputLimit = 64 << 20
}

extension Process {
    /// Waits for the process to exit without holding a thread of Swift's cooperative pool (`waitUntilExit()`
    /// blocks its caller's thread): it looks every 10 ms.
    public func exited() async {
        while isRunning { try? await Task.sleep(for: .milliseconds(10)) }
        // Returns at once now; frees the run-loop source that Foundation's `Process` and it keep of each other.
        waitUntilExit()
    }
}
