// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeConfig
import ShakeDetection
import ShakeTestSupport
import Testing

/// `/etc/shaked/mqtt.yaml` and its drop-ins: typed values, every problem with its file, line and key.
struct MQTTConfigurationTests {
    @Test func anEmptyFileGivesTheDefaults() throws {
        let configuration = try MQTTConfiguration.parse("# nothing\n", source: "mqtt.yaml")
        #expect(configuration == MQTTConfiguration())
        #expect(configuration.broker.address == .tcp(host: "localhost", port: 1883, tls: false))
        #expect(configuration.topics.qos == 1)
        #expect(configuration.queue.size == 1000)
    }

    @Test func everyKey() throws {
        let text = """
            broker:
              uri: mqtts://broker.example:8884
              client_id: kiosk-7
              keepalive: 60
              username: kiosk
              password_credential: mqtt-password
              ca_file: /etc/ssl/ca.pem
              cert_file: /etc/ssl/kiosk.pem
              key_file: /etc/ssl/kiosk.key
            topics:
              prefix: museum/shakes
              device: hall-3
              qos: 0
              phases: [ended]
            queue:
              size: 50
            home_assistant:
              discovery: false
              prefix: ha
            daemon:
              socket: /run/shaked/shaked.sock
            logging:
              level: debug
            """
        let configuration = try MQTTConfiguration.parse(text, source: "mqtt.yaml")
        #expect(configuration.broker.address == .tcp(host: "broker.example", port: 8884, tls: true))
        #expect(configuration.broker.clientID == "kiosk-7")
        #expect(configuration.broker.keepAlive == 60)
        #expect(configuration.broker.username == "kiosk")
        #expect(configuration.broker.passwordCredential == "mqtt-password")
        #expect(configuration.broker.caFile == "/etc/ssl/ca.pem")
        #expect(configuration.topics.prefix == "museum/shakes")
        #expect(configuration.topics.device == "hall-3")
        #expect(configuration.topics.qos == 0)
        #expect(configuration.topics.phases == [.ended])
        #expect(configuration.queue.size == 50)
        #expect(configuration.homeAssistant.discovery == false)
        #expect(configuration.homeAssistant.prefix == "ha")
        #expect(configuration.socket == "/run/shaked/shaked.sock")
        #expect(configuration.logLevel == .debug)
    }

    @Test(arguments: [
        ("mqtt://localhost", BrokerAddress.tcp(host: "localhost", port: 1883, tls: false)),
        ("mqtts://localhost", .tcp(host: "localhost", port: 8883, tls: true)),
        ("mqtt://10.0.0.2:1999/", .tcp(host: "10.0.0.2", port: 1999, tls: false)),
        ("mqtt://[::1]:1884", .tcp(host: "::1", port: 1884, tls: false)),
        ("unix:/run/mosquitto/mqtt.sock", .unix(path: "/run/mosquitto/mqtt.sock")),
    ])
    func brokerAddresses(text: String, address: BrokerAddress) throws {
        #expect(try BrokerAddress.parse(text).get() == address)
    }

    @Test(arguments: [
        "http://localhost", "mqtt://", "mqtt://host:0", "mqtt://host:70000", "mqtt://host:port", "unix:relative",
        "mqtt://user:pass@host", "mqtt://host/path", "localhost",
    ])
    func badBrokerAddresses(text: String) {
        #expect(throws: BrokerAddressError.self) { try BrokerAddress.parse(text).get() }
    }

