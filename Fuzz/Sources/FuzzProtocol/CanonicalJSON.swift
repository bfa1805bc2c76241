// SPDX-License-Identifier: Apache-2.0
import ShakeProtocol

/// Writes a ``JSONValue`` back as JSON text, so that the fuzzer can check that what the parser accepted survives
/// a round trip: keys sorted, numbers in Swift's shortest exact form, strings escaped as RFC 8259 requires.
enum CanonicalJSON {
    static func render(_ value: JSONValue) -> String {
        var text = ""
        write(value, to: &text)
        return text
    }

    private static func write(_ value: JSONValue, to text: inout String) {
        switch value {
        case .null:
            text += "null"
        case .bool(let flag):
            text += flag ? "true" : "false"
        case .number(let number):
            // The parser only yields finite numbers; `description` of a finite Double is valid JSON
            // (`1.0`, `-0.0`, `1e-05`, `5e+20`) and reads back as the same Double.
            text += number.description
        case .string(let string):
            quote(string, to: &text)
        case .array(let items):
            text += "["
            for (position, item) in items.enumerated() {
                if position > 0 { text += "," }
                write(item, to: &text)
            }
            text += "]"
        case .object(let fields):
            text += "{"
            for (position, key) in fields.keys.sorted().enumerated() {
                if position > 0 { text += "," }
                quote(key, to: &text)
                text += ":"
                write(fields[key]!, to: &text)
            }
            text += "}"
        }
    }

    private static func quote(_ string: String, to text: inout String) {
        text += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
