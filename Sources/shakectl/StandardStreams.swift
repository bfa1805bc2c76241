import Foundation

/// Writing to standard output and standard error without buffering surprises.
enum StandardStreams {
    static func printError(_ message: String) {
        FileHandle.standardError.write(Data("shakectl: \(message)\n".utf8))
    }
}

/// An error that has already been explained to the user; exits with the given code.
struct Failure: Error {
    var exitCode: Int32
}
