// SPDX-License-Identifier: Apache-2.0
import NumberFormat
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// Writing to standard output and standard error without buffering surprises.
enum StandardStreams {
    /// Writes `shakectl: MESSAGE` on standard error, with control characters escaped: messages quote file names,
    /// file contents and what the daemon says, none of which may move the cursor or recolour a terminal.
    static func printError(_ message: String) {
        _ = write("shakectl: \(printable(message))\n", to: .standardError)
    }

    /// `text` with every control character but newline and tab (C0, DEL and C1) written as `\u{XX}`.
    static func printable(_ text: String) -> String {
        PrintableText.escaping(text, keepingLineBreaks: true)
    }

    /// Where text goes: a file descriptor.
    struct Output: Sendable {
        var descriptor: Int32
        static let standardOutput = Output(descriptor: STDOUT_FILENO)
        static let standardError = Output(descriptor: STDERR_FILENO)
    }

    /// Writes text, all of it; false when the other end is gone (a closed pipe), which is not worth a crash.
    static func write(_ text: String, to output: Output) -> Bool {
        let bytes = Array(text.utf8)
        do {
            _ = try bytes.withUnsafeBytes { try FileDescriptor(rawValue: output.descriptor).writeAll($0) }
            return true
        } catch {
            return false
        }
    }
}

/// An error that has already been explained to the user; exits with the given code.
struct Failure: Error {
    var exitCode: Int32
}

/// `text` followed by spaces up to `width` characters (cut to `width` when longer, as a column must be).
func padded(_ text: String, to width: Int) -> String {
    text.count >= width ? String(text.prefix(width)) : text + String(repeating: " ", count: width - text.count)
}
