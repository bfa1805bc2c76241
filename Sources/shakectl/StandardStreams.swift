import Foundation

/// Writing to standard output and standard error without buffering surprises.
enum StandardStreams {
    static func printError(_ message: String) {
        _ = write("shakectl: \(message)\n", to: .standardError)
    }

    /// Writes text; false when the other end is gone (a closed pipe), which is not worth a crash.
    static func write(_ text: String, to handle: FileHandle) -> Bool {
        (try? handle.write(contentsOf: Data(text.utf8))) != nil
    }
}

/// An error that has already been explained to the user; exits with the given code.
struct Failure: Error {
    var exitCode: Int32
}
