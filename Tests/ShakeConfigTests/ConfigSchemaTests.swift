// SPDX-License-Identifier: Apache-2.0
import IIOModel
import Testing

@testable import ShakeConfig

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

    /// A configuration of two keys in one section, declared as a key of shaked.yaml or mqtt.yaml is: its rows are
    /// all the layered loader, the lists of known keys, the summary and the check's lines need.
    struct Toy: Sendable, Hashable {
        var rate = 10
        var name: String?
    }

    static let toy = ConfigSchema<Toy>([
        ConfigKey(
            "part", "rate", \Toy.rate, type: "whole number", range: "1...100", reload: .restart(as: "part.rate"),
            doc: "A rate.", show: { String($0) }
        ) { (reader, node, key) throws(ConfigError) in try reader.integer(node, key: key, in: 1...100) },
        ConfigKey(
            "part", "name", \Toy.name, type: "text", reload: .restart(as: "part.name"), doc: "A name.", show: { $0 }
        ) { (reader, node, key) throws(ConfigError) in try reader.string(node, key: key) },
    ])

    /// Files for ``toy``, by name.
    static func layered(_ files: KeyValuePairs<String, String>) throws(ConfigErrors) -> Layered<Toy> {
        let texts = Dictionary(uniqueKeysWithValues: files.map { ($0.key, $0.value) })
        return try toy.layered(
            files: files.map(\.key), defaults: Toy(), accounts: .unchecked,
            document: { (file) throws(ConfigError) in try ConfigLoader.compose(texts[file] ?? "", source: file) })
    }

    @Test func aRowIsAllAKeyNeeds() throws {
        var layered = try Self.layered(["main.yaml": "part:\n  rate: 20\n", "10-name.yaml": "part:\n  name: hall\n"])
        #expect(layered.configuration == Toy(rate: 20, name: "hall"))
        #expect(layered.origins == ["part.rate": "main.yaml:2", "part.name": "10-name.yaml:2"])
        #expect(Self.toy.summary(layered.configuration) == ["part: rate 20, name hall"])
        layered.override(\.rate, with: 30, key: "part.rate", option: "--rate")
        #expect(
            layered.keyLines(Self.toy) == [
                "part.rate: 30  (the command line (--rate))", "part.name: hall  (10-name.yaml:2)",
            ])
        #expect(Self.toy.summary(Toy()) == ["part: rate 10"])
        #expect(
            try Self.layered([:]).keyLines(Self.toy, unset: ["part.name": "the host's"])[1]
                == "part.name: the host's  (default)")
        #expect {
            try Self.layered(["main.yaml": "part:\n  size: 1\n  rate: 0\n"])
        } throws: { error in
            (error as? ConfigErrors)?.errors == [
                ConfigError(
                    file: "main.yaml", line: 2, key: "part.size", message: "unknown key; known keys: rate, name"),
                ConfigError(
                    file: "main.yaml", line: 3, key: "part.rate", message: "0 is out of range; allowed: 1...100"),
            ]
        }
    }

    /// The daemon's summary is the schema's: a line per section, each key with a value as a file writes it.
    @Test func theSummaryShowsEveryKeyWithAValue() throws {
        var configuration = try parse("sensor:\n  rate: 50\ndetector:\n  threshold: 14\n")
        configuration.socket.path = "/run/x.sock"
        let lines = schema.summary(configuration)
        #expect(lines.count == schema.sections.count)
        #expect(lines.first?.hasPrefix("sensor:   source iio, device auto, rate 50, always_on false, ") == true)
        #expect(lines.contains("detector: sensitivity medium, threshold 14"))
        #expect(lines.contains("socket:   path /run/x.sock, mode 0666"))
        #expect(lines.last == "dbus:     mode auto")
    }
}
