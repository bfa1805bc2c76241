// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
    import Glibc
#endif

/// A detached POSIX thread named `name` running `body`, the one blocking thread its owner keeps (the C library's
/// own, so that no classic Foundation `Thread` is linked). The bus and session watchers here need it, and so does
/// the daemon's source service, which depends on this module already: one copy, with package access.
/// - Returns: false when the system could not start a thread.
package func startThread(name: String, _ body: @escaping @Sendable () -> Void) -> Bool {
    final class Work {
        let name: String
        let body: @Sendable () -> Void
        init(_ name: String, _ body: @escaping @Sendable () -> Void) { (self.name, self.body) = (name, body) }
    }
    let work = Unmanaged.passRetained(Work(name, body)).toOpaque()
    var thread = pthread_t()
    let started = pthread_create(
        &thread, nil,
        { raw in
            guard let raw else { return nil }
            let work = Unmanaged<Work>.fromOpaque(raw).takeRetainedValue()
            // The name `ps -L` and the journal show (the kernel keeps 15 bytes of it).
            let comm = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
            if comm >= 0 {
                _ = Array(work.name.utf8.prefix(15)).withUnsafeBytes { write(comm, $0.baseAddress, $0.count) }
                close(comm)
            }
            work.body()
            return nil
        }, work)
    guard started == 0 else {
        Unmanaged<Work>.fromOpaque(work).release()
        return false
    }
    pthread_detach(thread)
    return true
}
