// SPDX-License-Identifier: Apache-2.0
import NIOCore
import ShakeDetection
import ShakeProtocol

// Request handling: one line at a time, in turns shared by all clients, and what a bad line costs its sender.
extension ShakeServer {
    /// Request lines all clients together may have handled in one turn of the loop, and one client before the
    /// others get theirs: requests are served in turns, so many clients sending at once delay each other (and
    /// the watchdog's keep-alive, and a fresh client) by a turn, not by all they sent.
    static let linesPerTurn = 64
    static let linesPerClientTurn = 4
    /// A client with fewer lines handled than this goes ahead of the others in a turn: a fresh client's `status`
    /// is not held up by clients that have asked thousands of times.
    static let newcomerLines = 16
    /// The pause between two turns of requests, in which the loop does its other work.
    static let turnPause = TimeAmount.milliseconds(1)
    /// How long a connection that asks for nothing waits before it keeps the sensor capturing: long enough for a
    /// `status` to be asked, answered and the connection closed, short against a shake.
    static let listenerGrace = TimeAmount.milliseconds(500)

    func receive(_ frame: LineSplitter.Frame, from client: Client) {
        let request: Request
        do {
            switch frame {
            case .tooLong:
                throw RequestError.tooLong(limit: configuration.maxLineLength)
            case .line(let line):
                // Not free: an empty line is a bad line, or a flood of them would cost the daemon and nobody else.
                if line.readableBytes == 0 { throw RequestError.emptyLine }
                request = try Request.parse(line.readableBytesView)
            }
        } catch let error as RequestError {
            reject(client, error)
            return
        } catch {
            return
        }
        if let rule = rule(for: request), !(client.peer.map(rule.allows) ?? false) {
            // Without the peer's credentials nothing privileged is allowed.
            counters.refusedRequests += 1
            var metadata = client.logMetadata
            metadata["request"] = "\(request.name)"
            warn(.refusedRequest, metadata: metadata)
            // Refused requests count as bad lines: a client that keeps asking is disconnected like one that
            // keeps sending garbage.
            let needs = request.isPrivileged ? "root or an admin group" : "an account access.\(request.name) allows"
            reject(client, RequestError(code: "forbidden", message: "\(request.name) needs \(needs)"))
            return
        }
        switch request {
        case .status:
            reply(client, buffer(ServerMessage.status(statusAnswer()).line))
        case .subscribe(let phases):
            client.phases = phases.isEmpty ? Set(ShakeEvent.Phase.allCases) : phases
            client.isSubscriber = true
            reply(client, buffer(ServerMessage.ok(request: "subscribe").line))
            keepsCapture(client)
        case .replay(let since):
            replay(since: since, to: client)
        case .samples:
            if !client.wantsSamples { loop.value.sampleStreams += 1 }
            client.wantsSamples = true
            reply(client, buffer(ServerMessage.ok(request: "samples").line))
            client.keepsCapture = true
            listenersChanged()
        case .simulate:
            logger.info("simulating a shake", metadata: client.peer?.metadata ?? [:])
            hooks.simulate(client.peer?.uid)
            reply(client, buffer(ServerMessage.ok(request: "simulate").line))
        case .key(let chord, let phases):
            // The rule above refused a peer the kernel did not name.
            guard let user = client.peer?.uid else { return }
            if let error = hooks.key(client.number, user, chord, phases) {
                reject(client, error)
                return
            }
            client.hasKey = true
            reply(client, buffer(ServerMessage.ok(request: "key").line))
            keepsCapture(client)
        }
    }

    func reject(_ client: Client, _ error: RequestError) {
        if error.code != "forbidden" { counters.badLines += 1 }
        client.badLines += 1
        reply(client, buffer(ServerMessage.error(code: error.code, message: error.message).line))
        if client.badLines >= configuration.maxBadLines {
            warn(.badLines, metadata: client.logMetadata)
            reply(
                client,
                buffer(
                    ServerMessage.error(
                        code: "too_many_errors", message: "disconnected after \(configuration.maxBadLines) bad lines"
                    ).line))
            _ = client.flushAndClose()
        }
    }

    /// The longest request line now: a reload changes it for connections already open too.
    var maxLineLength: Int { configuration.maxLineLength }

    /// Whether `client`'s requests may be read and handled now: the kernel has taken everything sent to it. A
    /// client that asks without reading thus gets no more answers than its socket buffer holds before it stalls
    /// itself, whatever it sent: answering is what costs the daemon.
    func mayRead(_ client: Client) -> Bool {
        client.owed == 0
    }

    /// Takes one line out of this turn's allowance. - Returns: false when the turn is used up: wait for the next.
    func takeLine() -> Bool {
        let (allowed, schedule) = loop.value.turns.takeLine()
        if schedule { scheduleTurn() }
        return allowed
    }

    /// Whether clients wait for a turn.
    var othersWaitForTurn: Bool { loop.value.turns.othersWait }

    /// Runs `work` in the next turn, after those already waiting (a newcomer: after the newcomers waiting, ahead
    /// of the others).
    func waitForTurn(newcomer: Bool, _ work: @escaping () -> Void) {
        if loop.value.turns.wait(work, newcomer: newcomer) { scheduleTurn() }
    }

    /// A new turn a pause from now (not at once: NIO runs tasks that schedule tasks without returning to the
    /// sockets, so that would starve them), performing what ``RequestTurns`` hands out.
    func scheduleTurn() {
        eventLoop.assumeIsolated().scheduleTask(in: Self.turnPause) { [self] in
            loop.value.turns.beginTurn()
            while let work = loop.value.turns.next() { work() }
            if loop.value.turns.endTurn() { scheduleTurn() }
        }
    }
}
