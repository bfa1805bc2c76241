// SPDX-License-Identifier: Apache-2.0
/// The YAML subset the configuration is written in, read without any library: block mappings and sequences,
/// one-line flow sequences (`[a, b]`), plain, single- and double-quoted scalars, comments and a leading `---`.
///
/// What YAML has beyond that (anchors and aliases, tags, block scalars, flow mappings, complex keys, several
/// documents, tabs in indentation, values continued on the next line) is refused with the line and column where
/// it appears, never read differently from what YAML means. Pure: text in, a tree or an error out.
enum YAMLReader {
    /// Nesting beyond this is refused, so that recursion stays bounded whatever the input: the limit the text
    /// is checked against before it is parsed (``NestingLimit``), here for block nesting by indentation, which
    /// that check bounds only by the indentation's width.
    static var maxDepth: Int { NestingLimit.maxDepth }

    /// The document of `text`, or nil when it holds nothing but comments and blank lines.
    static func read(_ text: String) throws(YAMLError) -> Node? {
        var parser = try Parser(lines: Self.lines(of: text))
        return try parser.document()
    }

    /// The text split into lines: indentation counted, blank and comment-only lines left out, a `---` start
    /// line checked and dropped.
    static func lines(of text: String) throws(YAMLError) -> [Line] {
        var bytes = Array(text.utf8)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }  // A byte order mark.
        var lines: [Line] = []
        var number = 0
        var start = 0
        var sawStart = false
        while start <= bytes.count {
            number += 1
            var end = start
            while end < bytes.count && bytes[end] != UInt8(ascii: "\n") { end += 1 }
            var content = Array(bytes[start..<end])
            start = end + 1
            if content.last == UInt8(ascii: "\r") { content.removeLast() }
            var indent = 0
            while indent < content.count && content[indent] == UInt8(ascii: " ") { indent += 1 }
            var first = indent
            while first < content.count && isWhite(content[first]) { first += 1 }
            if first == content.count || content[first] == UInt8(ascii: "#") { continue }  // Blank or comment.
            if first != indent {
                throw YAMLError(line: number, column: indent + 1, "tabs are not allowed for indentation")
            }
            let line = Line(number: number, indent: indent, bytes: content)
            if indent == 0 && content.starts(with: Array("---".utf8)) && (content.count == 3 || isWhite(content[3])) {
                guard lines.isEmpty && !sawStart else {
                    throw YAMLError(line: number, column: 1, "a file with several documents is not supported")
                }
                var rest = 3
                while rest < content.count && isWhite(content[rest]) { rest += 1 }
                guard rest == content.count || content[rest] == UInt8(ascii: "#") else {
                    throw YAMLError(line: number, column: rest + 1, "content on the '---' line is not supported")
                }
                sawStart = true
                continue
            }
            if indent == 0 && content.starts(with: Array("...".utf8)) && (content.count == 3 || isWhite(content[3])) {
                throw YAMLError(line: number, column: 1, "the document end marker '...' is not supported")
            }
            if indent == 0 && content[0] == UInt8(ascii: "%") {
                throw YAMLError(line: number, column: 1, "directives (%) are not supported")
            }
            lines.append(line)
        }
        return lines
    }

    static func isWhite(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

    /// One line with content: its 1-based number, its indentation in spaces and its bytes (indentation included).
    struct Line {
        var number: Int
        var indent: Int
        var bytes: [UInt8]
        /// For a line with UTF-8 beyond ASCII: the 1-based column (in characters) of each byte position, counted
        /// once, so that a node's column costs nothing however far along a long line it starts. Empty for an
        /// ASCII line, where the column is the position plus one.
        let columns: [Int32]

        init(number: Int, indent: Int, bytes: [UInt8]) {
            self.number = number
            self.indent = indent
            self.bytes = bytes
            if bytes.allSatisfy({ $0 < 0x80 }) {
                columns = []
            } else {
                var columns: [Int32] = []
                columns.reserveCapacity(bytes.count + 1)
                var column: Int32 = 1
                for byte in bytes {
                    columns.append(column)
                    // UTF-8 continuation bytes do not start a character.
                    if byte & 0xC0 != 0x80 { column += 1 }
                }
                columns.append(column)
                self.columns = columns
            }
        }

        /// The 1-based column of the character at byte `position`.
        func column(at position: Int) -> Int {
            let position = min(position, bytes.count)
            return columns.isEmpty ? position + 1 : Int(columns[position])
        }
    }
}

