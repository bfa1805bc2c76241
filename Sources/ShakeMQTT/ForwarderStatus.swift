// SPDX-License-Identifier: Apache-2.0
/// What the forwarder is doing, as `shaked-mqtt --status` prints it and the status file holds it (`key=value`
/// lines, written whole on every change), and as the one-line `STATUS=` systemd shows.
public struct ForwarderStatus: Sendable, Hashable {
    public var broker: String
    public var brokerConnected: Bool
    public var daemonConnected: Bool
    /// Events waiting or in flight.
    public var queued: Int
    public var published: Int
    public var dropped: Int
    /// Why the broker connection is down, when it is.
    public var lastError: String?

    public init(
        broker: String, brokerConnected: Bool, daemonConnected: Bool, queued: Int, published: Int, dropped: Int,
        lastError: String? = nil
    ) {
        self.broker = broker
        self.brokerConnected = brokerConnected
        self.daemonConnected = daemonConnected
        self.queued = queued
        self.published = published
        self.dropped = dropped
        self.lastError = lastError
    }

    public var fileText: String {
        var lines = [
            "broker=\(broker)",
            "broker_connected=\(brokerConnected ? "yes" : "no")",
            "daemon_connected=\(daemonConnected ? "yes" : "no")",
            "queued=\(queued)",
            "published=\(published)",
            "dropped=\(dropped)",
        ]
        if let lastError { lines.append("last_error=\(Self.oneLine(lastError))") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The status file's text read back; nil when it is not one.
    public init?(fileText: String) {
        var values: [String: String] = [:]
        for line in fileText.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { return nil }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        guard let broker = values["broker"], let queued = values["queued"].flatMap({ Int($0) }),
            let published = values["published"].flatMap({ Int($0) }),
            let dropped = values["dropped"].flatMap({ Int($0) })
        else { return nil }
        self.init(
            broker: broker, brokerConnected: values["broker_connected"] == "yes",
            daemonConnected: values["daemon_connected"] == "yes", queued: queued, published: published,
            dropped: dropped, lastError: values["last_error"])
    }

    /// `connected to mqtt://host:1883; daemon connected; 0 queued, 12 published, 0 dropped`.
    public var summary: String {
        let broker = brokerConnected ? "connected to \(broker)" : "not connected to \(broker)"
        let daemon = daemonConnected ? "daemon connected" : "daemon not connected"
        var text = "\(broker); \(daemon); \(queued) queued, \(published) published, \(dropped) dropped"
        if !brokerConnected, let lastError { text += "; last error: \(Self.oneLine(lastError))" }
        return text
    }

    static func oneLine(_ text: String) -> String {
        String(text.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
    }
}

/// The last event the broker acknowledged, kept across the forwarder's restarts (`RUN SEQ`), so that it resumes
/// after it with the daemon's replay: nothing sent twice, nothing skipped that the daemon's ring still holds.
public struct DeliveryCursor: Sendable, Hashable {
    public var run: String
    public var seq: Int

    public init(run: String, seq: Int) {
        self.run = run
        self.seq = seq
    }

    public var fileText: String { "\(run) \(seq)\n" }

    public init?(fileText: String) {
        let parts = fileText.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64, let seq = Int(parts[1]), seq >= 0 else {
            return nil
        }
        self.init(run: String(parts[0]), seq: seq)
    }
}
