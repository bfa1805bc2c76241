// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeConfig
import ShakeDetection
import ShakeTestSupport
import Testing

struct ConfigLoaderTests {
    /// Accounts as a test machine may not have them: users alice (1000) and root, groups shaked-admin (990),
    /// input (101) and root.
    static let accounts = AccountResolver(
        user: { ["alice": 1000, "root": 0][$0] },
        group: { ["shaked-admin": 990, "input": 101, "root": 0][$0] })

    func parse(_ text: String) throws(ConfigError) -> ShakedConfiguration {
        try ConfigLoader.parse(text, source: "test.yaml", accounts: Self.accounts)
    }

    @Test func theShippedConfigIsValidAndMatchesTheDefaults() throws {
        let path = Fixtures.repository.appendingPathComponent("config/shaked.yaml").path
        let configuration = try ConfigLoader.load(path: path)
        #expect(configuration.detector.settings() == DetectorSettings())
    }

    @Test func everyCommentedKeyInTheShippedConfigIsValidAndShowsTheDefault() throws {
        let path = Fixtures.repository.appendingPathComponent("config/shaked.yaml").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        // Uncomment "  # key: value" lines.
        var uncommentedKeys: [String] = []
        let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            guard line.hasPrefix("  # "), let colon = line.firstIndex(of: ":"),
                line[line.index(line.startIndex, offsetBy: 4)..<colon].allSatisfy({ $0.isLetter || $0 == "_" })
            else { return String(line) }
            uncommentedKeys.append(String(line[line.index(line.startIndex, offsetBy: 4)..<colon]))
            return "  " + line.dropFirst(4)
        }.joined(separator: "\n")
        let configuration = try parse(uncommented)
        #expect(Set(configuration.detector.overrides.keys) == Set(DetectorSettings.Parameter.allCases))
        #expect(configuration.detector.settings() == DetectorSettings())
        // Every key of every section is shown, with its default (the socket's path and group have none).
        var expected = ShakedConfiguration()
        expected.detector = configuration.detector
        expected.socket.path = "/run/shaked/shaked.sock"
        expected.socket.group = .group(.name("input"))
        #expect(configuration == expected)
        // (sensitivity is set in the file, not commented out.)
        #expect(Set(uncommentedKeys + ["sensitivity"]) == Set(ShakedConfiguration.schema.keys.map(\.name)))
    }

    @Test func everySectionTakesItsKeys() throws {
        let configuration = try parse(
            """
            sensor:
              source: replay:/tmp/trace.csv
              device: base
              rate: 200
              always_on: true
              relay: on
            socket:
              path: /run/user/1000/shaked.sock
              mode: 0660
              group: input
            clients:
              max_clients: 10
              queue_limit: 64
              drop_limit: 128
              max_line_length: 1024
              max_bad_lines: 3
              replay_capacity: 16
              max_clients_per_user: 4
              reserved_clients: 2
              client_buffer: 8192
              total_buffer: 2097152
            access:
              subscribe: [group:input, user:alice]
              samples: root
              simulate: [user:1000, group:990]
              key: [group:input]
            logging:
              level: DEBUG
            """)
        #expect(configuration.sensor.source == .replay(path: "/tmp/trace.csv"))
        #expect(configuration.sensor.device == .location(.base))
        #expect(configuration.sensor.rate == 200)
        #expect(configuration.sensor.alwaysOn)
        #expect(configuration.sensor.relay == .on)
        #expect(configuration.socket.path == "/run/user/1000/shaked.sock")
        #expect(configuration.socket.mode == 0o660)
        #expect(configuration.socket.group == .group(.name("input")))
        var clients = ShakedConfiguration.ClientsSection()
        clients.maxClients = 10
        clients.queueLimit = 64
        clients.dropLimit = 128
        clients.maxLineLength = 1024
        clients.maxBadLines = 3
        clients.replayCapacity = 16
        clients.maxClientsPerUser = 4
        clients.reservedClients = 2
        clients.clientBuffer = 8192
        clients.totalBuffer = 2_097_152
        #expect(configuration.clients == clients)
        #expect(configuration.access.subscribe == .accounts([.group(.name("input")), .user(.name("alice"))]))
        #expect(configuration.access.samples == .accounts([]))
        #expect(configuration.access.simulate == .accounts([.user(.number(1000)), .group(.number(990))]))
        #expect(configuration.access.key == .accounts([.group(.name("input"))]))
        #expect(ShakedConfiguration().access.key == .everyone)
        #expect(configuration.logging.level == .debug)
        #expect(AccountResolver.system.resolve(.user(.name("root")))?.id == 0)
        #expect(Self.accounts.resolve(.group(.name("input")))?.id == 101)
    }

    @Test func anEmptySectionKeepsItsDefaults() throws {
        #expect(try parse("sensor:\nclients:\n# all commented out\n") == ShakedConfiguration())
    }

    @Test func anEmptyFileKeepsEveryDefault() throws {
        #expect(try parse("") == ShakedConfiguration())
        #expect(try parse("# nothing\n") == ShakedConfiguration())
    }

    @Test func explicitParametersAdjustThePreset() throws {
        let configuration = try parse(
            """
            detector:
              sensitivity: hard
              threshold: 15.5
              too_long: 5
              reversals: 6
            """)
        let settings = configuration.detector.settings()
        var expected = DetectorSettings.preset(.hard)
        expected.threshold = 15.5
        expected.tooLong = 5
        expected.reversals = 6
        #expect(settings == expected)
        // A preset named on the command line is adjusted by the same explicit parameters.
        #expect(configuration.detector.settings(sensitivity: .light).threshold == 15.5)
        #expect(
            configuration.detector.settings(sensitivity: .light).refractory
                == DetectorSettings.preset(.light).refractory)
    }

    /// `dbus.mode` takes the words on and off (which YAML would otherwise read as booleans) and auto.
    @Test(arguments: [("on", ShakedConfiguration.DBusSection.Mode.on), ("off", .off), ("auto", .auto), ("ON", .on)])
    func theBusModeIsAWord(text: String, mode: ShakedConfiguration.DBusSection.Mode) throws {
        #expect(try parse("dbus:\n  mode: \(text)\n").dbus.mode == mode)
        #expect(try parse("sensor:\n  follow_session: false\n").sensor.followSession == false)
    }

    @Test(arguments: [
        ("detector:\n  treshold: 12\n", "test.yaml:2: detector.treshold: unknown key"),
        ("detektor:\n  threshold: 12\n", "test.yaml:2: detektor: unknown section"),
        ("detector:\n  threshold: high\n", "test.yaml:2: detector.threshold: expected a number, found 'high'"),
        ("detector:\n  threshold: \"12\"\n", "test.yaml:2: detector.threshold: expected a number"),
        (
            "detector:\n  threshold: 1000\n",
            "test.yaml:2: detector.threshold: 1000.0 is out of range; allowed: 2.0...200.0"
        ),
        ("detector:\n  reversals: 2.5\n", "test.yaml:2: detector.reversals: expected a whole number"),
        (
            "detector:\n  sensitivity: extreme\n",
            "detector.sensitivity: 'extreme' is not a sensitivity; allowed: light, medium, hard"
        ),
        ("detector:\n  too_long: 1\n  quiet_time: 2\n", "detector.quiet_time: must be shorter than too_long (1.0)"),
        ("detector:\n  threshold: 12\n  threshold: 13\n", "detector.threshold: appears twice"),
        ("dbus:\n  mode: maybe\n", "test.yaml:2: dbus.mode: 'maybe' is not a mode; allowed: auto, on, off"),
        ("dbus:\n  name: x\n", "test.yaml:2: dbus.name: unknown key; known keys: mode"),
        ("sensor:\n  follow_session: sometimes\n", "sensor.follow_session: expected true or false"),
        ("detector: 12\n", "detector: expected a mapping"),
        ("- a\n- b\n", "expected a mapping"),
        ("detector:\n  threshold: [1, 2]\n", "detector.threshold: expected a number, found 'a collection'"),
        ("detector: {threshold: 12\n", "not valid YAML"),
        (
            "sensor:\n  source: usb\n",
            "test.yaml:2: sensor.source: 'usb' is not a source; allowed: iio, iio:URI, replay:FILE"
        ),
        ("sensor:\n  rate: 0\n", "sensor.rate: 0.0 is out of range; allowed: 1...10000"),
        ("sensor:\n  rate: fast\n", "sensor.rate: expected a number, found 'fast'"),
        ("sensor:\n  always_on: maybe\n", "sensor.always_on: expected true or false, found 'maybe'"),
        ("sensor:\n  speed: 2\n", "sensor.speed: unknown key; known keys: source, device, rate, always_on, relay"),
        ("sensor:\n  range: wide\n", "sensor.range: 'wide' is not a range; allowed: auto, keep, or a number of g"),
        ("sensor:\n  range: 0.5\n", "sensor.range: '0.5' is not a range; allowed: auto, keep, or a number of g in"),
        ("sensor:\n  range: [4]\n", "sensor.range: expected a single value"),
        ("sensor:\n  relay: sometimes\n", "sensor.relay: expected auto, on or off, found 'sometimes'"),
        ("sensor:\n  relay: [on]\n", "sensor.relay: expected auto, on or off, found 'a collection'"),
        ("socket:\n  mode: 0999\n", "socket.mode: expected an octal mode such as \"0660\", found '0999'"),
        ("socket:\n  mode: 01777\n", "socket.mode: expected an octal mode"),
        ("socket:\n  path: relative.sock\n", "socket.path: 'relative.sock' is relative; expected an absolute path"),
        ("socket:\n  path: \"\"\n", "socket.path: empty; expected an absolute path"),
        (
            "socket:\n  path: /\(String(repeating: "s", count: 107))\n",
            "socket.path: 108 bytes long; a Unix socket's path has at most 107 bytes"
        ),
        ("socket:\n  group: wheel-of-fortune\n", "socket.group: no group named 'wheel-of-fortune'"),
        ("clients:\n  max_clients: 0\n", "clients.max_clients: 0 is out of range; allowed: 1...65536"),
        (
            "clients:\n  total_buffer: 1000\n",
            "clients.total_buffer: 1000 is out of range; allowed: 1048576...1073741824"
        ),
        ("clients:\n  client_buffer: 100\n", "clients.client_buffer: 100 is out of range; allowed: 4096...16777216"),
        ("clients:\n  queue_limit: 2.5\n", "clients.queue_limit: expected a whole number, found '2.5'"),
        ("clients:\n  max_client: 5\n", "clients.max_client: unknown key; known keys: max_clients"),
        ("access:\n  samples: anyone\n", "access.samples: 'anyone' is not a rule; allowed: everyone, root"),
        ("access:\n  samples: [group:nosuch]\n", "access.samples: no group named 'nosuch'"),
        ("access:\n  simulate: [user:bob]\n", "access.simulate: no user named 'bob'"),
        ("access:\n  simulate: [host:bob]\n", "access.simulate: 'host:bob' is not user:NAME or group:NAME"),
        ("access:\n  record: everyone\n", "access.record: unknown key; known keys: subscribe, samples, simulate"),
        ("logging:\n  level: loud\n", "logging.level: 'loud' is not a level; allowed: trace, debug, info"),
        ("logging:\n  file: /tmp/x\n", "logging.file: unknown key; known keys: level"),
    ])
    func badValuesNameTheKeyAndWhatIsAllowed(text: String, message: String) {
        do {
            let configuration = try parse(text)
            Issue.record("accepted: \(configuration)")
        } catch {
            #expect(error.description.contains(message), "\(error.description)")
            #expect(error.file == "test.yaml")
        }
    }

    @Test func aMissingFileSaysSo() {
        #expect(throws: ConfigError(file: "/nonexistent.yaml", message: "no such file")) {
            try ConfigLoader.load(path: "/nonexistent.yaml")
        }
    }
}

