// SPDX-License-Identifier: Apache-2.0
import NumberFormat

/// Writes one JSON object on one line, keys in the order they are added.
///
/// Events are small, flat objects; this keeps their field order stable and readable (`event`, `phase`, `time`
/// first) without a JSON library.
public struct JSONObjectWriter: Sendable {
    private var text = "{"
    private var isEmpty = true

    public init() {}

    public mutating func add(_ key: String, _ value: String) {
        appendKey(key)
        Self.appendQuoted(value, to: &text)
    }

    /// Adds a number, rounded to `decimals` places. Non-finite numbers, which JSON cannot carry, become `null`.
    public mutating func add(_ key: String, _ value: Double, decimals: Int = 3) {
        appendKey(key)
        text += Self.format(value, decimals: decimals)
    }

    public mutating func add(_ key: String, _ value: Int) {
        appendKey(key)
        text += String(value)
    }

    public mutating func add(_ key: String, _ value: Bool) {
        appendKey(key)
        text += value ? "true" : "false"
    }

    /// Adds a value that is already JSON text (an object or array written elsewhere).
    public mutating func add(_ key: String, rawJSON: String) {
        appendKey(key)
        text += rawJSON
    }

    /// The finished object, without a trailing newline.
    public var result: String { text + "}" }

    private mutating func appendKey(_ key: String) {
        if !isEmpty { text += "," }
        isEmpty = false
        Self.appendQuoted(key, to: &text)
        text += ":"
    }

    /// Formats a number with at most `decimals` places and no trailing zeros (`2.31`, `7`, `-0.5`); `null` for
    /// the non-finite numbers JSON cannot carry.
    public static func format(_ value: Double, decimals: Int) -> String {
        value.isFinite ? DecimalText.format(value, decimals: decimals) : "null"
    }

    /// A string as a JSON string literal, quotes included (for arrays written by hand).
    public static func quoted(_ string: String) -> String {
        var text = ""
        appendQuoted(string, to: &text)
        return text
    }

    static func appendQuoted(_ string: String, to text: inout String) {
        text += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
