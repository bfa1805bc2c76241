// SPDX-License-Identifier: Apache-2.0
/// A key combination such as `ctrl+z`: modifiers held while one key is pressed, as Linux key codes.
///
/// Key codes are positions on the keyboard, not characters: `z` is `KEY_Z`, which a compositor with an AZERTY
/// layout reads as "w". Names with no position (`undo`, `redo`, `copy`…) are the dedicated keys compositors can
/// bind. Pure: parsing and the event sequence need no device.
public struct KeyChord: Sendable, Hashable, CustomStringConvertible {
    /// Modifier key codes, pressed in this order and released in the reverse.
    public var modifiers: [UInt16]
    /// The key pressed last and released first.
    public var key: UInt16

    public init(modifiers: [UInt16], key: UInt16) {
        self.modifiers = modifiers
        self.key = key
    }

    /// Parses names joined by `+` (`ctrl+z`, `shift+ctrl+z`, `undo`), case-insensitive: every name but the last
    /// must be a modifier (`ctrl`, `shift`, `alt`, `altgr`, `super`/`meta`/`logo`, and their `left`/`right`
    /// spellings); the last is any name of ``KeyChord/keyNames``.
    /// - Throws: ``ParseError`` for an empty name, an unknown name, a non-modifier before the key, or a modifier
    ///   given twice.
    public init(parsing text: String) throws(ParseError) {
        let names = text.lowercased().split(separator: "+", omittingEmptySubsequences: false).map {
            String($0).trimmingWhitespace()
        }
        guard let last = names.last, !names.contains(where: \.isEmpty) else {
            throw ParseError(text: text, reason: "a name is empty (write names joined by '+', like ctrl+z)")
        }
        var modifiers: [UInt16] = []
        for name in names.dropLast() {
            guard let code = Self.modifierNames[name] else {
                if Self.keyNames[name] != nil {
                    throw ParseError(text: text, reason: "'\(name)' is not a modifier; only the last name is a key")
                }
                throw ParseError(text: text, reason: "unknown modifier '\(name)' (ctrl, shift, alt, altgr, super)")
            }
            guard !modifiers.contains(code) else {
                throw ParseError(text: text, reason: "modifier '\(name)' given twice")
            }
            modifiers.append(code)
        }
        guard let key = Self.modifierNames[last] ?? Self.keyNames[last] else {
            throw ParseError(text: text, reason: "unknown key '\(last)'")
        }
        self.init(modifiers: modifiers, key: key)
    }

    /// What a chord cannot be parsed from, and why.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        public var text: String
        public var reason: String
        public var description: String { "invalid key chord '\(text)': \(reason)" }
    }

    /// The events that type the chord once: each modifier pressed, the key pressed, a report; then the key and
    /// the modifiers released in reverse order, a report.
    public var events: [InputEvent] {
        var events = modifiers.map { InputEvent.key($0, .press) }
        events.append(.key(key, .press))
        events.append(.report)
        events.append(.key(key, .release))
        events += modifiers.reversed().map { InputEvent.key($0, .release) }
        events.append(.report)
        return events
    }

    /// Every key code the chord uses, for the keyboard's capabilities.
    public var keyCodes: [UInt16] { modifiers + [key] }

    public var description: String {
        let names = (modifiers + [key]).map { code in
            Self.canonicalNames[code] ?? "key\(code)"
        }
        return names.joined(separator: "+")
    }

    /// Modifier names and their key codes (linux/input-event-codes.h).
    public static let modifierNames: [String: UInt16] = [
        "ctrl": 29, "control": 29, "leftctrl": 29, "rightctrl": 97,
        "shift": 42, "leftshift": 42, "rightshift": 54,
        "alt": 56, "leftalt": 56, "altgr": 100, "rightalt": 100,
        "super": 125, "meta": 125, "logo": 125, "leftmeta": 125, "rightmeta": 126,
    ]

    /// Key names and their key codes (linux/input-event-codes.h): letters and digits by their position on a US
    /// layout, function keys, navigation, editing and media keys.
    public static let keyNames: [String: UInt16] = {
        var names: [String: UInt16] = [
            "esc": 1, "escape": 1, "minus": 12, "equal": 13, "backspace": 14, "tab": 15, "enter": 28,
            "return": 28, "space": 57, "leftbrace": 26, "rightbrace": 27, "semicolon": 39, "apostrophe": 40,
            "grave": 41, "backslash": 43, "comma": 51, "dot": 52, "period": 52, "slash": 53, "capslock": 58,
            "sysrq": 99, "home": 102, "up": 103, "pageup": 104, "left": 105, "right": 106, "end": 107,
            "down": 108, "pagedown": 109, "insert": 110, "delete": 111, "mute": 113, "volumedown": 114,
            "volumeup": 115, "power": 116, "pause": 119, "compose": 127, "menu": 139, "stop": 128, "again": 129,
            "undo": 131, "copy": 133, "open": 134, "paste": 135, "find": 136, "cut": 137, "help": 138,
            "back": 158, "forward": 159, "nextsong": 163, "playpause": 164, "previoussong": 165,
            "refresh": 173, "redo": 182, "print": 210,
        ]
        let letters: [(Character, UInt16)] = [
            ("q", 16), ("w", 17), ("e", 18), ("r", 19), ("t", 20), ("y", 21), ("u", 22), ("i", 23), ("o", 24),
            ("p", 25), ("a", 30), ("s", 31), ("d", 32), ("f", 33), ("g", 34), ("h", 35), ("j", 36), ("k", 37),
            ("l", 38), ("z", 44), ("x", 45), ("c", 46), ("v", 47), ("b", 48), ("n", 49), ("m", 50),
        ]
        for (letter, code) in letters { names[String(letter)] = code }
        for digit in 1...9 { names[String(digit)] = UInt16(1 + digit) }
        names["0"] = 11
        for number in 1...10 { names["f\(number)"] = UInt16(58 + number) }
        names["f11"] = 87
        names["f12"] = 88
        return names
    }()

    /// One name per code, for ``description``: the shortest, then the first alphabetically.
    static let canonicalNames: [UInt16: String] = {
        var names: [UInt16: String] = [:]
        for (name, code) in modifierNames.merging(keyNames, uniquingKeysWith: { first, _ in first }) {
            if let known = names[code], (known.count, known) <= (name.count, name) { continue }
            names[code] = name
        }
        return names
    }()
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        let characters = Substring(self).drop(while: \.isWhitespace)
        return String(characters.reversed().drop(while: \.isWhitespace).reversed())
    }
}
