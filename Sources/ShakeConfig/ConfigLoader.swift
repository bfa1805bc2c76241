// SPDX-License-Identifier: Apache-2.0
public import ShakeDetection

#if canImport(Glibc)
    import Glibc
#endif

/// Reads and validates the configuration file (YAML).
///
/// Validation is strict: an unknown key, a value of the wrong type or out of range is an error that names the
/// key and says what is allowed, so that a typo never silently leaves a default in place.
public enum ConfigLoader {
    /// Reads a configuration file.
    /// - Parameter accounts: looks up the users and groups the file names.
    /// - Throws: ``ConfigError``.
    public static func load(path: String, accounts: AccountResolver = .system) throws(ConfigError)
        -> ShakedConfiguration
    {
        try parse(try readText(path: path), source: path, accounts: accounts)
    }

    /// Reads at most `limit` bytes: a larger file is refused after reading one byte past the limit, never read
    /// whole (a reload of a huge file must not cost the daemon its memory). A file that is not regular (a FIFO, a
    /// device, a folder) or that others could have written is refused before anything is read.
    static func readBounded(path: String, limit: Int) throws(ConfigError) -> [UInt8] {
        let bytes: [UInt8]
        do {
            bytes = try ConfigFiles.read(path, upTo: limit)
        } catch {
            switch error {
            case .system(let number):
                throw ConfigError(
                    file: path,
                    message: number == ENOENT ? "no such file" : "cannot be read: \(String(cString: strerror(number)))")
            case .untrusted(let problem):
                throw ConfigError(file: path, message: problem)
            }
        }
        guard bytes.count <= limit else {
            throw ConfigError(file: path, line: 1, message: "the file is larger than \(limit / 1024) KB")
        }
        return bytes
    }

    /// The sections a file may have.
    public static var sections: [String] { ShakedConfiguration.schema.sections }

    /// Parses configuration text; `source` names it in errors.
    public static func parse(_ text: String, source: String, accounts: AccountResolver = .system) throws(ConfigError)
        -> ShakedConfiguration
    {
        guard let root = try compose(text, source: source) else { return ShakedConfiguration() }  // Empty: defaults.
        return try parse(root: root, reader: NodeReader(source: source, accounts: accounts))
    }

    /// The YAML document of a file's text, or nil for an empty one.
    static func compose(_ text: String, source: String) throws(ConfigError) -> Node? {
        if let (line, message) = NestingLimit.violation(in: text) {
            throw ConfigError(file: source, line: line, message: message)
        }
        do {
            return try YAMLReader.read(text)
        } catch {
            throw ConfigError(
                file: source, line: error.mark.line,
                message: "not valid YAML: \(error.message) (column \(error.mark.column))")
        }
    }

    /// Validates a document (sections of keys) into a configuration over the defaults, key by key as
    /// ``ShakedConfiguration/schema`` says, then the detector's parameters together.
    static func parse(root: Node, reader: NodeReader) throws(ConfigError) -> ShakedConfiguration {
        var configuration = ShakedConfiguration()
        try ShakedConfiguration.schema.read(root: root, reader: reader, into: &configuration)
        // The combination must hold for the section's own preset too (e.g. began_reversals <= reversals).
        guard let (key, message) = detectorProblem(configuration) else { return configuration }
        // At the line of the parameter named, when the section sets it.
        let section = try reader.mapping(root, key: nil).first { $0.0 == "detector" }?.1
        let culprit = try section.flatMap { section throws(ConfigError) in
            try reader.mapping(section, key: "detector").first { "detector.\($0.0)" == key }?.1
        }
        throw reader.error(culprit ?? section ?? root, key: key, message)
    }
}

/// Walks YAML nodes, turning every surprise into a ``ConfigError`` with the key's path and line.
struct NodeReader {
    /// The file read, named in every error.
    let source: String
    let accounts: AccountResolver

    func error(_ node: Node, key: String?, _ message: String) -> ConfigError {
        ConfigError(file: source, line: node.mark.map { $0.line }, key: key, message: message)
    }

    /// The pairs of a mapping, keys as strings, in file order; duplicate keys are an error.
    func mapping(_ node: Node, key: String?) throws(ConfigError) -> [(String, Node)] {
        // A section whose keys are all commented out is empty (YAML null): it keeps every default.
        if key != nil, let scalar = node.scalar, scalar.resolved == .null {
            return []
        }
        guard case .mapping(let mapping) = node.content else {
            throw error(node, key: key, "expected a mapping of keys to values")
        }
        var seen = Set<String>()
        var pairs: [(String, Node)] = []
        for (keyNode, value) in mapping {
            guard let name = keyNode.scalar?.string else {
                throw error(keyNode, key: key, "keys must be plain names")
            }
            let path = key.map { "\($0).\(name)" } ?? name
            guard seen.insert(name).inserted else { throw error(keyNode, key: path, "appears twice") }
            pairs.append((name, value))
        }
        return pairs
    }
}

extension ConfigLoader {
    /// The detector's settings as a command line asks for them: the preset it names (else the file's, else
    /// medium), adjusted by the configuration file's explicit parameters, validated.
    /// - Returns: the settings, and the preset they start from.
    /// - Throws: ``ConfigError`` for the file, `DetectorSettings.InvalidSetting` for the combination.
    public static func detectorSettings(
        configPath: String?, sensitivity: DetectorSettings.Sensitivity?
    ) throws -> (settings: DetectorSettings, preset: DetectorSettings.Sensitivity) {
        let section = try configPath.map { try load(path: $0).detector } ?? ShakedConfiguration.DetectorSection()
        let settings = section.settings(sensitivity: sensitivity)
        try settings.validate()
        return (settings, sensitivity ?? section.sensitivity)
    }
}
