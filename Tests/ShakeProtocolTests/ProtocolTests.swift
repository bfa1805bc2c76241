// SPDX-License-Identifier: Apache-2.0
import PropertyBased
import ShakeDetection
import ShakeProtocol
import Testing

struct RequestTests {
    func parse(_ text: String) throws(RequestError) -> Request { try Request.parse(Array(text.utf8)) }

    @Test func everyRequestParses() throws {
        #expect(try parse(#"{"request":"status"}"#) == .status)
        #expect(
            try parse(#" {"request" : "subscribe", "phases": ["ended","began"]} "#)
                == .subscribe(phases: [.ended, .began]))
        #expect(try parse(#"{"request":"subscribe"}"#) == .subscribe(phases: []))
        #expect(try parse(#"{"request":"replay","since":12}"#) == .replay(since: 12))
        #expect(try parse(#"{"request":"replay","since":3.0}"#) == .replay(since: 3))
        // Past the last exact double, any whole number means "after everything".
        #expect(try parse(#"{"request":"replay","since":9007199254740991}"#) == .replay(since: 9_007_199_254_740_991))
        #expect(try parse(#"{"request":"replay","since":9e15}"#) == .replay(since: 9_000_000_000_000_000))
        #expect(try parse(#"{"request":"replay","since":1e300}"#) == .replay(since: .max))
        #expect(try parse(#"{"request":"samples"}"#) == .samples)
        #expect(try parse(#"{"request":"simulate"}"#) == .simulate)
        #expect(
            try parse(#"{"request":"key","chord":"ctrl+z","phases":["ended","began"]}"#)
                == .key(chord: "ctrl+z", phases: [.began, .ended]))
        // Without phases, a valid shake (ended) presses the chord.
        #expect(try parse(#"{"request":"key","chord":"undo"}"#) == .key(chord: "undo", phases: [.ended]))
        #expect(try parse(#"{"request":"key","chord":"undo","phases":null}"#) == .key(chord: "undo", phases: [.ended]))
    }

