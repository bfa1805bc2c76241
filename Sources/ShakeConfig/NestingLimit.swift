// SPDX-License-Identifier: Apache-2.0
/// Bounds on a configuration file's shape, checked before it is parsed: the YAML parser recurses once per level
/// of nesting, so a few kilobytes of `[[[[...` or `- - - -...` would overflow the stack. No real configuration
/// comes near these limits.
enum NestingLimit {
    static let maxBytes = 1 << 20
    static let maxDepth = 64
    static let maxIndentation = 256

    /// The first place the text goes past a limit: its 1-based line and what is wrong, or nil.
    static func violation(in text: String) -> (line: Int, message: String)? {
        if text.utf8.count > maxBytes { return (1, "the file is larger than \(maxBytes / 1024) KB") }
        var line = 1
        var flowDepth = 0
        var atLineStart = true
        var indentation = 0
        var blockDepth = 0  // Compact block entries on one line: "- - - x".
        var quote: UInt8?
        var escaped = false
        var inComment = false
        var previous: UInt8 = UInt8(ascii: "\n")
        for byte in text.utf8 {
            defer { previous = byte }
            if byte == UInt8(ascii: "\n") {
                line += 1
                atLineStart = true
                indentation = 0
                blockDepth = 0
                inComment = false
                if quote == UInt8(ascii: "'") || quote == UInt8(ascii: "\"") { escaped = false }
                continue
            }
            if inComment { continue }
            if let open = quote {
                if open == UInt8(ascii: "\"") && byte == UInt8(ascii: "\\") && !escaped {
                    escaped = true
                    continue
                }
                if byte == open && !escaped { quote = nil }
                escaped = false
                continue
            }
            if atLineStart {
                if byte == UInt8(ascii: " ") {
                    indentation += 1
                    if indentation > maxIndentation {
                        return (line, "indented more than \(maxIndentation) columns")
                    }
                    continue
                }
                if byte == UInt8(ascii: "-") || byte == UInt8(ascii: "?") {
                    blockDepth += 1
                    if blockDepth > maxDepth { return (line, "nested more than \(maxDepth) levels deep") }
                    continue
                }
                atLineStart = false
            }
            switch byte {
            case UInt8(ascii: "#") where previous == UInt8(ascii: " ") || previous == UInt8(ascii: "\n"):
                inComment = true
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                quote = byte
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                flowDepth += 1
                if flowDepth > maxDepth { return (line, "nested more than \(maxDepth) levels deep") }
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                flowDepth = max(0, flowDepth - 1)
            default:
                break
            }
        }
        return nil
    }
}
