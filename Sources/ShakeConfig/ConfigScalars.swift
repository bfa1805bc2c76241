// SPDX-License-Identifier: Apache-2.0
import NumberFormat

/// Values that every YAML tool reads alike, or a refusal that says why not.
///
/// The file is read as YAML 1.2, but many tools that write YAML (PyYAML, and whatever an administrator copies
/// values from) follow YAML 1.1, where `0660` is octal, `yes`, `on` and `no` are booleans, `1_000` is a number and
/// `1e2` is text. A value that the two would read differently is refused, naming what each makes of it and what
/// to write instead, so that a file means one thing whoever edited it last:
/// - a boolean is `true` or `false`;
/// - a number is decimal: digits with an optional sign and decimal point, without a leading zero, an exponent,
///   underscores, or a `0x`/`0o` prefix;
/// - a permission mode (`socket.mode`) is octal with a leading zero (`"0660"`, quoted or not, or `0o660`); a bare
///   `432` is what YAML 1.1 tools write for `0660`;
/// - `~`, `null` or nothing at all where a value is expected is no value, not the text.
extension NodeReader {
    /// The text of a scalar that has a value: a plain null (`~`, `null`, nothing) is refused.
    func string(_ node: Node, key: String) throws(ConfigError) -> String {
        guard let scalar = node.scalar else { throw error(node, key: key, "expected a single value") }
        if let problem = Self.nullProblem(scalar) { throw error(node, key: key, problem) }
        return scalar.string
    }

    func bool(_ node: Node, key: String) throws(ConfigError) -> Bool {
        guard let scalar = node.scalar, scalar.style == .plain else {
            throw error(node, key: key, "expected true or false, found '\(node.scalar?.string ?? "a collection")'")
        }
        if case .bool(let value) = scalar.resolved { return value }
        switch scalar.string.lowercased() {
        case "yes", "y", "on", "no", "n", "off":
            let meaning = ["yes", "y", "on"].contains(scalar.string.lowercased())
            throw error(
                node, key: key,
                "'\(scalar.string)' is \(meaning) to YAML 1.1 tools but text to YAML 1.2 ones; write \(meaning)")
        default:
            if let problem = Self.nullProblem(scalar) { throw error(node, key: key, problem) }
            throw error(node, key: key, "expected true or false, found '\(scalar.string)'")
        }
    }

    /// A decimal number, finite.
    func number(_ node: Node, key: String) throws(ConfigError) -> Double {
        guard let scalar = node.scalar, scalar.style == .plain else {
            throw error(node, key: key, "expected a number, found '\(node.scalar?.string ?? "a collection")'")
        }
        switch Self.decimal(scalar.string) {
        case .number(let value): return value
        case .ambiguous(let problem): throw error(node, key: key, problem)
        case .notANumber:
            if let problem = Self.nullProblem(scalar) { throw error(node, key: key, problem) }
            throw error(node, key: key, "expected a number, found '\(scalar.string)'")
        }
    }

