// SPDX-License-Identifier: Apache-2.0
import NumberFormat

/// A configuration that cannot be used, naming the file, the key and what is allowed.
public struct ConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    public var file: String
    /// The 1-based line, when known.
    public var line: Int?
    /// The dotted key (`detector.threshold`), or nil for the file as a whole.
    public var key: String?
    public var message: String

    public init(file: String, line: Int? = nil, key: String? = nil, message: String) {
        self.file = file
        self.line = line
        self.key = key
        self.message = message
    }

    /// The error as one line, control characters escaped (``PrintableText``): the message may quote a value,
    /// and the file and key come from names on disk and in the file.
    public var description: String {
        var text = file
        if let line { text += ":\(line)" }
        text += ": "
        if let key { text += "\(key): " }
        return PrintableText.escaping(text + message)
    }
}
