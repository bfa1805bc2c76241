// SPDX-License-Identifier: Apache-2.0
public import ShakeConfig
public import ShakeServer

extension ServerConfiguration {
    /// The server's part of a configuration. Accounts that do not exist (the default admin group, or one removed
    /// since the file was read) allow nobody; root is always allowed.
    public init(_ configuration: ShakedConfiguration, accounts: AccountResolver = .system) {
        self.init()
        clients = configuration.clients
        access.subscribe = PeerRule(configuration.access.subscribe, accounts: accounts)
        access.samples = PeerRule(configuration.access.samples, accounts: accounts)
        access.simulate = PeerRule(configuration.access.simulate, accounts: accounts)
        access.key = PeerRule(configuration.access.key, accounts: accounts)
    }
}

extension PeerRule {
    init(_ rule: AccessRule, accounts: AccountResolver) {
        switch rule {
        case .everyone:
            self = .everyone
        case .accounts(let list):
            let resolved = list.compactMap { accounts.resolve($0) }
            self.init(
                users: Set(resolved.filter(\.isUser).map(\.id)), groups: Set(resolved.filter { !$0.isUser }.map(\.id)))
        }
    }
}
