// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ShakeConfig

/// The configuration's own YAML reader: each construct of the subset, each refusal with its place, and no trap on
/// any input.
struct YAMLReaderTests {
    /// A node as a plain value tree, for comparing: scalars as `style:text`, mappings as ordered pairs.
    indirect enum Tree: Equatable, CustomStringConvertible {
        case scalar(String)
        case mapping([Pair])
        case sequence([Tree])

        struct Pair: Equatable {
            var key: Tree
            var value: Tree
        }

        init(_ node: Node) {
            switch node.content {
            case .scalar(let scalar):
                let style =
                    switch scalar.style {
                    case .plain: "plain"
                    case .singleQuoted: "single"
                    case .doubleQuoted: "double"
                    }
                self = .scalar("\(style):\(scalar.string)")
            case .mapping(let pairs): self = .mapping(pairs.map { Pair(key: Tree($0.0), value: Tree($0.1)) })
            case .sequence(let items): self = .sequence(items.map(Tree.init))
            }
        }

        var description: String {
            switch self {
            case .scalar(let text): text
            case .mapping(let pairs): "{" + pairs.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
            case .sequence(let items): "[" + items.map(\.description).joined(separator: ", ") + "]"
            }
        }
    }

    static func p(_ text: String) -> Tree { .scalar("plain:" + text) }
    static func map(_ pairs: (String, Tree)...) -> Tree { .mapping(pairs.map { Tree.Pair(key: p($0.0), value: $0.1) }) }

    func read(_ text: String) throws -> Tree? { try YAMLReader.read(text).map(Tree.init) }

    @Test func blockMappingsAndSequencesNest() throws {
        let text = """
            sensor:
              source: iio
              rate: 100
            access:
              samples:
                - user:alice
                - group:admin
              simulate:
              - user:bob
            list:
              - name: one
                value: 1
              -
                - inner
            empty:
            """
        let expected = Self.map(
            ("sensor", Self.map(("source", Self.p("iio")), ("rate", Self.p("100")))),
            (
                "access",
                Self.map(
                    ("samples", .sequence([Self.p("user:alice"), Self.p("group:admin")])),
                    ("simulate", .sequence([Self.p("user:bob")])))
            ),
            (
                "list",
                .sequence([
                    Self.map(("name", Self.p("one")), ("value", Self.p("1"))), .sequence([Self.p("inner")]),
                ])
            ),
            ("empty", Self.p(""))
        )
        #expect(try read(text) == expected)
    }