/// Where a node starts in its file, 1-based.
struct Mark: Sendable, Hashable {
    var line: Int
    var column: Int
}

/// Text that is not in the YAML subset the reader takes.
struct YAMLError: Error, Sendable, Hashable, CustomStringConvertible {
    var mark: Mark
    var message: String

    init(line: Int, column: Int, _ message: String) {
        self.mark = Mark(line: line, column: column)
        self.message = message
    }

    var description: String { "\(message) (line \(mark.line), column \(mark.column))" }
}

/// A node of a YAML document.
struct Node: Sendable {
    enum Content: Sendable {
        case scalar(Scalar)
        case mapping([(Node, Node)])
        case sequence([Node])
    }

    /// A scalar's text as written (quotes removed, escapes applied) and how it was written.
    struct Scalar: Sendable, Hashable {
        enum Style: Sendable, Hashable { case plain, singleQuoted, doubleQuoted }
        var string: String
        var style: Style

        /// What the scalar means under YAML 1.2's core schema (a quoted scalar is always a string).
        enum Resolved: Sendable, Hashable {
            case null
            case bool(Bool)
            case int(Int)
            case float(Double)
            case string(String)
        }

        var resolved: Resolved {
            guard style == .plain else { return .string(string) }
            switch string {
            case "", "~", "null", "Null", "NULL": return .null
            case "true", "True", "TRUE": return .bool(true)
            case "false", "False", "FALSE": return .bool(false)
            case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF": return .float(.infinity)
            case "-.inf", "-.Inf", "-.INF": return .float(-.infinity)
            case ".nan", ".NaN", ".NAN": return .float(.nan)
            default: break
            }
            if string.hasPrefix("0o"), let value = Int(string.dropFirst(2), radix: 8) { return .int(value) }
            if string.hasPrefix("0x"), let value = Int(string.dropFirst(2), radix: 16) { return .int(value) }
            let bytes = Array(string.utf8)
            let digits =
                bytes.first.map { $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "+") } == true
                ? bytes.dropFirst() : bytes[...]
            if !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                let value = Int(string)
            {
                return .int(value)
            }
            if Self.isCoreFloat(digits), let value = Double(string) { return .float(value) }
            return .string(string)
        }

        /// `[-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?`, the sign already removed.
        private static func isCoreFloat(_ bytes: ArraySlice<UInt8>) -> Bool {
            func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
            var index = bytes.startIndex
            var mantissa = 0
            while index < bytes.endIndex && isDigit(bytes[index]) { (index, mantissa) = (index + 1, mantissa + 1) }
            if index < bytes.endIndex && bytes[index] == UInt8(ascii: ".") {
                index += 1
                while index < bytes.endIndex && isDigit(bytes[index]) { (index, mantissa) = (index + 1, mantissa + 1) }
            }
            guard mantissa > 0 else { return false }
            if index < bytes.endIndex && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
                index += 1
                if index < bytes.endIndex && (bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+")) {
                    index += 1
                }
                let exponent = index
                while index < bytes.endIndex && isDigit(bytes[index]) { index += 1 }
                guard index > exponent else { return false }
            }
            return index == bytes.endIndex
        }
    }

    var content: Content
    var mark: Mark?

    init(_ content: Content, mark: Mark? = nil) {
        self.content = content
        self.mark = mark
    }

    /// A plain scalar, as a key or value built by the program rather than read.
    init(_ string: String) {
        self.init(.scalar(Scalar(string: string, style: .plain)))
    }

    var scalar: Scalar? {
        if case .scalar(let scalar) = content { return scalar }
        return nil
    }
}

extension YAMLReader {
    /// Recursive descent over the lines, one block collection per indentation.
    struct Parser {
        var lines: [Line]
        var index = 0