    @Test(arguments: [
        ("hello", "not_json"),
        ("", "not_json"),
        ("[1,2]", "not_an_object"),
        ("42", "not_an_object"),
        (#"{"req":"status"}"#, "missing_request"),
        (#"{"request":7}"#, "wrong_type"),
        (#"{"request":"dance"}"#, "unknown_request"),
        (#"{"request":"status","extra":1}"#, "unknown_field"),
        (#"{"request":"replay"}"#, "missing_field"),
        (#"{"request":"replay","since":"5"}"#, "wrong_type"),
        (#"{"request":"replay","since":-1}"#, "wrong_type"),
        (#"{"request":"replay","since":1.5}"#, "wrong_type"),
        (#"{"request":"replay","since":true}"#, "wrong_type"),
        (#"{"request":"subscribe","phases":"ended"}"#, "wrong_type"),
        (#"{"request":"subscribe","phases":["shaken"]}"#, "bad_value"),
        (#"{"request":"key"}"#, "missing_field"),
        (#"{"request":"key","chord":7}"#, "wrong_type"),
        (#"{"request":"key","chord":""}"#, "wrong_type"),
        ("{\"request\":\"key\",\"chord\":\"" + String(repeating: "a", count: 65) + "\"}", "wrong_type"),
        (#"{"request":"key","chord":"ctrl+z","phases":[]}"#, "wrong_type"),
        (#"{"request":"key","chord":"ctrl+z","phases":["shaken"]}"#, "bad_value"),
        (#"{"request":"key","chord":"ctrl+z","uid":0}"#, "unknown_field"),
        (#"{"request":"status","request":"status"}"#, "not_json"),
        (#"{"request":"status"} trailing"#, "not_json"),
        ("{\"request\":\"st\u{1}atus\"}", "not_json"),
    ])
    func badLinesNameTheProblem(line: String, code: String) {
        do {
            let request = try parse(line)
            Issue.record("accepted \(request)")
        } catch {
            #expect(error.code == code, "\(line): \(error.message)")
            #expect(!error.message.isEmpty)
        }
    }

    @Test func requestsRoundTrip() throws {
        for request in [
            Request.status, .subscribe(phases: [.cancelled]), .replay(since: 9), .samples, .simulate,
            .key(chord: "shift+ctrl+z", phases: [.began, .cancelled]),
        ] {
            #expect(try parse(request.line) == request)
        }
    }

    @Test func privilegedRequests() {
        #expect(Request.samples.isPrivileged && Request.simulate.isPrivileged)
        #expect(!Request.status.isPrivileged && !Request.replay(since: 0).isPrivileged)
        // Anyone access.key allows may ask: the daemon presses into the asker's own session only.
        #expect(!Request.key(chord: "ctrl+z", phases: [.ended]).isPrivileged)
    }
}

struct ServerMessageTests {
    @Test func eventsCarryTheShakeObjectPlusSeqAndTimestamp() throws {
        let summary = ShakeSummary(time: 3.02, began: 2.31, peak: 24.5, axis: .x, reversals: 7)
        let message = ServerMessage.shake(.init(event: .ended(summary), seq: 4, timestamp: "2026-11-22T03:04:05.123Z"))
        #expect(
            message.line
                == #"{"event":"shake","phase":"ended","time":3.02,"began":2.31,"duration":0.71,"peak":24.5,"axis":"x","reversals":7,"seq":4,"timestamp":"2026-11-22T03:04:05.123Z"}"#
        )
        #expect(try ServerMessage.parse(Array(message.line.utf8)) == message)
    }

    @Test func everyMessageRoundTrips() throws {
        let sensor = SensorInfo(source: "iio", name: "mma8452", id: "iio:device0", location: "display", rate: 100)
        let messages: [ServerMessage] = [
            .hello(.init(sensor: sensor, shaking: false, seq: 3, run: "5f3a")),
            .shake(.init(event: .began(time: 1.5), seq: 1, timestamp: "t", simulated: true)),
            .shake(.init(event: .cancelled(time: 7.4, began: 2.31, reason: .tooLong), seq: 2, timestamp: "t")),
            .shake(
                .init(
                    event: .cancelled(time: 7.4, began: 2.31, reason: .notAShake, detail: .oneWay), seq: 3,
                    timestamp: "t")),
            .status(
                .init(sensor: .none, subscribers: 2, shaking: true, seq: 5, uptime: 12.5, counters: ["samples": 10])),
            .replayed(since: 2, count: 3, complete: true),
            .dropped(count: 17),
            .sample(Sample(time: 1.25, x: 0.5, y: -9.81, z: 0.125)),
            .error(code: "not_json", message: "the line is not JSON"),
            .ok(request: "subscribe"),
            .key(.init(seq: 12, chord: "ctrl+z", result: .pressed)),
            .key(.init(seq: 13, chord: "ctrl+z", result: .rateLimited)),
        ]
        for message in messages {
            #expect(try ServerMessage.parse(Array(message.line.utf8)) == message, "\(message.line)")
        }
        #expect(try ServerMessage.parse(Array(#"{"event":"future","x":1}"#.utf8)) == .unknown(event: "future"))
    }

    @Test func aDetailThisClientDoesNotKnowIsLeftOut() throws {
        let line =
            #"{"event":"shake","phase":"cancelled","time":2,"began":1,"reason":"not_a_shake","detail":"new","seq":1,"timestamp":"t"}"#
        #expect(
            try ServerMessage.parse(Array(line.utf8))
                == .shake(.init(event: .cancelled(time: 2, began: 1, reason: .notAShake), seq: 1, timestamp: "t")))
    }

    @Test func aKeyReportLooksAsDocumented() {
        let report = ServerMessage.key(.init(seq: 43, chord: "ctrl+z", result: .away))
        #expect(report.line == #"{"event":"key","seq":43,"chord":"ctrl+z","result":"away"}"#)
    }

    @Test func helloLooksAsDocumented() {
        let hello = ServerMessage.hello(
            .init(sensor: SensorInfo(source: "replay", name: "demo.csv", rate: 100), shaking: false, seq: 0, run: "9c1")
        )
        #expect(
            hello.line
                == #"{"event":"hello","protocol":1,"sensor":{"source":"replay","name":"demo.csv","rate":100},"shaking":false,"seq":0,"run":"9c1"}"#
        )
    }

    @Test func timestampsAreRFC3339WithMilliseconds() {
        // Expected values checked with Python's datetime.
        #expect(Timestamp.rfc3339(.init(timeIntervalSince1970: 1_795_489_445.1239)) == "2026-11-24T03:04:05.123Z")
        #expect(Timestamp.rfc3339(.init(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
    }

    @Test func defaultSocketPath() {
        #expect(SocketPath.default(environment: [:]) == "/run/shaked/shaked.sock")
        #expect(SocketPath.default(environment: ["RUNTIME_DIRECTORY": "/run/shaked"]) == "/run/shaked/shaked.sock")
        #expect(SocketPath.default(environment: ["RUNTIME_DIRECTORY": "/run/x:/run/y"]) == "/run/x/shaked.sock")
        #expect(
            SocketPath.default(environment: ["SHAKED_SOCKET": "/tmp/s", "RUNTIME_DIRECTORY": "/run/x"]) == "/tmp/s")
    }
}

struct JSONValueTests {
    @Test func parsesStrictJSON() throws {
        #expect(
            try JSONValue.parse(#"{"a":[1,-2.5e3,true,false,null,"\u00e9\n\ud83d\ude00"]}"#)
                == .object([
                    "a": .array([.number(1), .number(-2500), .bool(true), .bool(false), .null, .string("é\n😀")])
                ]))
        for bad in [
            "01", "1.", ".5", "+1", "[1,]", "{\"a\":1,}", "'a'", "\"\\x\"", "\"\\ud800\"", "nul", "[", "\"abc", "1e999",
            #"{"a":1,"a":2}"#,
        ] {
            #expect(throws: JSONValue.ParseError.self, "\(bad)") { try JSONValue.parse(bad) }
        }
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        #expect(throws: JSONValue.ParseError.self) { try JSONValue.parse(deep) }
    }

    /// A string without escapes is validated in one run of bytes, one with escapes run by run: the same text, and
    /// invalid UTF-8 reported at the same byte (where its run ends: an escape, or the closing quote).
    @Test func stringsWithAndWithoutEscapes() throws {
        #expect(
            try JSONValue.parse(#""plain é text, longer than a small string""#)
                == .string("plain é text, longer than a small string"))
        #expect(
            try JSONValue.parse(#""a\"b\\c\/d\b\f\n\r\t\u0041é\ud83d\ude00z""#)
                == .string("a\"b\\c/d\u{8}\u{C}\n\r\tAé😀z"))
        #expect(try JSONValue.parse(#"["\n", "", "\\"]"#) == .array([.string("\n"), .string(""), .string("\\")]))
        let invalid = "invalid UTF-8 in a string"
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        // A lead byte cut short by an escape, even one whose bytes would complete it.
        #expect(parseError([quote, UInt8(ascii: "a"), 0xC3, backslash, UInt8(ascii: "n"), quote]) == "3: \(invalid)")
        #expect(parseError([quote, 0xC3, backslash] + Array("u00A9".utf8) + [quote]) == "2: \(invalid)")
        // A continuation byte after an escape, and one in a string without any.
        #expect(parseError([quote, backslash, UInt8(ascii: "n"), 0xA9, quote]) == "4: \(invalid)")
        #expect(parseError([quote, 0xA9, quote]) == "2: \(invalid)")
        #expect(parseError([quote, backslash, UInt8(ascii: "t"), 0x0A, quote]) == "3: control character in a string")
        #expect(parseError([quote, UInt8(ascii: "t"), 0x0A, quote]) == "2: control character in a string")
        #expect(parseError([quote, UInt8(ascii: "a"), backslash]) == "3: unterminated string")
    }

    /// Where and why `bytes` are not JSON, as "offset: message"; nil when they are.
    private func parseError(_ bytes: [UInt8]) -> String? {
        do {
            _ = try JSONValue.parse(bytes)
            return nil
        } catch {
            return "\(error.offset): \(error.message)"
        }
    }

    /// Whole numbers of up to 15 digits are counted directly, the rest read by strtod: the same values. (A number
    /// past 2^53 becomes the nearest `Double`, written here as such: 1234567890123456789 is 1234567890123456768.)
    @Test func numbersShortAndLong() throws {
        for (text, value) in [
            ("0", 0.0), ("7", 7), ("-7", -7), ("123456789012345", 123_456_789_012_345),
            ("-123456789012345", -123_456_789_012_345), ("1234567890123456789", 1_234_567_890_123_456_768),
            ("9007199254740993", 9_007_199_254_740_992), ("12.5", 12.5), ("-0.25", -0.25), ("1e2", 100),
            ("2E-1", 0.2),
        ] {
            #expect(try JSONValue.parse(text) == .number(value), "\(text)")
        }
        #expect(try JSONValue.parse("-0").number?.sign == .minus)
        #expect(try JSONValue.parse("[1,22,333]") == .array([.number(1), .number(22), .number(333)]))
        #expect(try JSONValue.parse(#"{"seq":42}"#)["seq"]?.integer == 42)
    }

    @Test func neverTrapsOnAnyBytes() async {
        await propertyCheck(count: 2000, input: Gen.int(in: 0...255).array(of: 0...64)) { values in
            let bytes = values.map { UInt8($0) }
            _ = try? JSONValue.parse(bytes)
            _ = try? Request.parse(bytes)
            _ = try? ServerMessage.parse(bytes)
        }
    }

    @Test func mutatedRequestsNeverTrap() async {
        let seed = Array(#"{"request":"replay","since":12,"phases":["ended"]}"#.utf8)
        await propertyCheck(
            count: 2000, input: Gen.int(in: 0..<seed.count), Gen.int(in: 0...255), Gen.int(in: 0..<seed.count)
        ) { position, byte, cut in
            var bytes = seed
            bytes[position] = UInt8(byte)
            _ = try? Request.parse(bytes)
            _ = try? Request.parse(bytes.prefix(cut))
        }
    }
}
