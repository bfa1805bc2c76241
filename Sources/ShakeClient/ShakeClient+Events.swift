// SPDX-License-Identifier: Apache-2.0
public import ShakeDetection
public import ShakeProtocol

extension ShakeClient {
    /// What an event subscription reports.
    public enum Update: Sendable, Hashable {
        /// A shake event.
        case shake(ServerMessage.Notification)
        /// The daemon dropped this many events because this client read too slowly.
        case dropped(Int)
        /// Connected (again); `replayComplete` is false when the daemon's ring no longer held everything missed.
        case connected(hello: ServerMessage.Hello, replayComplete: Bool)
        /// The connection was lost; reconnecting.
        case disconnected
        /// No connection can be had yet (no daemon listening, or the daemon has no room for another client);
        /// trying again. Reported once per outage, with why.
        case waiting(reason: String)
        /// What the daemon did with the key chord asked for (``Key``) for one event.
        case key(ServerMessage.KeyReport)
    }

    /// A key chord for the daemon to press on each event of `phases` (`{"request":"key"}`), typed into this
    /// user's session only, while it is active and unlocked.
    public struct Key: Sendable, Hashable {
        public var chord: String
        public var phases: Set<ShakeEvent.Phase>

        public init(chord: String, phases: Set<ShakeEvent.Phase> = [.ended]) {
            self.chord = chord
            self.phases = phases
        }
    }

    /// Shake events, surviving daemon restarts: after a lost connection it reconnects (backing off up to two
    /// seconds) and asks for `replay` of what it missed, so no event the daemon's ring still holds is lost and
    /// none is delivered twice.
    ///
    /// - Parameters:
    ///   - phases: the phases wanted (all when empty).
    ///   - since: deliver the ring's events after this seq first.
    ///   - run: the daemon run `since` belongs to (a subscriber that remembers where it was across its own
    ///     restarts): when the daemon's run is another, everything its ring holds is delivered instead.
    ///   - reconnect: keep reconnecting (otherwise the stream ends when the connection does).
    ///   - key: a chord for the daemon to press, asked for again on every connection; what became of it comes
    ///     as ``Update/key(_:)``, and a refusal (no virtual keyboard, a chord the daemon does not know, not
    ///     allowed) ends the stream with ``ClientError/refused(code:message:)``.
    public func updates(
        phases: Set<ShakeEvent.Phase> = [], since: Int? = nil, run: String? = nil, reconnect: Bool = true,
        key: Key? = nil
    ) -> AsyncThrowingStream<Update, any Error> {
        Self.stream { continuation in
            await deliverUpdates(
                phases: phases, since: since, run: run, reconnect: reconnect, key: key, to: continuation)
        }
    }

    /// The updates of ``updates(phases:since:run:reconnect:key:)`` for the time `body` runs: when it returns or
    /// throws (or its task is cancelled, which ends the stream), the subscription stops and its connection is
    /// closed before this returns. A program that exits right after (`shakectl listen --count 1`, `shaked-mqtt`
    /// stopped) leaves no socket behind.
    public func withUpdates<Result>(
        phases: Set<ShakeEvent.Phase> = [], since: Int? = nil, run: String? = nil, reconnect: Bool = true,
        key: Key? = nil, isolation: isolated (any Actor)? = #isolation,
        _ body: (AsyncThrowingStream<Update, any Error>) async throws -> Result
    ) async throws -> Result {
        try await Self.withStream(
            isolation: isolation,
            producer: { continuation in
                await deliverUpdates(
                    phases: phases, since: since, run: run, reconnect: reconnect, key: key, to: continuation)
            },
            body)
    }