/// A configuration file is never read whole before its size is known to be sane: a reload pointed at a huge
/// file costs one megabyte.
struct ConfigSizeTests {
    @Test func aHugeFileIsRefusedAtTheLimit() throws {
        let path = try Scratch.directory("config-size") + "/huge.yaml"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        #expect(descriptor >= 0)
        // 64 MB of holes: read, they are zeros, far past what the reader may take.
        #expect(ftruncate(descriptor, 64 << 20) == 0)
        close(descriptor)
        #expect(throws: ConfigError(file: path, line: 1, message: "the file is larger than 1024 KB")) {
            try ConfigLoader.load(path: path)
        }
    }
}

struct RelaySettingTests {
    @Test(arguments: [
        ("auto", ShakedConfiguration.SensorSection.Relay.auto), ("on", .on), ("off", .off), ("OFF", .off),
        ("\"on\"", .on),
    ])
    func parses(text: String, relay: ShakedConfiguration.SensorSection.Relay) throws {
        let configuration = try ConfigLoader.parse("sensor:\n  relay: \(text)\n", source: "test.yaml")
        #expect(configuration.sensor.relay == relay)
    }

    @Test func defaultsToAuto() throws {
        #expect(try ConfigLoader.parse("sensor:\n  rate: 100\n", source: "test.yaml").sensor.relay == .auto)
    }
}