    /// A whole decimal number in `range`.
    func integer(_ node: Node, key: String, in range: ClosedRange<Int>) throws(ConfigError) -> Int {
        let number = try number(node, key: key)
        guard number == number.rounded(), let value = Int(exactly: number) else {
            throw error(node, key: key, "expected a whole number, found '\(node.scalar?.string ?? "")'")
        }
        guard range.contains(value) else {
            throw error(node, key: key, "\(value) is out of range; allowed: \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// A permission mode, octal, at most 0777.
    func mode(_ node: Node, key: String) throws(ConfigError) -> UInt32 {
        let text = try string(node, key: key)
        let isPlain = node.scalar?.style == .plain
        if isPlain, !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            !text.hasPrefix("0")
        {
            // A plain 432 is a decimal number to every YAML tool; as a mode it was most likely 0660 rewritten.
            let decimal = UInt32(text).flatMap { $0 <= 0o777 ? $0 : nil }
            let suggestion =
                decimal.map { "\"0\(String($0, radix: 8))\" (what \(text) is as a number) or \"0\(text)\"" }
                ?? "\"0\(text)\""
            throw error(
                node, key: key,
                "'\(text)' is a decimal number to YAML (tools that rewrite the file write the mode 0660 as 432), "
                    + "not an octal mode; write the mode quoted, in octal with a leading zero: \(suggestion)")
        }
        guard let mode = ShakedConfiguration.SocketSection.mode(parsing: text) else {
            throw error(node, key: key, "expected an octal mode such as \"0660\", found '\(text)'")
        }
        return mode
    }

    /// Why a plain scalar is no value (YAML's null), or nil when it has one.
    static func nullProblem(_ scalar: Node.Scalar) -> String? {
        guard scalar.resolved == .null else { return nil }
        if scalar.string.isEmpty { return "no value given; write one, or leave the key out for its default" }
        return "'\(scalar.string)' is YAML's null (no value); write a value, quote it if the text is meant, "
            + "or leave the key out for its default"
    }

    /// What a plain scalar is as a decimal number.
    enum Decimal: Equatable {
        case number(Double)
        /// A number to some YAML tools, but not the same one (or text) to others: why, and what to write.
        case ambiguous(String)
        case notANumber
    }

    /// `[-+]?` digits with an optional decimal point (`12`, `-0.5`, `.5`, `3.`) and, with a point, an exponent
    /// with a sign (`2.5e-3`, the one form YAML 1.1 and 1.2 read alike); finite. What YAML 1.1 or 1.2 would also
    /// read as a number, but differently or as text, is ``Decimal/ambiguous(_:)``.
    static func decimal(_ text: String) -> Decimal {
        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        let bytes = Array(text.utf8)
        var index = 0
        let sign = bytes.first == UInt8(ascii: "-") ? "-" : ""
        if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") { index += 1 }
        let wholeStart = index
        while index < bytes.count && isDigit(bytes[index]) { index += 1 }
        let whole = bytes[wholeStart..<index]
        var point = false
        var fractionDigits = 0
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            point = true
            index += 1
            while index < bytes.count && isDigit(bytes[index]) {
                (index, fractionDigits) = (index + 1, fractionDigits + 1)
            }
        }
        var exponent = false
        var exponentSigned = false
        var exponentDigits = 0
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            exponent = true
            index += 1
            if index < bytes.count && (bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+")) {
                exponentSigned = true
                index += 1
            }
            while index < bytes.count && isDigit(bytes[index]) {
                (index, exponentDigits) = (index + 1, exponentDigits + 1)
            }
        }
        if index == bytes.count && whole.count + fractionDigits > 0 && (!exponent || exponentDigits > 0) {
            guard let value = Double(text), value.isFinite else { return .notANumber }
            let number = DecimalText.format(value)
            if !point && !exponent && whole.count > 1 && whole.first == UInt8(ascii: "0") {
                let asOctal = Int(String(decoding: whole, as: UTF8.self), radix: 8).map {
                    "the octal number \(sign)\($0)"
                }
                return .ambiguous(
                    "'\(text)' is \(asOctal ?? "text") to YAML 1.1 tools and \(number) to YAML 1.2 ones; write "
                        + "\(number) without the leading zero")
            }
            if exponent && !(point && exponentSigned) {
                return .ambiguous(
                    "'\(text)' is \(number) to YAML 1.2 tools but text to YAML 1.1 ones, which take an exponent only "
                        + "after a decimal point and with a sign (1.0e+2); write \(number)")
            }
            return .number(value)
        }
        // Numbers to some YAML tools, written in a way that others read differently.
        let lower = String(decoding: bytes[wholeStart...], as: UTF8.self).lowercased()
        for (prefix, radix, name) in [("0x", 16, "hexadecimal"), ("0o", 8, "octal")] where lower.hasPrefix(prefix) {
            guard let value = Int(lower.dropFirst(2), radix: radix) else { return .notANumber }
            return .ambiguous("'\(text)' is \(sign)\(value) in \(name); write \(sign)\(value), in decimal")
        }
        if text.contains("_"), case .number(let value) = decimal(text.filter { $0 != "_" }) {
            let number = DecimalText.format(value)
            return .ambiguous("'\(text)' is \(number) to YAML 1.1 tools but text to YAML 1.2 ones; write \(number)")
        }
        let parts = lower.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count > 1, parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy(isDigit) }),
            parts.dropFirst().allSatisfy({ $0.count <= 2 && Int($0)! < 60 }), let first = Int(parts[0])
        {
            let value = parts.dropFirst().reduce(first) { $0 * 60 + Int($1)! }
            return .ambiguous(
                "'\(text)' is the base-60 number \(sign)\(value) to YAML 1.1 tools and text to YAML 1.2 ones; "
                    + "write \(sign)\(value)")
        }
        return .notANumber
    }
}
