// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A uinput call that failed: which, on what path, and the errno.
public struct UInputError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The call that failed (`open`, `UI_DEV_CREATE`, `write`…).
    public var operation: String
    public var path: String
    public var errno: Int32

    public init(operation: String, path: String, errno: Int32) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    public var description: String {
        var text = "\(operation) on \(path) failed: \(String(cString: strerror(errno)))"
        if operation == "open", errno == EACCES || errno == EPERM {
            text += " (uinput is root-only unless a udev rule gives a group access; see docs/install.md)"
        } else if operation == "open", errno == ENOENT {
            text += " (the uinput module is not loaded: modprobe uinput)"
        }
        return text
    }
}
