// SPDX-License-Identifier: Apache-2.0
/// A parsed JSON value. The wire protocol's messages are small, flat objects; this parser is strict (RFC 8259),
/// bounded in nesting depth, and never traps on any input.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var number: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The number, if it is a whole number that fits an `Int`.
    public var integer: Int? {
        guard case .number(let value) = self, value == value.rounded(), abs(value) < 9e15 else { return nil }
        return Int(value)
    }

    public var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    public var object: [String: JSONValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    public var array: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    public subscript(key: String) -> JSONValue? { object?[key] }

    /// Why text is not JSON.
    public struct ParseError: Error, Sendable, Hashable {
        public var offset: Int
        public var message: String
    }

    /// The deepest nesting accepted.
    public static let maxDepth = 32

    /// Parses one JSON text (surrounding white space allowed).
    public static func parse(_ bytes: some Collection<UInt8>) throws(ParseError) -> JSONValue {
        // Read in place where the bytes are contiguous (a received line's view, an array, a string): no copy.
        let parsed =
            bytes.withContiguousStorageIfAvailable(parse(contiguous:))
            ?? Array(bytes).withUnsafeBufferPointer(parse(contiguous:))
        return try parsed.get()
    }

    public static func parse(_ text: String) throws(ParseError) -> JSONValue {
        try parse(text.utf8)
    }

    private static func parse(contiguous bytes: UnsafeBufferPointer<UInt8>) -> Result<JSONValue, ParseError> {
        var parser = Parser(bytes: bytes)
        do throws(ParseError) {
            parser.skipSpace()
            let value = try parser.value(depth: 0)
            parser.skipSpace()
            guard parser.index == parser.bytes.count else { throw parser.error("unexpected text after the value") }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }
}

/// Reads one JSON text from bytes it does not own, only while ``JSONValue/parse(_:)`` (or the fast path for event
/// lines, ``ServerMessage/parseEventLine(_:)``) runs; every read is checked against `bytes.count` first.
struct Parser {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    func error(_ message: String) -> JSONValue.ParseError {
        JSONValue.ParseError(offset: index, message: message)
    }

    mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func value(depth: Int) throws(JSONValue.ParseError) -> JSONValue {
        guard depth <= JSONValue.maxDepth else { throw error("nested too deeply") }
        guard index < bytes.count else { throw error("unexpected end") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default: return .number(try number())
        }
    }

    mutating func literal(_ word: String) throws(JSONValue.ParseError) {
        for byte in word.utf8 {
            guard index < bytes.count, bytes[index] == byte else { throw error("invalid literal") }
            index += 1
        }
    }

    mutating func object(depth: Int) throws(JSONValue.ParseError) -> JSONValue {
        index += 1
        var fields: [String: JSONValue] = [:]
        // The protocol's messages have up to about ten fields: room for them at once, not grown three times.
        fields.reserveCapacity(12)
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(fields)
        }
        while true {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a key") }
            let key = try string()
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipSpace()
            let value = try value(depth: depth + 1)
            // One lookup: the key goes in, and a value it replaced makes it a duplicate.
            guard fields.updateValue(value, forKey: key) == nil else {
                throw error("duplicate key \"\(key.prefix(40))\"")
            }
            skipSpace()
            guard index < bytes.count else { throw error("unexpected end") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "}") else { throw error("expected ',' or '}'") }
            index += 1
            return .object(fields)
        }
    }

    mutating func array(depth: Int) throws(JSONValue.ParseError) -> JSONValue {
        index += 1
        var items: [JSONValue] = []
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            skipSpace()
            items.append(try value(depth: depth + 1))
            skipSpace()
            guard index < bytes.count else { throw error("unexpected end") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "]") else { throw error("expected ',' or ']'") }
            index += 1
            return .array(items)
        }
    }

    /// A string's text. Most have no escape: their bytes are validated as UTF-8 once, where the closing quote is.
    mutating func string() throws(JSONValue.ParseError) -> String {
        index += 1
        let start = index
        var ascii = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = try validated(start..<index, ascii: ascii)
                index += 1
                return text
            }
            if byte < 0x20 { throw error("control character in a string") }
            if byte == UInt8(ascii: "\\") { return try escapedString(from: start) }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        throw error("unterminated string")
    }

    /// The bytes in `range` as text, or the error for invalid UTF-8 (at ``index``: where the run of bytes ends).
    /// ASCII, as every string the protocol itself sends, is valid as it is: taken without a validation.
    func validated(_ range: Range<Int>, ascii: Bool = false) throws(JSONValue.ParseError) -> String {
        let run = UnsafeBufferPointer(rebasing: bytes[range])
        let text = ascii ? String(decoding: run, as: UTF8.self) : String(validating: run, as: UTF8.self)
        guard let text else { throw error("invalid UTF-8 in a string") }
        return text
    }

    /// The rest of a string from the first escape on (``index`` is at it; the string's text began at `start`):
    /// each run of plain bytes is validated where it ends, as the string's own would be, and the text is
    /// gathered as UTF-8.
    mutating func escapedString(from start: Int) throws(JSONValue.ParseError) -> String {
        var utf8: [UInt8] = []
        var start = start
        func flush(_ end: Int) throws(JSONValue.ParseError) {
            guard start < end else { return }
            utf8 += try validated(start..<end).utf8
        }
        func append(_ scalar: Unicode.Scalar) {
            UTF8.encode(scalar) { utf8.append($0) }
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                try flush(index)
                index += 1
                return String(decoding: utf8, as: UTF8.self)
            }
            if byte < 0x20 { throw error("control character in a string") }
            if byte == UInt8(ascii: "\\") {
                try flush(index)
                index += 1
                guard index < bytes.count else { break }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): utf8.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): utf8.append(UInt8(ascii: "\\"))
                case UInt8(ascii: "/"): utf8.append(UInt8(ascii: "/"))
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800...0xDBFF).contains(code) {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                            bytes[index + 1] == UInt8(ascii: "u")
                        else { throw error("unpaired surrogate") }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw error("invalid \\u escape") }
                    append(scalar)
                default:
                    throw error("invalid escape")
                }
                start = index
                continue
            }
            index += 1
        }
        throw error("unterminated string")
    }

    mutating func hex4() throws(JSONValue.ParseError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid \\u escape")
            }
            value = value * 16 + digit
            index += 1
        }
        return value
    }

    mutating func number() throws(JSONValue.ParseError) -> Double {
        let start = index
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid value") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        // A whole number of up to 15 digits is exact as a Double: counted here, without text for strtod.
        let digits = bytes[start] == UInt8(ascii: "-") ? start + 1 : start
        if index - digits <= 15, !bytes[digits..<index].contains(where: { !isDigit($0) }) {
            var whole = 0
            for byte in bytes[digits..<index] { whole = whole * 10 + Int(byte - UInt8(ascii: "0")) }
            return digits > start ? -Double(whole) : Double(whole)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw error("number out of range")
        }
        return value
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