    @Test func flowSequencesOnOneLine() throws {
        #expect(
            try read("a: [x, 'y, z', \"w\", [1, []], ]\n")
                == Self.map(
                    (
                        "a",
                        .sequence([
                            Self.p("x"), .scalar("single:y, z"), .scalar("double:w"),
                            .sequence([Self.p("1"), .sequence([])]),
                        ])
                    )
                ))
        #expect(try read("[a,b]  # done\n") == .sequence([Self.p("a"), Self.p("b")]))
    }

    @Test func scalarsPlainAndQuoted() throws {
        let text = #"""
            plain: a b  c   # comment
            hash: a#b
            colon: http://host:80/x
            single: 'it''s # not a comment'
            double: "tab\there\nnew \"q\" \\ \/ \x41\u00e9\U0001F600\N\_\L\P\0\a\b\v\f\r\e\ end"
            "quoted key": 1
            'single key': 2
            unicode: grüße
            """#
        let expected = Self.map(
            ("plain", Self.p("a b  c")),
            ("hash", Self.p("a#b")),
            ("colon", Self.p("http://host:80/x")),
            ("single", .scalar("single:it's # not a comment")),
            (
                "double",
                .scalar(
                    "double:tab\there\nnew \"q\" \\ / A\u{E9}\u{1F600}\u{85}\u{A0}\u{2028}\u{2029}\u{0}\u{7}\u{8}\u{B}\u{C}\r\u{1B} end"
                )
            ),
            ("unicode", Self.p("grüße"))
        )
        guard case .mapping(var pairs) = try read(text) else {
            Issue.record("not a mapping")
            return
        }
        #expect(pairs[5] == Tree.Pair(key: .scalar("double:quoted key"), value: Self.p("1")))
        #expect(pairs[6] == Tree.Pair(key: .scalar("single:single key"), value: Self.p("2")))
        pairs.removeSubrange(5...6)
        #expect(Tree.mapping(pairs) == expected)
    }

    @Test func aDocumentStartCommentsAndBlankLinesAreSkipped() throws {
        #expect(try read("# head\n\n--- # start\n\n  # indented comment\na: 1\r\n\n") == Self.map(("a", Self.p("1"))))
        #expect(try read("\u{FEFF}a: 1\n") == Self.map(("a", Self.p("1"))))
        #expect(try read("") == nil)
        #expect(try read("# only a comment\n---\n") == nil)
    }

    @Test func marksGiveLineAndColumn() throws {
        let root = try #require(try YAMLReader.read("# c\nsection:\n  key: value\n  list: [a,  b]\n  seq:\n    - x\n"))
        guard case .mapping(let sections) = root.content, case .mapping(let keys) = sections[0].1.content else {
            Issue.record("not nested mappings")
            return
        }
        #expect(sections[0].0.mark == Mark(line: 2, column: 1))
        #expect(keys[0].0.mark == Mark(line: 3, column: 3))
        #expect(keys[0].1.mark == Mark(line: 3, column: 8))
        #expect(keys[1].1.mark == Mark(line: 4, column: 9))
        guard case .sequence(let flow) = keys[1].1.content, case .sequence(let block) = keys[2].1.content else {
            Issue.record("not sequences")
            return
        }
        #expect(flow[1].mark == Mark(line: 4, column: 14))
        #expect(block[0].mark == Mark(line: 6, column: 7))
    }

    @Test(arguments: [
        ("a: &anchor 1\n", 1, 4, "anchors (&) are not supported"),
        ("a: 1\nb: *anchor\n", 2, 4, "aliases (*) are not supported"),
        ("a: !!str 1\n", 1, 4, "tags (!) are not supported"),
        ("a: |\n  text\n", 1, 4, "block scalars (| and >) are not supported"),
        ("a: >-\n  text\n", 1, 4, "block scalars (| and >) are not supported"),
        ("a: 1\n---\nb: 2\n", 2, 1, "several documents"),
        ("a: {b: 1}\n", 1, 4, "flow mappings ({...}) are not supported"),
        ("? a\n: 1\n", 1, 1, "complex keys"),
        ("a: [? b]\n", 1, 5, "complex keys"),
        ("a:\n\tb: 1\n", 2, 1, "tabs are not allowed for indentation"),
        ("a:\n  \tb: 1\n", 2, 3, "tabs are not allowed for indentation"),
        ("a: one\n  two\n", 2, 3, "a value continued on another line"),
        ("a: \"open\n  close\"\n", 1, 4, "a quoted value must close on the line it opens"),
        ("a: [x,\n  y]\n", 1, 7, "a flow sequence must close"),
        ("a: 1\n...\n", 2, 1, "document end marker"),
        ("%YAML 1.2\n---\na: 1\n", 1, 1, "directives"),
        ("a: \"\\q\"\n", 1, 5, "'\\q' is not an escape YAML defines"),
        ("a: \"\\u12\"\n", 1, 5, "needs 4 hex digits"),
        ("a: \"\\uD800\"\n", 1, 5, "needs 4 hex digits"),
        ("a: b: c\n", 1, 5, "a mapping value is not allowed here"),
        ("a: [b: c]\n", 1, 6, "mappings inside a flow sequence"),
        ("a: [b,, c]\n", 1, 7, "an empty entry"),
        ("a: [b c] d\n", 1, 10, "unexpected text after the value"),
        ("a: 1\n  b: 2\n", 2, 3, "a value continued on another line"),
        ("a:\n  b: 1\n c: 2\n", 3, 2, "unexpected indentation"),
        ("- a\nb: 1\n", 2, 1, "does not continue the sequence"),
        ("a: 1\n- b\n", 2, 1, "a sequence entry where a key was expected"),
        ("a: - b\n", 1, 4, "a sequence cannot start after a key"),
        ("a: @x\n", 1, 4, "a plain value cannot start with '@'"),
        ("a: 'x\u{7}'\n", 1, 6, "a control character"),
        ("[a]: 1\n", 1, 4, "a mapping key must be a plain or quoted scalar"),
    ])
    func refusesWhatItDoesNotRead(text: String, line: Int, column: Int, message: String) {
        do {
            let tree = try YAMLReader.read(text)
            Issue.record("accepted: \(tree.map { "\(Tree($0))" } ?? "nil")")
        } catch {
            #expect(error.mark == Mark(line: line, column: column), "\(error)")
            #expect(error.message.contains(message), "\(error)")
        }
    }

    @Test func theLoaderNamesFileLineAndColumn() {
        do {
            _ = try ConfigLoader.parse("sensor:\n  rate: &r 100\n", source: "test.yaml")
            Issue.record("accepted")
        } catch {
            #expect(error.description == "test.yaml:2: not valid YAML: anchors (&) are not supported (column 9)")
        }
    }

    @Test(arguments: [
        ("", Node.Scalar.Resolved.null), ("~", .null), ("null", .null), ("NULL", .null),
        ("true", .bool(true)), ("False", .bool(false)), ("yes", .string("yes")),
        ("12", .int(12)), ("-3", .int(-3)), ("+7", .int(7)), ("0660", .int(660)), ("0o660", .int(0o660)),
        ("0x1F", .int(31)), ("0o9", .string("0o9")),
        ("1.5", .float(1.5)), ("-.5", .float(-0.5)), ("1e3", .float(1000)), ("2.", .float(2)),
        (".inf", .float(.infinity)),
        ("-.Inf", .float(-.infinity)), ("1e", .string("1e")), ("0x", .string("0x")), (".", .string(".")),
        ("inf", .string("inf")), ("abc", .string("abc")),
    ])
    func plainScalarsResolveAsTheCoreSchemaSays(text: String, expected: Node.Scalar.Resolved) {
        #expect(Node.Scalar(string: text, style: .plain).resolved == expected)
    }

    @Test func quotedScalarsAreAlwaysStrings() {
        #expect(Node.Scalar(string: "12", style: .doubleQuoted).resolved == .string("12"))
        #expect(Node.Scalar(string: "null", style: .singleQuoted).resolved == .string("null"))
        #expect(Node.Scalar(string: ".nan", style: .plain).resolved != .string(".nan"))
    }

    /// Random text, mostly of YAML's own punctuation and of pieces of a real file, never traps the reader or
    /// the loader: each gives a tree or an error at a line of the text.
    @Test func randomTextNeverTraps() {
        var random = SplitMix(seed: 0x5EED_CAFE)
        let pieces = [
            " ", "  ", "\t", "\n", "\r\n", "-", "- ", ":", ": ", "#", " #", "[", "]", "{", "}", ",", "'", "\"", "''",
            "\\", "\\u", "\\x4", "\\U0001F600", "&", "*", "!", "|", ">", "?", "? ", "%", "@", "`", "---", "...",
            "sensor", "detector", "threshold", "12", "0660", "0o660", "true", "~", "é", "\u{FEFF}", "\u{0}", "socket",
            "mode", "access", "samples", "user:root", "\u{7F}", "\u{85}",
        ]
        for _ in 0..<5_000 {
            var text = ""
            for _ in 0..<Int(random.next() % 40) { text += pieces[Int(random.next() % UInt64(pieces.count))] }
            check(text)
            // Raw bytes too, through the same UTF-8 validation the loader applies to a file.
            let bytes = (0..<Int(random.next() % 64)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            if let raw = String(validating: bytes, as: UTF8.self) { check(raw) }
        }
    }

    private func check(_ text: String) {
        let lines = text.utf8.count { $0 == UInt8(ascii: "\n") } + 1
        do {
            _ = try YAMLReader.read(text)
        } catch {
            #expect(
                (1...lines).contains(error.mark.line) && error.mark.column >= 1, "\(error) for \(text.debugDescription)"
            )
        }
        do {
            _ = try ConfigLoader.parse(text, source: "random.yaml")
        } catch {
            #expect(error.file == "random.yaml" && !error.message.isEmpty)
            if let line = error.line { #expect((1...lines).contains(line), "\(error) for \(text.debugDescription)") }
        }
    }
}

/// A small seeded generator, so that a failure repeats.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E589
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
