// SPDX-License-Identifier: Apache-2.0
/// A trace file that cannot be read, with where and why.
public struct TraceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file as the caller named it.
    public var file: String
    /// The 1-based line, or nil when the problem is with the file as a whole.
    public var line: Int?
    public var message: String

    public init(file: String, line: Int? = nil, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    public var description: String {
        if let line { "\(file):\(line): \(message)" } else { "\(file): \(message)" }
    }
}
