// SPDX-License-Identifier: Apache-2.0
/// Every problem found in a set of configuration files, each naming its file, line and key.
public struct ConfigErrors: Error, Sendable, CustomStringConvertible {
    public var errors: [ConfigError]

    public init(_ errors: [ConfigError]) {
        self.errors = errors
    }

    public var description: String { errors.map(\.description).joined(separator: "\n") }
}

/// A configuration put together in layers, each over the one before: the defaults, the main file, its drop-ins in
/// order, then what the command line gives; with the files read and where each value in force came from.
/// The daemon's (``LayeredConfiguration``) and the MQTT forwarder's are put together the same way.
public struct Layered<Configuration: Sendable>: Sendable {
    public var configuration: Configuration
    /// The files read, in the order they apply.
    public var files: [String]
    /// `section.key` → where the value in force came from: `FILE:LINE`, or `the command line (--option)`; keys not
    /// listed have their default.
    public var origins: [String: String]

    /// Sets a key to what the command line gives, over the files', and says so in ``origins``.
    /// - Parameters:
    ///   - key: `section.key`.
    ///   - option: the option that gave it (`--rate`).
    public mutating func override<Value>(
        _ field: WritableKeyPath<Configuration, Value>, with value: Value, key: String, option: String
    ) {
        configuration[keyPath: field] = value
        origins[key] = "the command line (\(option))"
    }
}

/// The daemon's configuration in layers.
public typealias LayeredConfiguration = Layered<ShakedConfiguration>

/// The keys in force in a layered configuration, for the checks that only the whole can fail (a combination of
/// keys): the files read, and the file and line each key was set at.
struct SetKeys {
    let files: [String]
    let places: [String: (file: String, line: Int?)]

    /// An error about `key`, at the file and line that set it (else the last file read).
    func error(key: String, _ message: String) -> ConfigError {
        let place = places[key]
        return ConfigError(
            file: place?.file ?? files.last ?? "the configuration", line: place?.line, key: key, message: message)
    }
}

extension ConfigSchema {
    /// Reads `files` in order over `defaults`, later values overriding earlier ones key by key (a file's key moves
    /// to the end when it is set again). Each file is checked on its own terms (its own file and line in every
    /// message), each key read on its own so that one bad value does not hide the next, then `whole` checks what
    /// only the keys together can break; every problem is reported, not only the first.
    /// - Parameters:
    ///   - document: a file's YAML document, or nil for an empty one.
    ///   - whole: the problems of the keys together, asked only when each key is right on its own.
    /// - Throws: ``ConfigErrors`` listing every problem.
    func layered(
        files: [String], defaults: Configuration, accounts: AccountResolver,
        document: (String) throws(ConfigError) -> Node? = ConfigLoader.document(path:),
        whole: (Configuration, SetKeys) -> [ConfigError] = { _, _ in [] }
    ) throws(ConfigErrors) -> Layered<Configuration> {
        var problems: [ConfigError] = []
        // The winning node of each key, and the file it came from; sections in first-seen order.
        var sectionOrder: [String] = []
        var keys: [String: ConfigLoader.SectionKeys] = [:]
        var sources: [String: String] = [:]
        for file in files {
            do throws(ConfigError) {
                guard let root = try document(file) else { continue }
                let reader = NodeReader(source: file, accounts: accounts)
                for (section, node) in try reader.mapping(root, key: nil) {
                    guard sections.contains(section) else {
                        problems.append(unknownSection(node, section, reader: reader))
                        continue
                    }
                    if keys[section] == nil {
                        sectionOrder.append(section)
                        keys[section] = ConfigLoader.SectionKeys()
                    }
                    do {
                        for (name, value) in try reader.mapping(node, key: section) {
                            keys[section]?.set(name, value)
                            sources["\(section).\(name)"] = file
                        }
                    } catch {
                        problems.append(error)
                    }
                }
            } catch {
                problems.append(error)
            }
        }
        // Each key on its own, in the order the files left them, each from the file that set it.
        var configuration = defaults
        var places: [String: (file: String, line: Int?)] = [:]
        for section in sectionOrder {
            for (name, value) in keys[section]?.pairs ?? [] {
                let path = "\(section).\(name)"
                let file = sources[path] ?? ""
                let reader = NodeReader(source: file, accounts: accounts)
                do throws(ConfigError) {
                    guard let key = key(section, name) else {
                        throw reader.unknown(value, key: path, known: self.keys(in: section).map(\.name))
                    }
                    try key.read(reader, value, path, &configuration)
                    places[path] = (file, value.mark?.line)
                } catch {
                    problems.append(error)
                }
            }
        }
        guard problems.isEmpty else { throw ConfigErrors(problems) }
        // Then all together, for what only the whole can break (a quiet time longer than too_long).
        problems = whole(configuration, SetKeys(files: files, places: places))
        guard problems.isEmpty else { throw ConfigErrors(problems) }
        return Layered(
            configuration: configuration, files: files,
            origins: places.mapValues { place in place.file + (place.line.map { ":\($0)" } ?? "") })
    }
}