        init(lines: [Line]) throws(YAMLError) {
            self.lines = lines
        }

        mutating func document() throws(YAMLError) -> Node? {
            guard !lines.isEmpty else { return nil }
            let root = try block(depth: 0)
            if index < lines.count {
                let line = lines[index]
                throw YAMLError(line: line.number, column: line.indent + 1, "unexpected content after the document")
            }
            return root
        }

        /// The block node at the current line (a sequence, a mapping or a value alone on its line).
        mutating func block(depth: Int) throws(YAMLError) -> Node {
            let line = lines[index]
            guard depth < YAMLReader.maxDepth else {
                throw YAMLError(line: line.number, column: line.indent + 1, "nested too deeply")
            }
            if Self.isEntry(line) { return try sequence(depth: depth) }
            if try Self.key(of: line) != nil { return try mapping(depth: depth) }
            var cursor = Cursor(line: line, position: line.indent)
            let node = try cursor.value(depth: depth)
            index += 1
            if index < lines.count && lines[index].indent > line.indent {
                throw YAMLError(
                    line: lines[index].number, column: lines[index].indent + 1,
                    "a value continued on another line is not supported")
            }
            return node
        }

        static func isEntry(_ line: Line) -> Bool {
            let bytes = line.bytes
            return bytes[line.indent] == UInt8(ascii: "-")
                && (line.indent + 1 == bytes.count || YAMLReader.isWhite(bytes[line.indent + 1]))
        }

        /// `- item` lines at one indentation.
        mutating func sequence(depth: Int) throws(YAMLError) -> Node {
            let indent = lines[index].indent
            let start = Mark(line: lines[index].number, column: indent + 1)
            var items: [Node] = []
            while index < lines.count && lines[index].indent == indent && Self.isEntry(lines[index]) {
                let line = lines[index]
                var rest = line.indent + 1
                while rest < line.bytes.count && YAMLReader.isWhite(line.bytes[rest]) { rest += 1 }
                if rest == line.bytes.count || line.bytes[rest] == UInt8(ascii: "#") {
                    index += 1
                    if index < lines.count && lines[index].indent > indent {
                        items.append(try block(depth: depth + 1))
                    } else {
                        items.append(Node(.scalar(Node.Scalar(string: "", style: .plain)), mark: mark(line, rest)))
                    }
                } else {
                    if line.bytes[line.indent + 1] == UInt8(ascii: "\t") {
                        throw YAMLError(
                            line: line.number, column: line.indent + 2, "tabs are not allowed for indentation")
                    }
                    // The rest of the line is a node of its own, indented where it starts (what comes before it,
                    // the entry's dash and blanks, is never read again).
                    lines[index].indent = rest
                    items.append(try block(depth: depth + 1))
                }
            }
            try checkEnd(of: indent, kind: "sequence")
            return Node(.sequence(items), mark: start)
        }

        /// `key: value` lines at one indentation.
        mutating func mapping(depth: Int) throws(YAMLError) -> Node {
            let indent = lines[index].indent
            let start = Mark(line: lines[index].number, column: indent + 1)
            var pairs: [(Node, Node)] = []
            while index < lines.count && lines[index].indent == indent {
                let line = lines[index]
                guard let (key, after) = try Self.key(of: line) else {
                    if Self.isEntry(line) {
                        throw YAMLError(
                            line: line.number, column: indent + 1, "a sequence entry where a key was expected")
                    }
                    throw YAMLError(line: line.number, column: indent + 1, "expected 'key: value'")
                }
                var cursor = Cursor(line: line, position: after)
                cursor.skipWhite()
                if cursor.atEnd {
                    index += 1
                    if index < lines.count && lines[index].indent > indent {
                        pairs.append((key, try block(depth: depth + 1)))
                    } else if index < lines.count && lines[index].indent == indent && Self.isEntry(lines[index]) {
                        pairs.append((key, try sequence(depth: depth + 1)))  // A sequence as indented as its key.
                    } else {
                        pairs.append((key, Node(.scalar(Node.Scalar(string: "", style: .plain)), mark: key.mark)))
                    }
                } else {
                    let value = try cursor.value(depth: depth + 1)
                    pairs.append((key, value))
                    index += 1
                    if index < lines.count && lines[index].indent > indent {
                        throw YAMLError(
                            line: lines[index].number, column: lines[index].indent + 1,
                            "a value continued on another line is not supported")
                    }
                }
            }
            try checkEnd(of: indent, kind: "mapping")
            return Node(.mapping(pairs), mark: start)
        }

