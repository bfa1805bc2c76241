// SPDX-License-Identifier: Apache-2.0
public import FoundationEssentials
import NIOCore
public import ShakeDetection
public import ShakeProtocol

// Events to clients: each fanned out once serialized and kept for replay, samples to the streams that asked,
// and the answers the daemon sends a connection.
extension ShakeServer {
    /// Sends a detector event to every subscriber with its number, `seq`, and keeps it for replay. The numbers
    /// are given by the caller (the daemon's event path), one after the other: `hello`, `status` and `replay`
    /// speak of the last one published.
    public func publish(_ event: ShakeEvent, seq: Int, simulated: Bool = false, at date: Date = Date()) {
        onLoop { self.broadcast(event, seq: seq, simulated: simulated, date: date) }
    }

    /// Sends a raw sample to the clients that asked for samples (without them, it costs the caller an atomic
    /// load: the loop is not woken).
    public func publish(sample: Sample) {
        guard streaming.load(ordering: .relaxed) > 0 else { return }
        onLoop {
            guard self.loop.value.sampleStreams > 0 else { return }
            let buffer = self.buffer(ServerMessage.sample(sample).line)
            let limits = self.clientLimits
            let clientBuffer = self.configuration.clientBuffer
            for client in self.clients.values where client.wantsSamples {
                self.send(client, buffer, limits: limits, clientBuffer: clientBuffer)
            }
        }
    }

    /// Sends `message` to the connection numbered `connection`, if it is still open: what the daemon did with its
    /// key chord. An answer to the client's own request, never dropped.
    public func send(_ message: ServerMessage, toConnection connection: UInt64) {
        onLoop {
            guard let client = self.clients.values.first(where: { $0.number == connection }) else { return }
            self.reply(client, self.buffer(message.line))
        }
    }

    func broadcast(_ event: ShakeEvent, seq number: Int, simulated: Bool, date: Date) {
        seq = number
        let notification = ServerMessage.Notification(
            event: event, seq: seq, timestamp: Timestamp.rfc3339(date), simulated: simulated)
        let line = buffer(ServerMessage.shake(notification).line)
        ring.append(seq: seq, phase: event.phase, line: line)
        // One line for everyone: serialized once, its bytes shared by every client's socket.
        let limits = clientLimits
        let clientBuffer = configuration.clientBuffer
        let phase = event.phase
        for client in clients.values where client.wants(phase) {
            send(client, line, limits: limits, clientBuffer: clientBuffer)
        }
    }

    /// Answers `replay`: the recent events `client` wants after `since`, then whether that is all it missed.
    func replay(since: Int, to client: Client) {
        let replay = ring.replay(since: since, latest: seq, phases: client.phases)
        for line in replay.lines { reply(client, line) }
        reply(
            client,
            buffer(ServerMessage.replayed(since: since, count: replay.lines.count, complete: replay.complete).line))
    }
}
