// SPDX-License-Identifier: Apache-2.0
import IIOModel
import ShakeConfig
import Testing

/// The configuration's schema: one row per key, from which the loader, its known-key lists and a reload read.
struct ConfigSchemaTests {
    let schema = ShakedConfiguration.schema

    func parse(_ text: String) throws(ConfigError) -> ShakedConfiguration {
        try ConfigLoader.parse(text, source: "test.yaml", accounts: .unchecked)
    }

    @Test func everyRowIsDocumentedAndNamedOnce() {
        #expect(schema.sections == ["sensor", "detector", "socket", "clients", "access", "logging", "dbus"])
        #expect(ConfigLoader.sections == schema.sections)
        #expect(Set(schema.keys.map(\.path)).count == schema.keys.count)
        for key in schema.keys {
            #expect(!key.doc.isEmpty && !key.type.isEmpty, "\(key.path)")
            #expect(key.name.allSatisfy { $0.isLowercase || $0 == "_" }, "\(key.path)")
        }
    }

    /// Each key's default, written into a file as the schema shows it, reads back as the default: what the
    /// schema shows is what the loader takes.
    @Test func everyDefaultReadsBackAsItself() throws {
        let defaults = ShakedConfiguration()
        var shown = 0
        for key in schema.keys {
            guard let value = key.value(defaults) else { continue }
            let read = try parse("\(key.section):\n  \(key.name): \(value)\n")
            #expect(!key.differs(read, defaults), "\(key.path): \(value)")
            shown += 1
        }
        #expect(shown >= 24)
    }

    /// A value other than the default, read from a file, is seen as a change of that key alone.
    @Test func eachKeyIsReadIntoItsOwnField() throws {
        let cases = [
            ("sensor", "range", "8"), ("sensor", "rate", "200"), ("clients", "total_buffer", "2097152"),
            ("detector", "threshold", "14"), ("access", "key", "root"), ("socket", "mode", "0600"),
        ]
        for (section, name, value) in cases {
            let read = try parse("\(section):\n  \(name): \(value)\n")
            let changed = schema.keys.filter { $0.differs(read, ShakedConfiguration()) }.map(\.path)
            #expect(changed == ["\(section).\(name)"])
            #expect(schema.key(section, name)?.value(read) == value)
        }
        #expect(try parse("sensor:\n  range: keep\n").sensor.range == .keep)
        #expect(try parse("sensor:\n  range: AUTO\n").sensor.range == .automatic)
        #expect(try parse("sensor:\n  range: 2.5\n").sensor.range == .atLeast(2.5))
    }

    /// An unknown key names the section's keys as the schema lists them.
    @Test(arguments: ["sensor", "detector", "socket", "clients", "access", "logging", "dbus"])
    func anUnknownKeyListsTheSectionsKeys(section: String) {
        let known = schema.keys(in: section).map(\.name).joined(separator: ", ")
        #expect(
            throws: ConfigError(
                file: "test.yaml", line: 2, key: "\(section).nosuch", message: "unknown key; known keys: \(known)")
        ) {
            try parse("\(section):\n  nosuch: 1\n")
        }
    }
}