    /// Each bad value, with the key and line named.
    @Test(arguments: [
        ("broker:\n  uri: http://x\n", "mqtt.yaml:2: broker.uri: 'http://x': expected mqtt://"),
        ("topics:\n  qos: 2\n", "mqtt.yaml:2: topics.qos: 2 is out of range; allowed: 0...1"),
        ("topics:\n  prefix: a/#\n", "mqtt.yaml:2: topics.prefix: 'a/#': each level may not hold"),
        ("topics:\n  prefix: a//b\n", "mqtt.yaml:2: topics.prefix: 'a//b': each level must not be empty"),
        ("topics:\n  device: a/b\n", "mqtt.yaml:2: topics.device: 'a/b' may not hold"),
        ("topics:\n  phases: [ended, shaken]\n", "mqtt.yaml:2: topics.phases: 'shaken' is not a phase"),
        ("queue:\n  size: 0\n", "mqtt.yaml:2: queue.size: 0 is out of range; allowed: 1...1000000"),
        ("queue:\n  length: 5\n", "mqtt.yaml:2: queue.length: unknown key; known keys: size"),
        ("brokers:\n  uri: mqtt://x\n", "mqtt.yaml:2: brokers: unknown section"),
        ("broker:\n  password_file: secret.txt\n", "mqtt.yaml:2: broker.password_file: expected an absolute path"),
        (
            "broker:\n  password_credential: ../x\n",
            "mqtt.yaml:2: broker.password_credential: expected a credential's name"
        ),
        ("broker:\n  keepalive: 1\n", "mqtt.yaml:2: broker.keepalive: 1 is out of range"),
        ("home_assistant:\n  discovery: maybe\n", "mqtt.yaml:2: home_assistant.discovery: expected true or false"),
        ("daemon:\n  socket: relative.sock\n", "mqtt.yaml:2: daemon.socket:"),
        ("broker: [a\n", "mqtt.yaml:1: not valid YAML"),
    ])
    func badValues(text: String, expected: String) {
        #expect {
            try MQTTConfiguration.parse(text, source: "mqtt.yaml")
        } throws: { error in
            let description = "\(error)"
            return description.hasPrefix(expected)
        }
    }

    @Test func everyProblemIsReportedNotOnlyTheFirst() {
        #expect {
            try MQTTConfiguration.parse("topics:\n  qos: 5\nqueue:\n  size: -1\n", source: "m.yaml")
        } throws: { error in
            (error as? ConfigErrors)?.errors.compactMap(\.line) == [2, 4]
        }
    }

    @Test func dropInsOverrideKeyByKeyAndSayWhereEachValueCameFrom() throws {
        let root = try Scratch.directory("mqtt-config")
        let main = "\(root)/mqtt.yaml"
        try "broker:\n  uri: mqtt://a:1883\ntopics:\n  prefix: p\n".write(
            toFile: main, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: main + ".d", withIntermediateDirectories: true)
        try "topics:\n  prefix: q\n".write(toFile: "\(main).d/50-prefix.yaml", atomically: true, encoding: .utf8)
        try "broker:\n  uri: unix:/x\n".write(toFile: "\(main).d/notes.txt", atomically: true, encoding: .utf8)
        let layered = try MQTTConfiguration.load(
            main: main, mainMustExist: true, dropIns: MQTTConfiguration.dropIns(for: main))
        #expect(layered.files == [main, "\(main).d/50-prefix.yaml"])
        #expect(layered.configuration.broker.address == .tcp(host: "a", port: 1883, tls: false))
        #expect(layered.configuration.topics.prefix == "q")
        #expect(layered.origins["topics.prefix"] == "\(main).d/50-prefix.yaml:2")
        #expect(layered.origins["broker.uri"] == "\(main):2")
    }

    @Test func aDropInsErrorNamesTheDropIn() throws {
        let root = try Scratch.directory("mqtt-config")
        let main = "\(root)/mqtt.yaml"
        try FileManager.default.createDirectory(atPath: main + ".d", withIntermediateDirectories: true)
        try "queue:\n\n  size: many\n".write(toFile: "\(main).d/10.yaml", atomically: true, encoding: .utf8)
        #expect {
            try MQTTConfiguration.load(main: main, mainMustExist: false, dropIns: MQTTConfiguration.dropIns(for: main))
        } throws: { error in
            "\(error)".hasPrefix("\(main).d/10.yaml:3: queue.size: expected a number")
        }
    }

    @Test func aMissingMainFileIsAnErrorOnlyWhenNamed() throws {
        let root = try Scratch.directory("mqtt-config")
        #expect(throws: ConfigErrors.self) {
            try MQTTConfiguration.load(main: "\(root)/none.yaml", mainMustExist: true, dropIns: [])
        }
        let layered = try MQTTConfiguration.load(main: "\(root)/none.yaml", mainMustExist: false, dropIns: [])
        #expect(layered.files.isEmpty)
        #expect(layered.configuration == MQTTConfiguration())
    }

    @Test func contradictionsAcrossKeys() {
        #expect(throws: ConfigErrors.self) {
            let root = try Scratch.directory("mqtt-config")
            let main = "\(root)/mqtt.yaml"
            try "broker:\n  password_file: /a\n  password_credential: b\n".write(
                toFile: main, atomically: true, encoding: .utf8)
            _ = try MQTTConfiguration.load(main: main, mainMustExist: true, dropIns: [])
        }
        #expect(throws: ConfigErrors.self) {
            let root = try Scratch.directory("mqtt-config")
            let main = "\(root)/mqtt.yaml"
            try "broker:\n  cert_file: /a\n".write(toFile: main, atomically: true, encoding: .utf8)
            _ = try MQTTConfiguration.load(main: main, mainMustExist: true, dropIns: [])
        }
    }

    /// A section left empty in one file and filled in the next is read once, as the daemon's files are: its bad
    /// value is one problem, not one per file that named the section.
    @Test func aSectionLeftEmptyThenFilledIsReadOnce() throws {
        let root = try Scratch.directory("mqtt-config")
        let main = "\(root)/mqtt.yaml"
        try "queue:\n".write(toFile: main, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: main + ".d", withIntermediateDirectories: true)
        try "queue:\n  size: 0\n".write(toFile: "\(main).d/10.yaml", atomically: true, encoding: .utf8)
        #expect {
            try MQTTConfiguration.load(main: main, mainMustExist: true, dropIns: MQTTConfiguration.dropIns(for: main))
        } throws: { error in
            (error as? ConfigErrors)?.errors.map(\.description) == [
                "\(main).d/10.yaml:2: queue.size: 0 is out of range; allowed: 1...1000000"
            ]
        }
    }
}
