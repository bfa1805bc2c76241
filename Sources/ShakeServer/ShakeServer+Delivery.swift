// SPDX-License-Identifier: Apache-2.0
import NIOCore

// Delivery: what each client's queue and the budget for all clients together decide, counted and logged.
extension ShakeServer {
    func buffer(_ line: String) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: line.utf8.count + 1)
        buffer.writeString(line)
        buffer.writeInteger(UInt8(ascii: "\n"))
        return buffer
    }

    /// What a client's queue may hold (the configuration's limits; a full replay always fits among the answers).
    var clientLimits: OutboundQueue<ByteBuffer>.Limits {
        OutboundQueue.Limits(
            queueLimit: configuration.queueLimit, dropLimit: configuration.dropLimit,
            answerLimit: max(4 * configuration.queueLimit, configuration.replayCapacity + 16))
    }

    /// Sends an event or a sample to one client, or drops it when the client (or all of them) hold too much.
    /// - Parameter clientBuffer: the configuration's ``ServerConfiguration/clientBuffer``, read once per fan-out.
    func send(
        _ client: Client, _ buffer: ByteBuffer, limits: OutboundQueue<ByteBuffer>.Limits, clientBuffer: Int
    ) {
        let owed = client.owed
        if owed > 0 && (owed + buffer.readableBytes > clientBuffer || loop.value.overBudget) {
            account(client.dropInstead(limits: limits), for: client)
        } else {
            account(client.send(buffer, limits: limits), for: client)
        }
    }

    func reply(_ client: Client, _ buffer: ByteBuffer) {
        account(client.reply(buffer, limits: clientLimits), for: client)
    }

    /// Counts and logs what a client's queue decided.
    func account(_ delivery: Client.Delivery, for client: Client) {
        switch delivery {
        case .delivered:
            break
        case .droppedOldest:
            counters.dropped += 1
        case .cutOff(let reason):
            counters.disconnectedSlow += 1
            var metadata = client.logMetadata
            switch reason {
            case .tooManyDropped(let count):
                counters.dropped += 1
                metadata["dropped"] = "\(count)"
            case .tooManyAnswers(let count):
                metadata["answers_waiting"] = "\(count)"
            }
            warn(.notReading, metadata: metadata)
        }
    }

    func owedChanged(by change: Int) {
        loop.value.owedTotal += change
        let total = loop.value.owedTotal
        if !loop.value.overBudget && total > configuration.totalBuffer {
            loop.value.overBudget = true
            warn(.overBudget, metadata: ["bytes": "\(total)"])
        } else if loop.value.overBudget && total <= configuration.totalBuffer / 4 * 3 {
            loop.value.overBudget = false
            // Clients held back while over budget go on (each handles its lines in a turn).
            for client in clients.values { client.readingResumed?() }
        }
    }
}
