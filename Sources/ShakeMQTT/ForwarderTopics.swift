// SPDX-License-Identifier: Apache-2.0
import ShakeDetection
public import ShakeProtocol

/// One MQTT message to send.
public struct OutgoingMessage: Sendable, Hashable {
    public var topic: String
    public var payload: String
    public var qos: Int
    public var retain: Bool

    public init(topic: String, payload: String, qos: Int, retain: Bool) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }
}

/// The topic layout and the payloads, pure: `PREFIX/DEVICE/event` (each event, the protocol's own object with the
/// daemon's `run` added), a retained `PREFIX/DEVICE/availability` (`online`/`offline`, the last will), a retained
/// `PREFIX/DEVICE/state` (the sensor, the sensitivity, whether the daemon is reachable).
public struct ForwarderTopics: Sendable, Hashable {
    public var prefix: String
    public var device: String

    public init(prefix: String, device: String) {
        self.prefix = prefix
        self.device = device
    }

    public var base: String { "\(prefix)/\(device)" }
    public var event: String { "\(base)/event" }
    public var availability: String { "\(base)/availability" }
    public var state: String { "\(base)/state" }

    public static let online = "online"
    public static let offline = "offline"

    /// The event as the daemon sent it, with the daemon's `run` (so that a consumer can tell events of two
    /// daemon runs apart by `run` and `seq`).
    public static func eventPayload(_ notification: ServerMessage.Notification, run: String) -> String {
        var line = ServerMessage.shake(notification).line
        line.removeLast()  // The closing brace.
        return line + ",\"run\":" + JSONObjectWriter.quoted(run) + "}"
    }

    public func eventMessage(_ notification: ServerMessage.Notification, run: String, qos: Int) -> OutgoingMessage {
        OutgoingMessage(topic: event, payload: Self.eventPayload(notification, run: run), qos: qos, retain: false)
    }

    public func availabilityMessage(online: Bool) -> OutgoingMessage {
        OutgoingMessage(topic: availability, payload: online ? Self.online : Self.offline, qos: 1, retain: true)
    }

    /// What the state topic says: the daemon reachable or not, its sensor (from its `hello`) and the detector's
    /// sensitivity (from the daemon's configuration, when readable).
    public struct State: Sendable, Hashable {
        public var daemon: Bool
        public var sensor: SensorInfo?
        public var sensitivity: String?
        public var run: String?

        public init(daemon: Bool, sensor: SensorInfo? = nil, sensitivity: String? = nil, run: String? = nil) {
            self.daemon = daemon
            self.sensor = sensor
            self.sensitivity = sensitivity
            self.run = run
        }

        public var json: String {
            var writer = JSONObjectWriter()
            writer.add("daemon", daemon ? "connected" : "disconnected")
            if let sensor { writer.add("sensor", rawJSON: sensor.json) }
            if let sensitivity { writer.add("sensitivity", sensitivity) }
            if let run { writer.add("run", run) }
            return writer.result
        }
    }

    public func stateMessage(_ state: State) -> OutgoingMessage {
        OutgoingMessage(topic: self.state, payload: state.json, qos: 1, retain: true)
    }

    /// Empty retained messages that take this device's retained topics away (retiring it).
    public var clearing: [OutgoingMessage] {
        [availability, state].map { OutgoingMessage(topic: $0, payload: "", qos: 1, retain: true) }
    }
}

/// The device's topic level when the configuration names none: the machine id, else the host name, made a valid
/// topic level.
public enum DeviceName {
    /// - Parameters:
    ///   - machineID: the contents of `/etc/machine-id`, or nil.
    ///   - hostName: the host name.
    public static func choose(machineID: String?, hostName: String) -> String {
        let id = machineID?.split(whereSeparator: { $0 == "\n" || $0 == " " }).first.map(String.init) ?? ""
        if id.count >= 8, id.allSatisfy({ $0.isHexDigit }) { return id.lowercased() }
        let cleaned = String(
            hostName.unicodeScalars.map { scalar -> Character in
                scalar == "/" || scalar == "+" || scalar == "#" || scalar.value < 0x21 || scalar.value == 0x7F
                    ? "_" : Character(scalar)
            }
            .prefix(64))
        return cleaned.isEmpty ? "shaked" : cleaned
    }
}
