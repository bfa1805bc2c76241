import Foundation
import ShakeTestSupport
import Testing

/// Log messages are constant and their values go in metadata, so that the journal's fields (`SENSOR=`, `DEVICE=`,
/// `PHASE=`) find them and a message reads the same every time.
struct LogMessageTests {
    /// A log call whose message is not constant: a string literal with `\(...)` in it, or no literal at all (its
    /// line is the message's).
    struct Finding: CustomStringConvertible {
        var file: String
        var line: Int
        var message: String
        var description: String { "\(file):\(line): \(message)" }
    }

    static let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

    /// Finds the calls `<something log…>.<level>(` and `<something log…>.log(level: …,` in Swift source and
    /// checks the message argument that follows.
    static func findings(in source: String, file: String) -> [Finding] {
        let text = Array(source.unicodeScalars)
        var findings: [Finding] = []
        var index = 0
        func isIdentifier(_ scalar: Unicode.Scalar) -> Bool {
            scalar == "_" || CharacterSet.alphanumerics.contains(scalar)
        }
        func skipSpace(_ position: inout Int) {
            while position < text.count, CharacterSet.whitespacesAndNewlines.contains(text[position]) { position += 1 }
        }
        func matches(_ word: String, at position: Int) -> Bool {
            let scalars = Array(word.unicodeScalars)
            return position + scalars.count <= text.count
                && Array(text[position..<(position + scalars.count)]) == scalars
        }
        while index < text.count {
            guard text[index] == "." else {
                index += 1
                continue
            }
            // The receiver: the identifier before the dot must name a logger.
            var start = index
            while start > 0, isIdentifier(text[start - 1]) { start -= 1 }
            let receiver = String(String.UnicodeScalarView(text[start..<index])).lowercased()
            var position = index + 1
            var method = ""
            while position < text.count, isIdentifier(text[position]) {
                method.unicodeScalars.append(text[position])
                position += 1
            }
            index += 1
            guard receiver.contains("log"), position < text.count, text[position] == "(" else { continue }
            position += 1
            if method == "log" {
                // log(level: x, "message", ...): the message is the second argument.
                skipSpace(&position)
                guard matches("level:", at: position) else { continue }
                while position < text.count, text[position] != ",", text[position] != ")" { position += 1 }
                guard position < text.count, text[position] == "," else { continue }
                position += 1
            } else if !levels.contains(method) {
                continue
            }
            skipSpace(&position)
            let line = text[..<position].filter { $0 == "\n" }.count + 1
            // The message: up to the first comma or closing parenthesis outside brackets and string literals. It
            // must hold a string literal (a choice between literals is fine) and no interpolation.
            var end = position
            var depth = 0
            var literals = 0
            var interpolated = false
            while end < text.count {
                let scalar = text[end]
                if scalar == "\"" {
                    literals += 1
                    end += 1
                    while end < text.count, text[end] != "\"" {
                        if text[end] == "\\" {
                            if end + 1 < text.count, text[end + 1] == "(" { interpolated = true }
                            end += 2
                        } else {
                            end += 1
                        }
                    }
                } else if scalar == "(" || scalar == "[" {
                    depth += 1
                } else if scalar == ")" || scalar == "]" {
                    if depth == 0 { break }
                    depth -= 1
                } else if scalar == ",", depth == 0 {
                    break
                }
                end += 1
            }
            if interpolated || literals == 0 {
                let message = String(String.UnicodeScalarView(text[position..<min(end, text.count)]))
                findings.append(
                    Finding(
                        file: file, line: line,
                        message: (literals == 0 ? "not a literal: " : "") + message))
            }
        }
        return findings
    }

    @Test func everyLogMessageInTheSourcesIsConstant() throws {
        let sources = Fixtures.repository.appendingPathComponent("Sources")
        let enumerator = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        var checked = 0
        var findings: [Finding] = []
        for case let url as URL in enumerator where url.pathExtension == "swift" {
            let source = try String(contentsOf: url, encoding: .utf8)
            let relative = String(url.path.dropFirst(Fixtures.repository.path.count + 1))
            findings += Self.findings(in: source, file: relative)
            checked += 1
        }
        #expect(checked > 50, "found only \(checked) source files under \(sources.path)")
        #expect(
            findings.isEmpty,
            "log messages with values in their text:\n\(findings.map(\.description).joined(separator: "\n"))")
    }

    @Test func theCheckFindsInterpolationAndNonLiterals() {
        let source = #"""
            logger.info("capturing", metadata: ["device": "\(id)"])
            logger.warning(
                "the buffer of \(id) is silent")
            self.logger.log(level: .debug, "libiio: \(message)", metadata: [:])
            log.error(text)
            logger.log(level: level, "constant")
            formatter.info("\(not) a logger")
            logger.notice(late ? "constant" : "also constant", metadata: ["at": "\(time)"])
            logger.debug(late ? "constant" : "at \(time)")
            """#
        let found = Self.findings(in: source, file: "example.swift")
        #expect(found.map(\.line) == [3, 4, 5, 9], "\(found)")
    }
}