extension ConfigLoader {
    /// Where device packages put their tuning: drop-ins here apply before the administrator's.
    public static let vendorDropInDirectory = "/usr/lib/shaked/shaked.yaml.d"

    /// The drop-in files for a main file, in the order they apply: the `*.yaml` files of
    /// ``vendorDropInDirectory`` and of `MAIN.d` (for `/etc/shaked/shaked.yaml`: `/etc/shaked/shaked.yaml.d`),
    /// sorted by file name, a file of `MAIN.d` standing in for one of the same name in the vendor folder. With
    /// `vendor` nil, the files of `MAIN.d` alone.
    public static func dropIns(for main: String, vendor: String? = vendorDropInDirectory) -> [String] {
        var byName: [String: String] = [:]
        for directory in [vendor, main + ".d"].compactMap({ $0 }) {
            let names = ConfigFiles.names(in: directory) ?? []
            for name in names where name.hasSuffix(".yaml") && !name.hasPrefix(".") {
                byName[name] = directory.hasSuffix("/") ? directory + name : directory + "/" + name
            }
        }
        return byName.keys.sorted().compactMap { byName[$0] }
    }

    /// The files a main file and its drop-ins make: the main file when it exists (or must: then a missing one is
    /// an error when it is read), then the drop-ins.
    static func layerFiles(main: String?, mainMustExist: Bool, dropIns: [String]) -> [String] {
        var files: [String] = []
        if let main, mainMustExist || ConfigFiles.exists(main) { files.append(main) }
        return files + dropIns
    }

    /// Reads the main file (when `main` names one that exists, or must exist), then each drop-in in order,
    /// later values overriding earlier ones key by key. Each file is checked on its own terms (its own file and
    /// line in every message), and every problem is reported, not only the first.
    /// - Parameters:
    ///   - main: the main file, or nil for none (the defaults, then the drop-ins).
    ///   - mainMustExist: when false, a main file that does not exist counts as empty.
    /// - Throws: ``ConfigErrors`` listing every problem.
    public static func loadLayered(
        main: String?, mainMustExist: Bool = true, dropIns: [String], accounts: AccountResolver = .system
    ) throws(ConfigErrors) -> LayeredConfiguration {
        try ShakedConfiguration.schema.layered(
            files: layerFiles(main: main, mainMustExist: mainMustExist, dropIns: dropIns),
            defaults: ShakedConfiguration(), accounts: accounts,
            // A combination the detector refuses is blamed on the file and line of the parameter it names.
            whole: { configuration, set in
                detectorProblem(configuration).map { [set.error(key: $0.key, $0.message)] } ?? []
            })
    }

    /// Why the detector's parameters do not hold together (`began_reversals` above `reversals`), naming the
    /// parameter; nil when they do.
    static func detectorProblem(_ configuration: ShakedConfiguration) -> (key: String, message: String)? {
        do {
            try configuration.detector.settings().validate()
            return nil
        } catch {
            return ("detector.\(error.parameter.rawValue)", error.reason)
        }
    }

    /// The keys of one section over all the files: a later file's value replaces an earlier one's and moves to
    /// the end, as if the earlier were removed; each replacement costs the same however many keys there are.
    struct SectionKeys {
        private var entries: [(name: String, node: Node)?] = []
        private var slot: [String: Int] = [:]

        mutating func set(_ name: String, _ node: Node) {
            if let old = slot[name] { entries[old] = nil }
            slot[name] = entries.count
            entries.append((name, node))
        }

        /// The keys in force, in order.
        var pairs: [(String, Node)] { entries.compactMap { $0.map { ($0.name, $0.node) } } }
    }

    /// A file's YAML document, or nil for an empty one.
    static func document(path: String) throws(ConfigError) -> Node? {
        try compose(try readText(path: path), source: path)
    }

    /// A file's text, read at most a megabyte.
    static func readText(path: String) throws(ConfigError) -> String {
        let data = try readBounded(path: path, limit: NestingLimit.maxBytes)
        guard let text = String(validating: data, as: UTF8.self) else {
            throw ConfigError(file: path, message: "is not UTF-8 text")
        }
        return text
    }
}

extension Layered {
    /// The settings in force, a line per key of `schema` in its order, with where each came from:
    /// `section.key: VALUE  (FILE:LINE)`, `(default)` for a key nothing set. A key without a value of its own
    /// shows what `unset` says for it (what the program makes of it: a name derived from the host), else `unset`.
    public func keyLines(_ schema: ConfigSchema<Configuration>, unset: [String: String] = [:]) -> [String] {
        schema.keys.map { key in
            let value = key.value(configuration) ?? unset[key.path] ?? "unset"
            return "\(key.path): \(value)  (\(origins[key.path] ?? "default"))"
        }
    }
}
