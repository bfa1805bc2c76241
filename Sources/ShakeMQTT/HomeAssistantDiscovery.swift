// SPDX-License-Identifier: Apache-2.0
public import ShakeDetection
import ShakeProtocol

/// Home Assistant's MQTT discovery for one device, pure: an `event` entity whose event types are the phases sent
/// (Home Assistant ≥ 2023.8), and one device trigger per phase (`device_automation`), so that a shake is both an
/// entity with a history and something an automation's "device" trigger offers. All retained, all tied to one
/// device (`identifiers`) with the availability topic; an empty retained payload on the same topics removes them.
public struct HomeAssistantDiscovery: Sendable, Hashable {
    public var discoveryPrefix: String
    public var topics: ForwarderTopics
    public var phases: [ShakeEvent.Phase]
    /// The device's name in Home Assistant (the host name, usually).
    public var deviceName: String
    public var softwareVersion: String

    public init(
        discoveryPrefix: String, topics: ForwarderTopics, phases: Set<ShakeEvent.Phase>, deviceName: String,
        softwareVersion: String
    ) {
        self.discoveryPrefix = discoveryPrefix
        self.topics = topics
        self.phases = ShakeEvent.Phase.allCases.filter { phases.contains($0) }
        self.deviceName = deviceName
        self.softwareVersion = softwareVersion
    }

    /// The id shared by this device's entities: `shaked_DEVICE` (a topic level and an id both).
    public var nodeID: String {
        "shaked_" + String(topics.device.unicodeScalars.map { Self.isIDCharacter($0) ? Character($0) : "_" })
    }

    static func isIDCharacter(_ scalar: Unicode.Scalar) -> Bool {
        (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z") || (scalar >= "0" && scalar <= "9")
            || scalar == "_" || scalar == "-"
    }

    public var eventTopic: String { "\(discoveryPrefix)/event/\(nodeID)/shake/config" }

    public func triggerTopic(_ phase: ShakeEvent.Phase) -> String {
        "\(discoveryPrefix)/device_automation/\(nodeID)/shake_\(phase.rawValue)/config"
    }

    var device: String {
        var writer = JSONObjectWriter()
        writer.add("identifiers", rawJSON: "[\(JSONObjectWriter.quoted(nodeID))]")
        writer.add("name", deviceName)
        writer.add("manufacturer", "shaked")
        writer.add("model", "shake gestures")
        writer.add("sw_version", softwareVersion)
        return writer.result
    }

    /// The event entity's configuration. Home Assistant reads `event_type` from the payload: the template adds it
    /// (the phase) to the event's own fields, which become the entity's attributes.
    public var eventConfig: String {
        var writer = JSONObjectWriter()
        writer.add("name", "Shake")
        writer.add("unique_id", "\(nodeID)_shake")
        writer.add("object_id", "\(nodeID)_shake")
        writer.add("state_topic", topics.event)
        writer.add(
            "event_types",
            rawJSON: "[" + phases.map { JSONObjectWriter.quoted($0.rawValue) }.joined(separator: ",") + "]")
        writer.add("value_template", "{{ dict(value_json, event_type=value_json.phase) | to_json }}")
        writer.add("availability_topic", topics.availability)
        writer.add("payload_available", ForwarderTopics.online)
        writer.add("payload_not_available", ForwarderTopics.offline)
        writer.add("icon", "mdi:vibrate")
        writer.add("qos", 1)
        writer.add("device", rawJSON: device)
        return writer.result
    }

    /// A device trigger for one phase: type `shake`, subtype the phase, matched on the event's `phase`.
    public func triggerConfig(_ phase: ShakeEvent.Phase) -> String {
        var writer = JSONObjectWriter()
        writer.add("automation_type", "trigger")
        writer.add("topic", topics.event)
        writer.add("type", "shake")
        writer.add("subtype", phase.rawValue)
        writer.add("payload", phase.rawValue)
        writer.add("value_template", "{{ value_json.phase }}")
        writer.add("qos", 1)
        writer.add("device", rawJSON: device)
        return writer.result
    }

    /// Every configuration message, retained.
    public var messages: [OutgoingMessage] {
        [OutgoingMessage(topic: eventTopic, payload: eventConfig, qos: 1, retain: true)]
            + phases.map { OutgoingMessage(topic: triggerTopic($0), payload: triggerConfig($0), qos: 1, retain: true) }
    }

    /// Empty retained messages on every topic this device's discovery may have used (all phases, whatever the
    /// configuration says now), which removes the device from Home Assistant.
    public var retiring: [OutgoingMessage] {
        [OutgoingMessage(topic: eventTopic, payload: "", qos: 1, retain: true)]
            + ShakeEvent.Phase.allCases.map {
                OutgoingMessage(topic: triggerTopic($0), payload: "", qos: 1, retain: true)
            }
    }
}
