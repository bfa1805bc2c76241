// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeDetection
import ShakeMQTT
import ShakeProtocol
import Testing

/// Topics, payloads and Home Assistant's discovery configuration, as messages.
struct PayloadTests {
    static let topics = ForwarderTopics(prefix: "home/shaked", device: "kiosk1")

    static func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func topicLayout() {
        #expect(Self.topics.event == "home/shaked/kiosk1/event")
        #expect(Self.topics.availability == "home/shaked/kiosk1/availability")
        #expect(Self.topics.state == "home/shaked/kiosk1/state")
        #expect(
            Self.topics.availabilityMessage(online: false)
                == OutgoingMessage(topic: "home/shaked/kiosk1/availability", payload: "offline", qos: 1, retain: true))
    }

    @Test func theEventPayloadIsTheProtocolsObjectWithTheRun() throws {
        let notification = ServerMessage.Notification(
            event: .ended(ShakeSummary(time: 3.62, began: 2.13, peak: 28.02, axis: .x, reversals: 11)), seq: 43,
            timestamp: "2026-11-22T03:04:06.613Z")
        let payload = ForwarderTopics.eventPayload(notification, run: "c0ffee")
        #expect(
            payload
                == #"{"event":"shake","phase":"ended","time":3.62,"began":2.13,"duration":1.49,"peak":28.02,"axis":"x","reversals":11,"seq":43,"timestamp":"2026-11-22T03:04:06.613Z","run":"c0ffee"}"#
        )
        // Still a protocol line a subscriber's parser reads.
        #expect(try ServerMessage.parse(Array(payload.utf8)) == .shake(notification))
    }

    @Test func aCancelledEventKeepsItsReasonAndDetail() throws {
        let notification = ServerMessage.Notification(
            event: .cancelled(time: 12.31, began: 11.62, reason: .notAShake, detail: .oneWay), seq: 47,
            timestamp: "2026-11-22T03:04:15.303Z", simulated: true)
        let object = try Self.object(ForwarderTopics.eventPayload(notification, run: "r"))
        #expect(object["reason"] as? String == "not_a_shake")
        #expect(object["detail"] as? String == "one_way")
        #expect(object["simulated"] as? Bool == true)
    }

    @Test func theStatePayload() throws {
        let state = ForwarderTopics.State(
            daemon: true, sensor: SensorInfo(source: "iio", name: "mma8452", rate: 100), sensitivity: "medium", run: "r"
        )
        let object = try Self.object(state.json)
        #expect(object["daemon"] as? String == "connected")
        #expect(object["sensitivity"] as? String == "medium")
        #expect((object["sensor"] as? [String: Any])?["name"] as? String == "mma8452")
    }

    @Test func retiringEmptiesTheRetainedTopics() {
        #expect(Self.topics.clearing.map(\.topic) == ["home/shaked/kiosk1/availability", "home/shaked/kiosk1/state"])
        #expect(Self.topics.clearing.allSatisfy { $0.payload.isEmpty && $0.retain })
    }

    @Test(
        arguments: [
            ("0123456789abcdef0123456789abcdef\n", "kiosk", "0123456789abcdef0123456789abcdef"),
            (nil, "kiosk-7", "kiosk-7"),
            ("", "a/b+c#d e", "a_b_c_d_e"),
            ("not hex at all\n", "", "shaked"),
        ] as [(String?, String, String)])
    func theDeviceLevel(machineID: String?, hostName: String, expected: String) {
        #expect(DeviceName.choose(machineID: machineID, hostName: hostName) == expected)
    }
}

/// Home Assistant's MQTT discovery: the keys its documentation requires for an `event` entity
/// (https://www.home-assistant.io/integrations/event.mqtt/: `state_topic`, `event_types`; `unique_id` for the
/// device registry, with `device.identifiers`) and a device trigger
/// (https://www.home-assistant.io/integrations/device_trigger.mqtt/: `automation_type` "trigger", `topic`, `type`,
/// `subtype`, `device`; topic `<prefix>/device_automation/<node_id>/<object_id>/config`).
struct DiscoveryTests {
    static let discovery = HomeAssistantDiscovery(
        discoveryPrefix: "homeassistant", topics: ForwarderTopics(prefix: "shaked", device: "ab12.cd"),
        phases: [.ended, .began], deviceName: "kiosk", softwareVersion: "0.3.0")

