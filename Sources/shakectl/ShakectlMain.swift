// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
    import Glibc
#endif

/// shakectl's entry point: quiets libdispatch's own log, then runs the command.
///
/// libdispatch gives the thread that runs its timers the highest of its priorities (nice -4) and logs "Failed to
/// set thread priority for worker thread" to syslog — the journal — when the kernel refuses that to an
/// unprivileged user, which it always does: one line for every run of shakectl, and for every start of a user
/// unit that runs it (shake to undo). The thread runs at the user's nice value all the same. `LIBDISPATCH_LOG=NO`
/// turns that log off (it carries only libdispatch's reports of its own and its callers' bugs besides); set
/// `LIBDISPATCH_LOG=stderr` to see them.
@main
enum ShakectlMain {
    /// Whether shakectl set `LIBDISPATCH_LOG` itself (it was not set): the commands `exec` runs do not inherit it.
    nonisolated(unsafe) static var quietedDispatchLog = false

    static func main() async {
        // Before any thread is started: the environment is the process's alone here.
        if getenv("LIBDISPATCH_LOG") == nil {
            setenv("LIBDISPATCH_LOG", "NO", 1)
            quietedDispatchLog = true
        }
        await Shakectl.main()
    }
}
