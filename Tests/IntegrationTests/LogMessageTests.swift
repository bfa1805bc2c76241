// SPDX-License-Identifier: Apache-2.0
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

    /// Helpers that take a log message as their first argument (`func warn(_ message: Logger.Message, …)`) and
    /// their parameter's name: their callers are checked as log calls, and the helper may pass the parameter on.
    static func helpers(in source: String) -> [String: String] {
        var helpers: [String: String] = [:]
        let pattern = #/func\s+(\w+)\s*\(\s*_\s+(\w+)\s*:\s*Logger\.Message/#
        for match in source.matches(of: pattern) { helpers[String(match.1)] = String(match.2) }
        return helpers
    }

    /// Finds the calls `<something log…>.<level>(`, `<something log…>.log(level: …,` and the calls of `helpers`
    /// in Swift source and checks the message argument that follows.
    static func findings(in source: String, file: String, helpers: [String: String] = [:]) -> [Finding] {
        let text = Array(source.unicodeScalars)
        let forwarded = Set(helpers.values)
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
            // An identifier that starts here, followed by "(".
            guard isIdentifier(text[index]), index == 0 || !isIdentifier(text[index - 1]) else {
                index += 1
                continue
            }
            var position = index
            var method = ""
            while position < text.count, isIdentifier(text[position]) {
                method.unicodeScalars.append(text[position])
                position += 1
            }
            let start = index
            index = position
            guard position < text.count, text[position] == "(" else { continue }
            // A level or `log` on a receiver that names a logger, or a helper called (not declared).
            var receiver = ""
            if start > 0, text[start - 1] == "." {
                var from = start - 1
                while from > 0, isIdentifier(text[from - 1]) { from -= 1 }
                receiver = String(String.UnicodeScalarView(text[from..<(start - 1)])).lowercased()
            }
            let isLevel = receiver.contains("log") && (levels.contains(method) || method == "log")
            let declared = start >= 5 && String(String.UnicodeScalarView(text[(start - 5)..<start])) == "func "
            let isHelper = helpers[method] != nil && !declared && (start == 0 || text[start - 1] != ".")
            guard isLevel || isHelper else { continue }
            position += 1
            if method == "log" {
                // log(level: x, "message", ...): the message is the second argument.
                skipSpace(&position)
                guard matches("level:", at: position) else { continue }
                while position < text.count, text[position] != ",", text[position] != ")" { position += 1 }
                guard position < text.count, text[position] == "," else { continue }
                position += 1
            } else if !levels.contains(method), !isHelper {
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
            let argument = String(String.UnicodeScalarView(text[position..<min(end, text.count)]))
            if literals == 0, forwarded.contains(argument.trimmingCharacters(in: .whitespacesAndNewlines)) {
                continue  // a helper passing its message on; its callers are checked
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

    @Test func everyLogMessageInTheSourcesIsConstant() async throws {
        let sources = Fixtures.repository.appendingPathComponent("Sources")
        let enumerator = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        var files: [(path: String, source: String)] = []
        for case let url as URL in enumerator where url.pathExtension == "swift" {
            let relative = String(url.path.dropFirst(Fixtures.repository.path.count + 1))
            files.append((relative, try String(contentsOf: url, encoding: .utf8)))
        }
        let helpers = files.reduce(into: [String: String]()) { $0.merge(Self.helpers(in: $1.source)) { old, _ in old } }
        let findings = files.flatMap { Self.findings(in: $0.source, file: $0.path, helpers: helpers) }
        let checked = files.count
        #expect(checked > 50, "found only \(checked) source files under \(sources.path)")
        #expect(
            findings.isEmpty,
            "log messages with values in their text:\n\(findings.map(\.description).joined(separator: "\n"))")
    }

    @Test func theCheckFindsInterpolationAndNonLiterals() async {
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
            func warn(_ message: Logger.Message, metadata: Logger.Metadata) {
                logger.warning(message, metadata: metadata)
            }
            warn("refused", metadata: ["peer": "\(peer)"])
            warn("refused \(peer)", metadata: [:])
            """#
        let helpers = Self.helpers(in: source)
        #expect(helpers == ["warn": "message"])
        let found = Self.findings(in: source, file: "example.swift", helpers: helpers)
        #expect(found.map(\.line) == [3, 4, 5, 9, 14], "\(found)")
    }
}
