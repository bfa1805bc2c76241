#if canImport(Glibc)
    import Glibc
#endif

/// A program run to its end with `posix_spawn`, its standard input fed from memory when asked.
enum ChildProcess {
    struct Failure: Error, CustomStringConvertible {
        var code: Int32
        var description: String { String(cString: strerror(code)) }
    }

    /// Runs `path` with `arguments` in `environment`, writes `input` (when given) to its standard input, and
    /// waits for it.
    /// - Returns: its exit status, or the number of the signal that ended it.
    static func run(
        _ path: String, _ arguments: [String], environment: [String: String], input: [UInt8]? = nil
    ) throws(Failure) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var ends: [Int32] = [-1, -1]
        if input != nil {
            guard pipe(&ends) == 0 else { throw Failure(code: errno) }
            // The child keeps only its standard input: with the writing end open it would never see the end.
            posix_spawn_file_actions_adddup2(&actions, ends[0], STDIN_FILENO)
            posix_spawn_file_actions_addclose(&actions, ends[0])
            posix_spawn_file_actions_addclose(&actions, ends[1])
        }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, envp)
        if input != nil { close(ends[0]) }
        guard spawned == 0 else {
            if input != nil { close(ends[1]) }
            throw Failure(code: spawned)
        }
        if let input {
            var offset = 0
            while offset < input.count {
                let count = input.withUnsafeBytes { write(ends[1], $0.baseAddress! + offset, $0.count - offset) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }  // The program stopped reading: its status tells.
                offset += count
            }
            close(ends[1])
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw Failure(code: errno) }
        }
        // WIFEXITED: the low 7 bits are 0 and the status is in the next 8; else they hold the signal.
        return status & 0x7F == 0 ? (status >> 8) & 0xFF : status & 0x7F
    }
}