/// Values that YAML 1.1 tools and YAML 1.2 ones read differently are refused, saying what each makes of them and
/// what to write; what they read alike is taken.
struct UnambiguousValueTests {
    func parse(_ text: String) throws(ConfigError) -> ShakedConfiguration {
        try ConfigLoader.parse(text, source: "test.yaml", accounts: ConfigLoaderTests.accounts)
    }

    @Test(arguments: [
        // What YAML tools write for the mode 0660 (432), and a mode without its leading zero.
        (
            "socket:\n  mode: 432\n",
            "socket.mode: '432' is a decimal number to YAML (tools that rewrite the file write the mode 0660 as "
                + "432), not an octal mode; write the mode quoted, in octal with a leading zero: \"0660\" (what 432 "
                + "is as a number) or \"0432\""
        ),
        ("socket:\n  mode: 660\n", "socket.mode: '660' is a decimal number to YAML"),
        ("socket:\n  mode: ~\n", "socket.mode: '~' is YAML's null (no value)"),
        (
            "clients:\n  max_clients: 0100\n",
            "clients.max_clients: '0100' is the octal number 64 to YAML 1.1 tools and 100 to YAML 1.2 ones; write 100 "
                + "without the leading zero"
        ),
        ("detector:\n  threshold: 012\n", "detector.threshold: '012' is the octal number 10 to YAML 1.1 tools"),
        ("detector:\n  threshold: 09\n", "detector.threshold: '09' is text to YAML 1.1 tools and 9 to YAML 1.2 ones"),
        (
            "clients:\n  max_clients: 1e2\n",
            "clients.max_clients: '1e2' is 100 to YAML 1.2 tools but text to YAML 1.1 ones, which take an exponent "
                + "only after a decimal point and with a sign (1.0e+2); write 100"
        ),
        ("detector:\n  threshold: 1.2e1\n", "detector.threshold: '1.2e1' is 12 to YAML 1.2 tools but text to YAML 1.1"),
        (
            "clients:\n  max_clients: 1_000\n",
            "clients.max_clients: '1_000' is 1000 to YAML 1.1 tools but text to YAML 1.2 ones; write 1000"
        ),
        ("clients:\n  max_clients: 0x40\n", "clients.max_clients: '0x40' is 64 in hexadecimal; write 64, in decimal"),
        ("clients:\n  max_clients: 0o100\n", "clients.max_clients: '0o100' is 64 in octal; write 64, in decimal"),
        (
            "clients:\n  max_clients: 1:30\n",
            "clients.max_clients: '1:30' is the base-60 number 90 to YAML 1.1 tools and text to YAML 1.2 ones"
        ),
        (
            "sensor:\n  always_on: yes\n",
            "sensor.always_on: 'yes' is true to YAML 1.1 tools but text to YAML 1.2 ones; write true"
        ),
        ("sensor:\n  always_on: on\n", "sensor.always_on: 'on' is true to YAML 1.1 tools"),
        ("sensor:\n  follow_session: Off\n", "sensor.follow_session: 'Off' is false to YAML 1.1 tools"),
        ("sensor:\n  follow_session: n\n", "sensor.follow_session: 'n' is false to YAML 1.1 tools"),
        ("sensor:\n  always_on: ~\n", "sensor.always_on: '~' is YAML's null (no value)"),
        ("sensor:\n  source: ~\n", "sensor.source: '~' is YAML's null (no value); write a value, quote it"),
        ("sensor:\n  device:\n", "sensor.device: no value given; write one, or leave the key out for its default"),
        ("socket:\n  group: null\n", "socket.group: 'null' is YAML's null"),
        ("access:\n  samples: ~\n", "access.samples: '~' is YAML's null"),
        ("access:\n  samples: [group:input, ~]\n", "access.samples: '~' is YAML's null"),
        ("logging:\n  level: NULL\n", "logging.level: 'NULL' is YAML's null"),
        ("detector:\n  threshold:\n", "detector.threshold: no value given"),
    ])
    func anAmbiguousValueIsRefusedSayingWhy(text: String, message: String) {
        do {
            let configuration = try parse(text)
            Issue.record("accepted: \(configuration)")
        } catch {
            #expect(error.description.contains(message), "\(error.description)")
        }
    }