        /// After a collection: the next line must be less indented (a parent's), never more.
        func checkEnd(of indent: Int, kind: String) throws(YAMLError) {
            guard index < lines.count else { return }
            let line = lines[index]
            if line.indent > indent {
                throw YAMLError(line: line.number, column: line.indent + 1, "unexpected indentation")
            }
            if line.indent == indent {
                throw YAMLError(line: line.number, column: line.indent + 1, "this line does not continue the \(kind)")
            }
        }

        func mark(_ line: Line, _ position: Int) -> Mark { Cursor(line: line, position: position).mark }

        /// The key of a `key: value` line and where its value starts, or nil when the line is no mapping entry.
        static func key(of line: Line) throws(YAMLError) -> (Node, Int)? {
            var cursor = Cursor(line: line, position: line.indent)
            guard let first = cursor.peek else { return nil }
            let mark = cursor.mark
            switch first {
            case UInt8(ascii: "?") where cursor.isWhiteOrEnd(at: cursor.position + 1):
                throw YAMLError(line: line.number, column: mark.column, "complex keys ('? ') are not supported")
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                let scalar = try cursor.quoted()
                cursor.skipWhite()
                guard cursor.peek == UInt8(ascii: ":"), cursor.isWhiteOrEnd(at: cursor.position + 1) else {
                    return nil
                }
                return (Node(.scalar(scalar), mark: mark), cursor.position + 1)
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                return nil  // A flow collection; as a key it is refused when read as a value.
            default:
                // A plain key ends at the first ': ' (or ':' ending the line), before any ' #'.
                let bytes = line.bytes
                var position = line.indent
                while position < bytes.count {
                    if bytes[position] == UInt8(ascii: "#") && position > line.indent
                        && YAMLReader.isWhite(bytes[position - 1])
                    {
                        return nil
                    }
                    if bytes[position] == UInt8(ascii: ":") && cursor.isWhiteOrEnd(at: position + 1) {
                        var keyCursor = Cursor(line: line, position: line.indent, end: position)
                        let key = try keyCursor.plain(flow: false)
                        return (Node(.scalar(key), mark: mark), position + 1)
                    }
                    position += 1
                }
                return nil
            }
        }
    }

    /// A position in one line, reading the values that fit on it.
    struct Cursor {
        let line: Line
        var position: Int
        let end: Int

        init(line: Line, position: Int, end: Int? = nil) {
            self.line = line
            self.position = position
            self.end = end ?? line.bytes.count
        }

        var peek: UInt8? { position < end ? line.bytes[position] : nil }

        /// The end of the line, or of its content before a comment.
        var atEnd: Bool {
            guard let byte = peek else { return true }
            return byte == UInt8(ascii: "#") && (position == 0 || YAMLReader.isWhite(line.bytes[position - 1]))
        }

        var mark: Mark {
            // Columns count characters, not bytes.
            Mark(line: line.number, column: line.column(at: position))
        }

        func error(_ message: String) -> YAMLError {
            let mark = self.mark
            return YAMLError(line: mark.line, column: mark.column, message)
        }

        func isWhiteOrEnd(at position: Int) -> Bool { position >= end || YAMLReader.isWhite(line.bytes[position]) }

        mutating func skipWhite() {
            while let byte = peek, YAMLReader.isWhite(byte) { position += 1 }
        }

        /// A value that ends its line: a scalar or a flow sequence, then only a comment.
        mutating func value(depth: Int) throws(YAMLError) -> Node {
            let node = try inline(flow: false, depth: depth)
            skipWhite()
            guard atEnd else {
                if peek == UInt8(ascii: ":") { throw error("a mapping key must be a plain or quoted scalar") }
                throw error("unexpected text after the value")
            }
            return node
        }

