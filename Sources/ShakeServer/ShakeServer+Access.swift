// SPDX-License-Identifier: Apache-2.0
import ShakeProtocol

// Access and updates: the rule each request needs, and a new configuration applied, with what a reload that
// narrows the rules takes from the clients connected.
extension ShakeServer {
    /// The access rule a request needs beyond subscribing, if any.
    func rule(for request: Request) -> PeerRule? {
        switch request {
        case .samples: configuration.access.samples
        case .simulate: configuration.access.simulate
        case .key: configuration.access.key
        case .status, .subscribe, .replay: nil
        }
    }

    /// Applies a new configuration without dropping anyone: limits apply from now on (the replay ring keeps its
    /// newest events), and clients that the new access rules no longer allow lose what they are no longer
    /// allowed: a sample stream stops, a subscriber is told and disconnected.
    public func update(_ new: ServerConfiguration) async {
        try? await eventLoop.submit { self.apply(new) }.get()
    }

    func apply(_ new: ServerConfiguration) {
        let old = configuration
        configuration = new
        ring.resize(to: new.replayCapacity)
        guard new.access != old.access else { return }
        for client in clients.values {
            guard let peer = client.peer else { continue }
            switch new.access.revocation(for: peer, wantsSamples: client.wantsSamples) {
            case .disconnect:
                logger.notice("disconnected a client no longer allowed to subscribe", metadata: peer.metadata)
                reply(
                    client,
                    buffer(ServerMessage.error(code: "forbidden", message: "no longer allowed to subscribe").line))
                _ = client.flushAndClose()
            case .stopSamples:
                logger.notice("stopped a sample stream no longer allowed", metadata: peer.metadata)
                client.wantsSamples = false
                loop.value.sampleStreams -= 1
                reply(
                    client,
                    buffer(ServerMessage.error(code: "forbidden", message: "no longer allowed to stream samples").line))
            case nil:
                break
            }
            if client.hasKey, !new.access.key.allows(peer) {
                logger.notice("stopped pressing a client's key chord no longer allowed", metadata: peer.metadata)
                client.hasKey = false
                hooks.keyEnded(client.number)
                reply(
                    client,
                    buffer(
                        ServerMessage.error(code: "forbidden", message: "no longer allowed to have keys pressed").line))
            }
        }
        listenersChanged()
    }
}