    @Test func whatEveryToolReadsAlikeIsTaken() throws {
        #expect(try parse("socket:\n  mode: \"0660\"\n").socket.mode == 0o660)
        #expect(try parse("socket:\n  mode: 0660\n").socket.mode == 0o660)
        #expect(try parse("socket:\n  mode: 0o640\n").socket.mode == 0o640)
        #expect(try parse("socket:\n  mode: '0600'\n").socket.mode == 0o600)
        // Quoted, the text is the text: chmod's 432 is 0432.
        #expect(try parse("socket:\n  mode: \"432\"\n").socket.mode == 0o432)
        #expect(try parse("socket:\n  mode: 0\n").socket.mode == 0)
        #expect(try parse("clients:\n  max_clients: 100\n").clients.maxClients == 100)
        #expect(try parse("clients:\n  reserved_clients: 0\n").clients.reservedClients == 0)
        #expect(try parse("clients:\n  max_clients: +100\n").clients.maxClients == 100)
        #expect(try parse("detector:\n  threshold: 12.5\n").detector.overrides[.threshold] == 12.5)
        #expect(try parse("detector:\n  threshold: 1.25e+1\n").detector.overrides[.threshold] == 12.5)
        #expect(try parse("detector:\n  symmetry: .5\n").detector.overrides[.symmetry] == 0.5)
        #expect(try parse("detector:\n  symmetry: 0.5\n").detector.overrides[.symmetry] == 0.5)
        #expect(try parse("detector:\n  min_impulse: 1.0e-05\n").detector.overrides[.minImpulse] == 0.00001)
        #expect(try parse("sensor:\n  rate: 200.\n").sensor.rate == 200)
        for (text, value) in [("true", true), ("True", true), ("TRUE", true), ("false", false), ("FALSE", false)] {
            #expect(try parse("sensor:\n  always_on: \(text)\n").sensor.alwaysOn == value)
        }
        // Words that are booleans to YAML 1.1 stay words where a key takes words.
        #expect(try parse("sensor:\n  relay: on\n").sensor.relay == .on)
        #expect(try parse("dbus:\n  mode: off\n").dbus.mode == .off)
    }
}
