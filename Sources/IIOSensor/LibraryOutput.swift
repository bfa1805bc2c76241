// SPDX-License-Identifier: Apache-2.0
import Logging
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// libiio 0.24 prints some warnings and errors on standard error itself, behind the daemon's logger (and into
/// the journal as unstructured lines). Around the libiio calls that do, descriptor 2 is pointed at a pipe; after
/// the call it is restored, libiio's lines go through the logger at a level that fits them, and anything else
/// written to standard error meanwhile (another thread's log line) is passed on unchanged.
///
/// Descriptor 2 is shared by all threads, so the redirections are serialized by a lock; a line another thread
/// writes during one is delayed, never lost (the pipe holds 64 KiB, and a writer that fills it waits until the
/// call returns and the pipe is drained).
struct LibraryOutput: Sendable {
    let logger: Logger?
    /// Serializes the redirections (a plain mutex: the calls inside return values that are not Sendable).
    private nonisolated(unsafe) static let lock: UnsafeMutablePointer<pthread_mutex_t> = {
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        return mutex
    }()

    init(logger: Logger?) {
        self.logger = logger
    }

    /// Runs `body` with standard error captured, then logs what libiio wrote.
    /// - Parameter errorsAreExpected: libiio's errors are logged at debug level (stopping a vanished device).
    @discardableResult
    func capture<Result>(during operation: String, errorsAreExpected: Bool = false, _ body: () -> Result) -> Result {
        guard let logger else { return body() }
        pthread_mutex_lock(Self.lock)
        let (result, text) = Self.redirected(body)
        pthread_mutex_unlock(Self.lock)
        guard let text, !text.isEmpty else { return result }
        var passOn = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if let (level, message) = Self.classify(String(line), errorsAreExpected: errorsAreExpected) {
                logger.log(
                    level: level, "libiio reported", metadata: ["libiio": "\(message)", "operation": "\(operation)"])
            } else {
                passOn += line + "\n"
            }
        }
        if !passOn.isEmpty { Self.writeAll(passOn, to: 2) }
        return result
    }

    /// What a line libiio printed means: its level and text; nil for a line that is not libiio's.
    static func classify(_ line: String, errorsAreExpected: Bool) -> (Logger.Level, String)? {
        let prefixes: [(String, Logger.Level)] = [
            ("ERROR: ", errorsAreExpected ? .debug : .error), ("WARNING: ", .warning), ("INFO: ", .debug),
            ("DEBUG: ", .debug),
        ]
        for (prefix, level) in prefixes where line.hasPrefix(prefix) {
            let message = String(line.dropFirst(prefix.count))
            // Said on every kernel without ADI's mmap buffer interface: reads use read(2), which is all we need.
            if message.hasPrefix("High-speed mode not enabled") { return (.debug, message) }
            return (level, message)
        }
        return nil
    }

    /// Runs `body` with descriptor 2 on a pipe. - Returns: its result and what was written (nil when the pipe
    /// could not be set up: then nothing was redirected).
    private static func redirected<Result>(_ body: () -> Result) -> (Result, String?) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return (body(), nil) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        // Non-blocking: a child another thread started meanwhile may still hold the write end.
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        let saved = fcntl(2, F_DUPFD_CLOEXEC, 3)
        guard saved >= 0, dup2(fds[1], 2) >= 0 else {
            if saved >= 0 { Glibc.close(saved) }
            Glibc.close(fds[0])
            Glibc.close(fds[1])
            return (body(), nil)
        }
        Glibc.close(fds[1])
        let result = body()
        fflush(nil)
        _ = dup2(saved, 2)
        Glibc.close(saved)
        // What was written is in the pipe now: read it all.
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let pipe = FileDescriptor(rawValue: fds[0])
        while let count = try? chunk.withUnsafeMutableBytes({ try pipe.read(into: $0) }), count > 0 {
            bytes += chunk[0..<count]
        }
        Glibc.close(fds[0])
        return (result, String(decoding: bytes, as: UTF8.self))
    }

    private static func writeAll(_ text: String, to fd: Int32) {
        _ = try? Array(text.utf8).withUnsafeBytes { try FileDescriptor(rawValue: fd).writeAll($0) }
    }
}
