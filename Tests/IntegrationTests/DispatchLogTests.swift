// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeTestSupport
import Testing

/// libdispatch asks for nice -4 for the thread that runs its timers, which the kernel refuses to an unprivileged
/// user, and logs "Failed to set thread priority for worker thread" to syslog (the journal) for it: once for every
/// run of shakectl. shakectl turns that log off; what it would send, strace sees as a connection to /dev/log.
@Suite(
    .enabled(
        if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/strace")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "needs root, strace and setpriv"))
struct DispatchLogTests {
    @Test func shakectlAsAnUnprivilegedUserWritesNothingToTheSystemLog() async throws {
        let directory = try Harness.scratch("dispatch-log")
        let trace = "\(directory)/strace.txt"
        // A command that starts libdispatch's timer thread: listen waits between tries to reach a daemon whose
        // socket is missing, until timeout ends it. Run as nobody.
        let result = try await Command.run(
            "/usr/bin/strace",
            [
                "-f", "-e", "trace=connect,setpriority", "-o", trace, "/usr/bin/timeout", "5", "/usr/bin/setpriv",
                "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/env", "-u", "LIBDISPATCH_LOG",
                Harness.product("shakectl"), "listen", "--socket", "/nonexistent/shaked.sock",
            ])
        #expect(result.status != 0)
        let calls = try String(contentsOfFile: trace, encoding: .utf8)
        // The refusal happened (else this test shows nothing)... With other threads running, strace may split the
        // call over two lines, "setpriority(PRIO_PROCESS, 0, -4 <unfinished ...>" and, later, the same thread's
        // "<... setpriority resumed>) = -1 EACCES".
        var asking = Set<Substring>()
        var refused = false
        for line in calls.split(separator: "\n") {
            let thread = line.prefix { $0 != " " }
            if line.contains("setpriority(PRIO_PROCESS, 0, -4)") && line.contains("EACCES") { refused = true }
            if line.contains("setpriority(PRIO_PROCESS, 0, -4 <unfinished") { asking.insert(thread) }
            if line.contains("<... setpriority resumed>"), asking.contains(thread), line.contains("EACCES") {
                refused = true
            }
        }
        #expect(refused, "\(calls)")
        // ...and was not logged.
        #expect(!calls.contains("/dev/log"), "\(calls)")
    }
}