        /// A scalar or flow sequence starting here.
        mutating func inline(flow: Bool, depth: Int) throws(YAMLError) -> Node {
            let mark = self.mark
            guard let first = peek else { return Node(.scalar(Node.Scalar(string: "", style: .plain)), mark: mark) }
            switch first {
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                return Node(.scalar(try quoted()), mark: mark)
            case UInt8(ascii: "["):
                return try flowSequence(depth: depth)
            case UInt8(ascii: "{"):
                throw error("flow mappings ({...}) are not supported; write the keys on lines of their own")
            case UInt8(ascii: "&"):
                throw error("anchors (&) are not supported")
            case UInt8(ascii: "*"):
                throw error("aliases (*) are not supported")
            case UInt8(ascii: "!"):
                throw error("tags (!) are not supported")
            case UInt8(ascii: "|"), UInt8(ascii: ">"):
                throw error("block scalars (| and >) are not supported; write the value on one line")
            case UInt8(ascii: "-") where isWhiteOrEnd(at: position + 1) && !flow:
                throw error("a sequence cannot start after a key on the same line")
            default:
                return Node(.scalar(try plain(flow: flow)), mark: mark)
            }
        }

        /// `[a, b, [c]]` on one line.
        mutating func flowSequence(depth: Int) throws(YAMLError) -> Node {
            let mark = self.mark
            guard depth < YAMLReader.maxDepth else { throw error("nested too deeply") }
            position += 1  // "["
            var items: [Node] = []
            while true {
                skipWhite()
                if atEnd { throw error("a flow sequence must close ']' on the line it opens") }
                if peek == UInt8(ascii: "]") {
                    position += 1
                    return Node(.sequence(items), mark: mark)
                }
                if peek == UInt8(ascii: ",") { throw error("an empty entry in a flow sequence") }
                if peek == UInt8(ascii: "?") && isWhiteOrEnd(at: position + 1) {
                    throw error("complex keys ('? ') are not supported")
                }
                items.append(try inline(flow: true, depth: depth + 1))
                skipWhite()
                if peek == UInt8(ascii: ":") { throw error("mappings inside a flow sequence are not supported") }
                if peek == UInt8(ascii: ",") {
                    position += 1
                } else if peek != UInt8(ascii: "]") {
                    if atEnd { throw error("a flow sequence must close ']' on the line it opens") }
                    throw error("expected ',' or ']' in a flow sequence")
                }
            }
        }

