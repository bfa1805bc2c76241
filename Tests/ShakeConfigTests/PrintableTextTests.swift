// SPDX-License-Identifier: Apache-2.0
import NumberFormat
import ShakeConfig
import Testing

/// Control characters from values and names are escaped in everything printed.
struct PrintableTextTests {
    @Test(arguments: [
        ("plain text, é and 😀", "plain text, é and 😀"),
        ("\u{1B}[2J\u{1B}]0;title\u{07}", #"\u{1B}[2J\u{1B}]0;title\u{7}"#),
        ("a\nb\tc\r", #"a\u{A}b\u{9}c\u{D}"#),
        ("\u{0}\u{7F}\u{85}\u{9B}31m", #"\u{0}\u{7F}\u{85}\u{9B}31m"#),
        ("\u{A0}\u{2028}", "\u{A0}\u{2028}"),
    ])
    func controlCharactersAreEscaped(text: String, printed: String) {
        #expect(PrintableText.escaping(text) == printed)
    }

    @Test func lineBreaksMayBeKept() {
        #expect(PrintableText.escaping("a\n\tb\u{1B}", keepingLineBreaks: true) == "a\n\tb\\u{1B}")
    }

    /// A double-quoted value may hold any character as an escape; an error quoting it prints it escaped, on one
    /// line.
    @Test func aConfigurationErrorQuotesValuesEscaped() {
        do {
            _ = try ConfigLoader.parse(#"logging:\#n  level: "\e]0;owned\a\nMAINPID=1\x9b""#, source: "t\u{1B}.yaml")
            Issue.record("accepted")
        } catch {
            #expect(
                error.description
                    == #"t\u{1B}.yaml:2: logging.level: '\u{1B}]0;owned\u{7}\u{A}mainpid=1\u{9B}' is not a level; "#
                    + "allowed: trace, debug, info, notice, warning, error, critical")
        }
    }
}