    @Test func theEventEntity() throws {
        let discovery = Self.discovery
        #expect(discovery.eventTopic == "homeassistant/event/shaked_ab12_cd/shake/config")
        let config = try PayloadTests.object(discovery.eventConfig)
        for key in ["state_topic", "event_types", "unique_id", "device", "availability_topic", "name"] {
            #expect(config[key] != nil, "missing \(key)")
        }
        #expect(config["state_topic"] as? String == "shaked/ab12.cd/event")
        #expect(config["event_types"] as? [String] == ["began", "ended"])
        #expect(config["availability_topic"] as? String == "shaked/ab12.cd/availability")
        let device = try #require(config["device"] as? [String: Any])
        #expect(device["identifiers"] as? [String] == ["shaked_ab12_cd"])
        #expect(device["name"] as? String == "kiosk")
        // The template gives Home Assistant the event_type it needs, from the phase.
        #expect((config["value_template"] as? String)?.contains("event_type=value_json.phase") == true)
    }

    @Test func aDeviceTriggerPerPhase() throws {
        let discovery = Self.discovery
        #expect(
            discovery.messages.map(\.topic) == [
                "homeassistant/event/shaked_ab12_cd/shake/config",
                "homeassistant/device_automation/shaked_ab12_cd/shake_began/config",
                "homeassistant/device_automation/shaked_ab12_cd/shake_ended/config",
            ])
        #expect(discovery.messages.allSatisfy { $0.retain && $0.qos == 1 })
        let trigger = try PayloadTests.object(discovery.triggerConfig(.ended))
        #expect(trigger["automation_type"] as? String == "trigger")
        #expect(trigger["topic"] as? String == "shaked/ab12.cd/event")
        #expect(trigger["type"] as? String == "shake")
        #expect(trigger["subtype"] as? String == "ended")
        #expect(trigger["payload"] as? String == "ended")
        #expect(trigger["value_template"] as? String == "{{ value_json.phase }}")
        #expect((trigger["device"] as? [String: Any])?["identifiers"] as? [String] == ["shaked_ab12_cd"])
    }

    @Test func retiringEmptiesEveryDiscoveryTopicWhateverThePhasesAreNow() {
        let retiring = Self.discovery.retiring
        #expect(retiring.count == 4)
        #expect(retiring.allSatisfy { $0.payload.isEmpty && $0.retain })
        #expect(retiring.contains { $0.topic.hasSuffix("/shake_cancelled/config") })
    }
}

struct StatusTests {
    @Test func theStatusFileReadsBack() {
        let status = ForwarderStatus(
            broker: "mqtt://localhost:1883", brokerConnected: false, daemonConnected: true, queued: 4, published: 12,
            dropped: 1, lastError: "bad user name\nor password")
        #expect(
            ForwarderStatus(fileText: status.fileText)
                == {
                    var expected = status
                    expected.lastError = "bad user name or password"
                    return expected
                }())
        #expect(status.summary.contains("not connected to mqtt://localhost:1883"))
        #expect(status.summary.contains("4 queued, 12 published, 1 dropped"))
        #expect(ForwarderStatus(fileText: "garbage") == nil)
    }

    @Test func theCursor() {
        #expect(DeliveryCursor(fileText: "c0ffee 42\n") == DeliveryCursor(run: "c0ffee", seq: 42))
        #expect(DeliveryCursor(fileText: DeliveryCursor(run: "a", seq: 0).fileText) == DeliveryCursor(run: "a", seq: 0))
        for bad in ["", "c0ffee", "c0ffee -1", "c0ffee x", "a b c"] { #expect(DeliveryCursor(fileText: bad) == nil) }
    }
}
