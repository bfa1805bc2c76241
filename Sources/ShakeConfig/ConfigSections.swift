// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
    import Glibc
#endif

/// Looks up the users and groups a configuration names, so that a typo is caught when the file is read.
public struct AccountResolver: Sendable {
    public var user: @Sendable (String) -> UInt32?
    public var group: @Sendable (String) -> UInt32?

    public init(user: @escaping @Sendable (String) -> UInt32?, group: @escaping @Sendable (String) -> UInt32?) {
        self.user = user
        self.group = group
    }

    /// The system's accounts (`/etc/passwd`, `/etc/group` and whatever NSS adds).
    public static let system = AccountResolver(
        user: { name in getpwnam(name).map { $0.pointee.pw_uid } },
        group: { name in getgrnam(name).map { $0.pointee.gr_gid } })

    /// Takes every name as an account that exists, without looking it up: for a reader that needs no account
    /// (the udev hand-over decides from the sensor's settings alone), so that a slow directory service (sssd,
    /// LDAP) cannot hold it up. A name resolves to `UInt32.max`, which is no account's id.
    public static let unchecked = AccountResolver(user: { _ in .max }, group: { _ in .max })

    /// Resolves to a number, or nil when no such account exists (numbers are taken as they are).
    public func resolve(_ account: Account) -> (isUser: Bool, id: UInt32)? {
        switch account {
        case .user(.number(let id)): (true, id)
        case .group(.number(let id)): (false, id)
        case .user(.name(let name)): user(name).map { (true, $0) }
        case .group(.name(let name)): group(name).map { (false, $0) }
        }
    }
}

/// Where samples come from, as `--source` or `sensor.source` names it.
public enum SourceSpec: Sendable, Hashable, CustomStringConvertible {
    /// Linux IIO through libiio; nil for the local context.
    case iio(uri: String?)
    case replay(path: String)

    public init?(parsing text: String) {
        if text == "iio" {
            self = .iio(uri: nil)
        } else if text.hasPrefix("iio:"), text.count > 4 {
            self = .iio(uri: String(text.dropFirst(4)))
        } else if text.hasPrefix("replay:"), text.count > 7 {
            self = .replay(path: String(text.dropFirst(7)))
        } else {
            return nil
        }
    }

    /// The source as it is written: `iio`, `iio:URI`, `replay:FILE`.
    public var description: String {
        switch self {
        case .iio(nil): "iio"
        case .iio(let uri?): "iio:\(uri)"
        case .replay(let path): "replay:\(path)"
        }
    }
}

extension NodeReader {
    func unknown(_ node: Node, key: String, known: [String]) -> ConfigError {
        error(node, key: key, "unknown key; known keys: \(known.joined(separator: ", "))")
    }

    /// `everyone`, `root`, or a list of `user:NAME` and `group:NAME` entries.
    func accessRule(_ node: Node, key: String) throws(ConfigError) -> AccessRule {
        let allowed = "allowed: everyone, root, or a list of user:NAME and group:NAME"
        if let scalar = node.scalar {
            if let problem = Self.nullProblem(scalar) { throw error(node, key: key, problem) }
            switch scalar.string {
            case "everyone": return .everyone
            case "root": return .accounts([])
            default: throw error(node, key: key, "'\(scalar.string)' is not a rule; \(allowed)")
            }
        }
        guard case .sequence(let sequence) = node.content else { throw error(node, key: key, allowed) }
        var accounts: [Account] = []
        for item in sequence {
            guard let scalar = item.scalar else { throw error(item, key: key, allowed) }
            if let problem = Self.nullProblem(scalar) { throw error(item, key: key, problem) }
            let text = scalar.string
            accounts.append(try account(text, node: item, key: key))
        }
        return .accounts(accounts)
    }

    func account(_ text: String, node: Node, key: String) throws(ConfigError) -> Account {
        guard let account = Account(parsing: text) else {
            throw error(node, key: key, "'\(text)' is not user:NAME or group:NAME")
        }
        guard accounts.resolve(account) != nil else {
            switch account {
            case .user(let id): throw error(node, key: key, "no user named '\(id)'")
            case .group(let id): throw error(node, key: key, "no group named '\(id)'")
            }
        }
        return account
    }
}
