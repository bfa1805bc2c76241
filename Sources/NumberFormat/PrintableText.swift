// SPDX-License-Identifier: Apache-2.0
/// Text made safe to print on a terminal: every control character written as an escape (`\u{1B}`), so that a
/// value read from a file, a file's name or what another program said can neither move the cursor, recolour or
/// retitle a terminal, ring its bell, nor start a line that looks like another message.
///
/// The one escaper of the project: shakectl's messages, `shaked --check-config`, configuration errors and the
/// daemon's log all print values through it.
public enum PrintableText {
    /// `text` with every C0 control character, DEL and every C1 control character written as `\u{XX}` (hex,
    /// upper case: ESC is `\u{1B}`, a newline `\u{A}`).
    /// - Parameter keepingLineBreaks: keep newlines and tabs as they are, for text the program composed of
    ///   several lines (each value in it escaped already or known to be plain).
    public static func escaping(_ text: String, keepingLineBreaks: Bool = false) -> String {
        func escaped(_ scalar: Unicode.Scalar) -> Bool {
            if keepingLineBreaks && (scalar == "\n" || scalar == "\t") { return false }
            return scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
        }
        // Most text has nothing to escape: found on its bytes (a C1 character's UTF-8 starts with 0xC2).
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 }),
            text.unicodeScalars.contains(where: escaped)
        else { return text }
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count + 8)
        for scalar in text.unicodeScalars {
            if escaped(scalar) {
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