    private func deliverUpdates(
        phases: Set<ShakeEvent.Phase>, since: Int?, run: String?, reconnect: Bool, key: Key?,
        to continuation: Feed<Update>
    ) async {
        var lastSeq = since
        var lastRun = since == nil ? nil : run
        var delay = 0.1
        var waiting = false
        // A connection that fails the same way each time (a daemon sending what this client cannot read) is
        // reported once, until an event gets through.
        var lastFailure: String?
        while !Task.isCancelled {
            do {
                let connection = try await connect()
                delay = 0.1
                waiting = false
                do {
                    // A daemon that restarted counts from 1 again: everything in its ring is new to us.
                    if let run = lastRun, run != connection.hello.run { lastSeq = 0 }
                    lastRun = connection.hello.run
                    try await connection.send(.subscribe(phases: phases))
                    if let key { try await connection.send(.key(chord: key.chord, phases: key.phases)) }
                    if let seen = lastSeq { try await connection.send(.replay(since: seen)) }
                    // While the replay is under way, live events may overtake replayed ones: hold them all
                    // until the replay ends, then deliver in seq order.
                    var replaying = lastSeq != nil
                    // From here on, whatever ends this connection (a close or an error), the next one asks for
                    // everything after what this one saw.
                    if lastSeq == nil { lastSeq = connection.hello.seq }
                    var held: [ServerMessage.Notification] = []
                    if !replaying {
                        await continuation.yield(.connected(hello: connection.hello, replayComplete: true))
                    }
                    func deliver(_ notification: ServerMessage.Notification) async {
                        guard notification.seq > (lastSeq ?? 0) else { return }
                        lastSeq = notification.seq
                        lastFailure = nil
                        // The daemon sends every phase until it has read the `subscribe` (the protocol's
                        // default): one of another phase, live before the answer, is seen but not handed on.
                        guard phases.isEmpty || phases.contains(notification.event.phase) else { return }
                        await continuation.yield(.shake(notification))
                    }
                    for try await message in connection.messages {
                        switch message {
                        case .shake(let notification):
                            if replaying { held.append(notification) } else { await deliver(notification) }
                        case .replayed(_, _, let complete) where replaying:
                            replaying = false
                            await continuation.yield(.connected(hello: connection.hello, replayComplete: complete))
                            for notification in held.sorted(by: { $0.seq < $1.seq }) { await deliver(notification) }
                            held.removeAll()
                        case .dropped(let count):
                            await continuation.yield(.dropped(count))
                        case .error(let code, let message) where code == "forbidden":
                            throw ClientError.refused(code: code, message: message)
                        case .key(let report):
                            await continuation.yield(.key(report))
                        case .error(let code, let message) where key != nil && Self.keyRefusals.contains(code):
                            // The key request refused (a daemon without keys answers unknown_request): final.
                            throw ClientError.refused(code: code, message: message)
                        default:
                            continue
                        }
                    }
                } catch {
                    await connection.closeAndWait()
                    throw error
                }
                // The messages end when the daemon closes the connection, or when this task is cancelled: then
                // the socket is still open.
                await connection.closeAndWait()
                guard reconnect else { break }
                await continuation.yield(.disconnected)
            } catch let error as ClientError where !error.isReadFailure {
                // Too many clients is worth waiting out (the protocol says so); any other refusal is final.
                if case .refused(let code, _) = error, code != "too_many_clients" {
                    continuation.finish(throwing: error)
                    return
                }
                guard reconnect else { continuation.finish(throwing: error); return }
                if !waiting {
                    waiting = true
                    await continuation.yield(.waiting(reason: error.description))
                }
                // A full daemon is not helped by clients coming back at once: wait longer, and not in step.
                if case .refused = error { delay = max(delay, 1 + Double.random(in: 0..<1)) }
            } catch {
                guard reconnect else { continuation.finish(throwing: error); return }
                if !Task.isCancelled, "\(error)" != lastFailure {
                    lastFailure = "\(error)"
                    await continuation.yield(.waiting(reason: "the connection failed: \(error)"))
                }
            }
            try? await Task.sleep(nanoseconds: UInt64(delay * 1e9))
            delay = min(2, delay * 2)
        }
        continuation.finish()
    }

    /// The errors that answer a `key` request: asking again would be refused again.
    static let keyRefusals: Set<String> = [
        "key_unavailable", "bad_value", "wrong_type", "missing_field", "unknown_field", "unknown_request",
    ]

    /// Shake events only (see ``updates(phases:since:reconnect:)``).
    public func events(
        phases: Set<ShakeEvent.Phase> = [], since: Int? = nil, reconnect: Bool = true
    ) -> AsyncThrowingStream<ServerMessage.Notification, any Error> {
        Self.stream { continuation in
            do {
                for try await update in updates(phases: phases, since: since, reconnect: reconnect) {
                    if case .shake(let notification) = update { await continuation.yield(notification) }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
    }
}

extension ClientError {
    /// A connection made and then failed on what the daemon sent (a line too long): reported as any other
    /// connection that failed, once until an event gets through, not as a wait for the daemon.
    var isReadFailure: Bool {
        if case .lineTooLong = self { true } else { false }
    }
}
