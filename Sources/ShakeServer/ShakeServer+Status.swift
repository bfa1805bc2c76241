// SPDX-License-Identifier: Apache-2.0
import ShakeProtocol

// Status: the server's own counters, added to the daemon's in a `status` answer, and the uptime.
extension ShakeServer {
    struct ServerCounters {
        var connections = 0
        var refused = 0
        var refusedRequests = 0
        var badLines = 0
        var dropped = 0
        var disconnectedSlow = 0
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The answer to `status`: the daemon's state and counters, with the server's own.
    func statusAnswer() -> ServerMessage.Status {
        let status = hooks.status()
        var counters = status.counters
        counters["clients_refused"] = self.counters.refused
        counters["requests_refused"] = self.counters.refusedRequests
        counters["clients_cut_off"] = self.counters.disconnectedSlow
        counters["connections"] = self.counters.connections
        counters["bad_lines"] = self.counters.badLines
        counters["events_dropped"] = self.counters.dropped
        return ServerMessage.Status(
            // The others: the connection asking is not counted among those it asks about.
            sensor: status.sensor, subscribers: clients.count - 1,
            shaking: status.shaking,
            seq: seq, uptime: Self.seconds(started.duration(to: .now)), counters: counters)
    }
}
