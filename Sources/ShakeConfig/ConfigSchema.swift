// SPDX-License-Identifier: Apache-2.0
/// What a reload does with a key whose value changed.
public enum ReloadPolicy: Sendable, Hashable {
    /// Applied at once by the part of the daemon named, and logged as `name` (a section, `detector`, or a key,
    /// `sensor.always_on`).
    case applied(Applier, as: String)
    /// Left as it was until the daemon restarts; logged as `name` (a key, or a section all of whose keys wait).
    case restart(as: String)

    /// The part of the daemon that applies a key on reload.
    public enum Applier: Sendable, Hashable, CaseIterable {
        /// The detector takes new settings; a shake in progress is decided under them.
        case detector
        /// The socket server takes new limits and access rules.
        case server
        /// The log takes a new level.
        case logLevel
        /// Capture is switched on or off.
        case alwaysOn
    }

    /// The name the log gives the key under this policy.
    public var name: String {
        switch self {
        case .applied(_, let name), .restart(let name): name
        }
    }
}

/// One key of a configuration file: its name, type, allowed values, default, reload policy and a line of
/// documentation, with how it is read and compared. Everything that lists, reads, compares or documents keys reads
/// these rows (``ConfigSchema``): the loader and its lists of known keys, `--check-config`, what a reload applies
/// and the man page's test. `Configuration` is the whole file's value (``ShakedConfiguration``,
/// ``MQTTConfiguration``).
public struct ConfigKey<Configuration: Sendable>: Sendable {
    /// The section (`sensor`) and the key's name in it (`rate`).
    public let section: String
    public let name: String
    /// What is written: `number`, `true or false`, `auto, on or off`.
    public let type: String
    /// The values allowed beyond the type (`1...10000`), or empty.
    public let range: String
    public let reload: ReloadPolicy
    /// One line for a reader.
    public let doc: String
    /// Reads the key's node into a configuration; a bad value throws naming the key.
    let read: @Sendable (NodeReader, Node, String, inout Configuration) throws(ConfigError) -> Void
    /// The key's value in a configuration, as a file would write it; nil when it has none of its own (a detector
    /// parameter left to the preset, a socket path left to the environment).
    public let value: @Sendable (Configuration) -> String?
    /// Whether two configurations differ in this key.
    public let differs: @Sendable (Configuration, Configuration) -> Bool

    /// `section.name`.
    public var path: String { "\(section).\(name)" }

    init(
        _ section: String, _ name: String, type: String, range: String = "", reload: ReloadPolicy, doc: String,
        read: @escaping @Sendable (NodeReader, Node, String, inout Configuration) throws(ConfigError) -> Void,
        value: @escaping @Sendable (Configuration) -> String?,
        differs: @escaping @Sendable (Configuration, Configuration) -> Bool
    ) {
        self.section = section
        self.name = name
        self.type = type
        self.range = range
        self.reload = reload
        self.doc = doc
        self.read = read
        self.value = value
        self.differs = differs
    }

    /// A key held in one field of the configuration.
    init<Value: Equatable & Sendable>(
        _ section: String, _ name: String, _ field: any (WritableKeyPath<Configuration, Value> & Sendable),
        type: String,
        range: String = "", reload: ReloadPolicy, doc: String,
        show: @escaping @Sendable (Value) -> String?,
        parse: @escaping @Sendable (NodeReader, Node, String) throws(ConfigError) -> Value
    ) {
        self.init(
            section, name, type: type, range: range, reload: reload, doc: doc,
            read: { (reader, node, key, configuration) throws(ConfigError) in
                configuration[keyPath: field] = try parse(reader, node, key)
            },
            value: { show($0[keyPath: field]) },
            differs: { $0[keyPath: field] != $1[keyPath: field] })
    }
}

/// The rows of a configuration file, in file order, and what is derived from them.
public struct ConfigSchema<Configuration: Sendable>: Sendable {
    public let keys: [ConfigKey<Configuration>]
    /// The sections a file may have, in the order their first key is listed.
    public let sections: [String]
    private let bySection: [String: [ConfigKey<Configuration>]]

    init(_ keys: [ConfigKey<Configuration>]) {
        self.keys = keys
        var sections: [String] = []
        var bySection: [String: [ConfigKey<Configuration>]] = [:]
        for key in keys {
            if bySection[key.section] == nil { sections.append(key.section) }
            bySection[key.section, default: []].append(key)
        }
        self.sections = sections
        self.bySection = bySection
    }

    /// The keys of a section, in file order.
    public func keys(in section: String) -> [ConfigKey<Configuration>] { bySection[section] ?? [] }

    /// The row for `section.name`, or nil.
    public func key(_ section: String, _ name: String) -> ConfigKey<Configuration>? {
        bySection[section]?.first { $0.name == name }
    }

    /// Reads a document (sections of keys) over `configuration`: an unknown section or key is an error listing
    /// the known ones.
    func read(root: Node, reader: NodeReader, into configuration: inout Configuration) throws(ConfigError) {
        for (section, node) in try reader.mapping(root, key: nil) {
            guard bySection[section] != nil else { throw unknownSection(node, section, reader: reader) }
            for (name, value) in try reader.mapping(node, key: section) {
                let path = "\(section).\(name)"
                guard let key = key(section, name) else {
                    throw reader.unknown(value, key: path, known: keys(in: section).map(\.name))
                }
                try key.read(reader, value, path, &configuration)
            }
        }
    }

    func unknownSection(_ node: Node, _ section: String, reader: NodeReader) -> ConfigError {
        reader.error(node, key: section, "unknown section; known sections: \(sections.joined(separator: ", "))")
    }
}

extension ConfigSchema {
    /// The settings in a configuration, a line per section, from the rows alone: each key with a value of its own,
    /// in the schema's order, as a file writes it (`sensor:   source iio, device auto, rate 100, ...`); a key
    /// without one (a detector parameter left to the preset, a socket path left to the environment) is left out.
    /// The section names are padded to one width.
    public func summary(_ configuration: Configuration) -> [String] {
        let width = (sections.map(\.count).max() ?? 0) + 2
        return sections.map { section in
            let values = keys(in: section).compactMap { key in key.value(configuration).map { "\(key.name) \($0)" } }
            guard !values.isEmpty else { return section + ":" }
            return section + ":" + String(repeating: " ", count: width - section.count - 1)
                + values.joined(separator: ", ")
        }
    }
}