        /// A plain scalar: up to the end (or ' #'), or in a flow sequence up to ',' or ']'; trailing blanks
        /// dropped.
        mutating func plain(flow: Bool) throws(YAMLError) -> Node.Scalar {
            let start = position
            guard let first = peek else { return Node.Scalar(string: "", style: .plain) }
            let isIndicator =
                switch first {
                case UInt8(ascii: ","), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "{"), UInt8(ascii: "}"),
                    UInt8(ascii: "#"), UInt8(ascii: "&"), UInt8(ascii: "*"), UInt8(ascii: "!"), UInt8(ascii: "|"),
                    UInt8(ascii: ">"), UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "%"), UInt8(ascii: "@"),
                    UInt8(ascii: "`"):
                    true
                case UInt8(ascii: "-"), UInt8(ascii: "?"), UInt8(ascii: ":"): isWhiteOrEnd(at: position + 1)
                default: false
                }
            if isIndicator {
                throw error("a plain value cannot start with '\(String(decoding: [first], as: UTF8.self))'; quote it")
            }
            var last = position
            while let byte = peek {
                if byte == UInt8(ascii: "#") && position > start && YAMLReader.isWhite(line.bytes[position - 1]) {
                    break
                }
                if byte == UInt8(ascii: ":") && isWhiteOrEnd(at: position + 1) {
                    if flow { break }
                    throw error("a mapping value is not allowed here (quote a value that holds ': ')")
                }
                if flow && Self.endsFlowEntry(byte) { break }
                if !YAMLReader.isWhite(byte) { last = position + 1 }
                if byte < 0x20 && byte != UInt8(ascii: "\t") || byte == 0x7F {
                    throw error("a control character in a value")
                }
                position += 1
            }
            let text = String(decoding: line.bytes[start..<last], as: UTF8.self)
            return Node.Scalar(string: text, style: .plain)
        }

        static func endsFlowEntry(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: ","), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "{"), UInt8(ascii: "}"): true
            default: false
            }
        }

        /// A single- or double-quoted scalar, closed on this line.
        mutating func quoted() throws(YAMLError) -> Node.Scalar {
            let quote = line.bytes[position]
            let opening = self
            position += 1
            var text: [UInt8] = []
            while true {
                guard position < line.bytes.count else {
                    throw opening.error("a quoted value must close on the line it opens")
                }
                let byte = line.bytes[position]
                if byte < 0x20 && byte != UInt8(ascii: "\t") || byte == 0x7F {
                    throw error("a control character in a value; write it as an escape in double quotes")
                }
                if byte == quote {
                    if quote == UInt8(ascii: "'") && position + 1 < line.bytes.count
                        && line.bytes[position + 1] == UInt8(ascii: "'")
                    {
                        text.append(quote)
                        position += 2
                        continue
                    }
                    position += 1
                    let style: Node.Scalar.Style = quote == UInt8(ascii: "'") ? .singleQuoted : .doubleQuoted
                    return Node.Scalar(string: String(decoding: text, as: UTF8.self), style: style)
                }
                if byte == UInt8(ascii: "\\") && quote == UInt8(ascii: "\"") {
                    try escape(into: &text)
                    continue
                }
                text.append(byte)
                position += 1
            }
        }

        /// One escape of a double-quoted scalar, as YAML 1.2 defines them.
        mutating func escape(into text: inout [UInt8]) throws(YAMLError) {
            let start = self
            position += 1  // "\"
            guard position < line.bytes.count else {
                throw start.error("a quoted value must close on the line it opens")
            }
            let code = line.bytes[position]
            position += 1
            let scalar: Unicode.Scalar
            if let known = Self.simpleEscape(code) {
                scalar = known
            } else {
                let digits: Int
                switch code {
                case UInt8(ascii: "x"): digits = 2
                case UInt8(ascii: "u"): digits = 4
                case UInt8(ascii: "U"): digits = 8
                default:
                    throw start.error("'\\\(String(decoding: [code], as: UTF8.self))' is not an escape YAML defines")
                }
                guard position + digits <= line.bytes.count,
                    let value = UInt32(
                        String(decoding: line.bytes[position..<position + digits], as: UTF8.self), radix: 16),
                    line.bytes[position..<position + digits].allSatisfy({
                        $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "-")
                    }),
                    let decoded = Unicode.Scalar(value)
                else {
                    throw start.error(
                        "'\\\(String(decoding: [code], as: UTF8.self))' needs \(digits) hex digits of a Unicode character"
                    )
                }
                position += digits
                scalar = decoded
            }
            text.append(contentsOf: String(Character(scalar)).utf8)
        }

        /// The character of a one-letter escape (`\n`), or nil for `\x`, `\u`, `\U` and what YAML does not define.
        static func simpleEscape(_ code: UInt8) -> Unicode.Scalar? {
            switch code {
            case UInt8(ascii: "0"): "\u{0}"
            case UInt8(ascii: "a"): "\u{7}"
            case UInt8(ascii: "b"): "\u{8}"
            case UInt8(ascii: "t"), UInt8(ascii: "\t"): "\t"
            case UInt8(ascii: "n"): "\n"
            case UInt8(ascii: "v"): "\u{B}"
            case UInt8(ascii: "f"): "\u{C}"
            case UInt8(ascii: "r"): "\r"
            case UInt8(ascii: "e"): "\u{1B}"
            case UInt8(ascii: " "): " "
            case UInt8(ascii: "\""): "\""
            case UInt8(ascii: "/"): "/"
            case UInt8(ascii: "\\"): "\\"
            case UInt8(ascii: "N"): "\u{85}"
            case UInt8(ascii: "_"): "\u{A0}"
            case UInt8(ascii: "L"): "\u{2028}"
            case UInt8(ascii: "P"): "\u{2029}"
            default: nil
            }
        }
    }
}
