// SPDX-License-Identifier: Apache-2.0
/// Every problem found in a set of configuration files, each naming its file, line and key.
public struct ConfigErrors: Error, Sendable, CustomStringConvertible {
    public var errors: [ConfigError]

    public init(_ errors: [ConfigError]) {
        self.errors = errors
    }

    public var description: String { errors.map(\.description).joined(separator: "\n") }
}

/// A configuration put together from a main file and drop-ins, with where each value came from.
public struct LayeredConfiguration: Sendable {
    public var configuration: ShakedConfiguration
    /// The files read, in the order they apply.
    public var files: [String]
    /// `section.key` → `FILE:LINE` of the value in force; keys not listed have their default.
    public var origins: [String: String]
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
        var files: [String] = []
        if let main, mainMustExist || ConfigFiles.exists(main) { files.append(main) }
        files += dropIns
        var problems: [ConfigError] = []
        // The winning node of each key, and the file it came from; sections in first-seen order.
        var sectionOrder: [String] = []
        var keys: [String: SectionKeys] = [:]
        var sources: [String: String] = [:]
        for file in files {
            do {
                let text = try readText(path: file)
                guard let root = try compose(text, source: file) else { continue }
                let reader = NodeReader(source: file, accounts: accounts)
                for (section, node) in try reader.mapping(root, key: nil) {
                    guard sections.contains(section) else {
                        problems.append(
                            reader.error(
                                node, key: section,
                                "unknown section; known sections: \(sections.joined(separator: ", "))"))
                        continue
                    }
                    if keys[section] == nil {
                        sectionOrder.append(section)
                        keys[section] = SectionKeys()
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
        // Each key on its own, so that one bad value does not hide the next.
        for section in sectionOrder {
            for (name, value) in keys[section]?.pairs ?? [] {
                var reader = NodeReader(source: sources["\(section).\(name)"] ?? "", accounts: accounts)
                reader.checksCombinations = false
                let single = Node(.mapping([(Node(section), Node(.mapping([(Node(name), value)])))]))
                do {
                    _ = try parse(root: single, reader: reader)
                } catch {
                    problems.append(error)
                }
            }
        }
        guard problems.isEmpty else { throw ConfigErrors(problems) }
        // Then all together, for what only the whole can break (a quiet time longer than too_long).
        let merged = Node(
            .mapping(
                sectionOrder.map { section in
                    (Node(section), Node(.mapping((keys[section]?.pairs ?? []).map { (Node($0.0), $0.1) })))
                }))
        let configuration: ShakedConfiguration
        do {
            configuration = try parse(
                root: merged,
                reader: NodeReader(source: files.last ?? "the configuration", accounts: accounts, sources: sources))
        } catch {
            throw ConfigErrors([error])
        }
        var origins: [String: String] = [:]
        for section in sectionOrder {
            for (name, value) in keys[section]?.pairs ?? [] {
                let key = "\(section).\(name)"
                origins[key] = (sources[key] ?? "?") + (value.mark.map { ":\($0.line)" } ?? "")
            }
        }
        return LayeredConfiguration(configuration: configuration, files: files, origins: origins)
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

    /// A file's text, read at most a megabyte.
    static func readText(path: String) throws(ConfigError) -> String {
        let data = try readBounded(path: path, limit: NestingLimit.maxBytes)
        guard let text = String(validating: data, as: UTF8.self) else {
            throw ConfigError(file: path, message: "is not UTF-8 text")
        }
        return text
    }
}
