// SPDX-License-Identifier: Apache-2.0
public import FoundationEssentials
public import ShakeDetection

#if canImport(Glibc)
    import Glibc
#endif

/// What the server sends: one JSON object per line, always with an `"event"` field.
public enum ServerMessage: Sendable, Hashable {
    /// The first line on every connection.
    case hello(Hello)
    /// A detector event, numbered.
    case shake(Notification)
    /// The answer to `{"request":"status"}`.
    case status(Status)
    /// The end of an answer to `{"request":"replay"}`.
    case replayed(since: Int, count: Int, complete: Bool)
    /// Events this client missed because it did not read fast enough.
    case dropped(count: Int)
    /// One raw sample (after `{"request":"samples"}`).
    case sample(Sample)
    /// A request was refused or malformed.
    case error(code: String, message: String)
    /// An acknowledgement of `subscribe`, `samples`, `simulate` or `key`.
    case ok(request: String)
    /// What became of this connection's key chord (after `key`) for an event.
    case key(KeyReport)
    /// A message of a kind this client does not know (a newer server); ignore it.
    case unknown(event: String)

    /// The protocol version this code speaks.
    public static let protocolVersion = 1

    public struct Hello: Sendable, Hashable {
        public var protocolVersion: Int
        public var sensor: SensorInfo
        public var shaking: Bool
        /// The seq of the latest event so far (0 before the first).
        public var seq: Int
        /// Identifies this run of the daemon: seq numbers start again at 1 when it changes.
        public var run: String

        public init(
            protocolVersion: Int = ServerMessage.protocolVersion, sensor: SensorInfo, shaking: Bool, seq: Int,
            run: String
        ) {
            self.protocolVersion = protocolVersion
            self.sensor = sensor
            self.shaking = shaking
            self.seq = seq
            self.run = run
        }
    }

    public struct Notification: Sendable, Hashable {
        public var event: ShakeEvent
        /// 1, 2, 3...: per daemon run, with no gaps.
        public var seq: Int
        /// Wall-clock time, RFC 3339 with milliseconds.
        public var timestamp: String
        public var simulated: Bool

        public init(event: ShakeEvent, seq: Int, timestamp: String, simulated: Bool = false) {
            self.event = event
            self.seq = seq
            self.timestamp = timestamp
            self.simulated = simulated
        }
    }

    /// What the daemon did with a connection's key chord for one event.
    public struct KeyReport: Sendable, Hashable {
        public enum Result: String, Sendable, Hashable {
            /// Typed through the daemon's virtual keyboard.
            case pressed
            /// Not typed: the connection's user does not have seat0's active, unlocked session (or logind cannot
            /// say).
            case away
            /// Not typed: past the rate limit.
            case rateLimited = "rate_limited"
            /// Not typed: the virtual keyboard refused the write.
            case failed
        }

        /// The event's seq.
        public var seq: Int
        /// The chord, as the daemon names it (`ctrl+z`).
        public var chord: String
        public var result: Result

        public init(seq: Int, chord: String, result: Result) {
            self.seq = seq
            self.chord = chord
            self.result = result
        }
    }

    public struct Status: Sendable, Hashable {
        public var sensor: SensorInfo
        public var subscribers: Int
        public var shaking: Bool
        public var seq: Int
        public var uptime: Double
        /// Named counters: samples, invalid, discontinuities, began, ended, cancelled, clients refused...
        public var counters: [String: Int]

        public init(
            sensor: SensorInfo, subscribers: Int, shaking: Bool, seq: Int, uptime: Double, counters: [String: Int]
        ) {
            self.sensor = sensor
            self.subscribers = subscribers
            self.shaking = shaking
            self.seq = seq
            self.uptime = uptime
            self.counters = counters
        }
    }
}

extension ServerMessage {
    /// The message as a line, without the newline.
    public var line: String {
        var writer = JSONObjectWriter()
        switch self {
        case .hello(let hello):
            writer.add("event", "hello")
            writer.add("protocol", hello.protocolVersion)
            writer.add("sensor", rawJSON: hello.sensor.json)
            writer.add("shaking", hello.shaking)
            writer.add("seq", hello.seq)
            writer.add("run", hello.run)
        case .shake(let notification):
            notification.event.write(to: &writer)
            writer.add("seq", notification.seq)
            writer.add("timestamp", notification.timestamp)
            if notification.simulated { writer.add("simulated", true) }
        case .status(let status):
            writer.add("event", "status")
            writer.add("sensor", rawJSON: status.sensor.json)
            writer.add("rate", rawJSON: status.sensor.rate.map { JSONObjectWriter.format($0, decimals: 2) } ?? "null")
            writer.add("subscribers", status.subscribers)
            writer.add("shaking", status.shaking)
            writer.add("seq", status.seq)
            writer.add("uptime", status.uptime, decimals: 1)
            var counters = JSONObjectWriter()
            for key in status.counters.keys.sorted() { counters.add(key, status.counters[key] ?? 0) }
            writer.add("counters", rawJSON: counters.result)
        case .replayed(let since, let count, let complete):
            writer.add("event", "replayed")
            writer.add("since", since)
            writer.add("count", count)
            writer.add("complete", complete)
        case .dropped(let count):
            writer.add("event", "dropped")
            writer.add("count", count)
        case .sample(let sample):
            writer.add("event", "sample")
            writer.add("time", sample.time, decimals: 6)
            writer.add("x", sample.acceleration.x, decimals: 4)
            writer.add("y", sample.acceleration.y, decimals: 4)
            writer.add("z", sample.acceleration.z, decimals: 4)
        case .error(let code, let message):
            writer.add("event", "error")
            writer.add("error", code)
            writer.add("message", message)
        case .ok(let request):
            writer.add("event", "ok")
            writer.add("request", request)
        case .key(let report):
            writer.add("event", "key")
            writer.add("seq", report.seq)
            writer.add("chord", report.chord)
            writer.add("result", report.result.rawValue)
        case .unknown(let event):
            writer.add("event", event)
        }
        return writer.result
    }

    /// Why a line from the server could not be understood.
    public struct DecodingError: Error, Sendable, Hashable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// Parses a line from the server. A shake event as the server writes it takes a fast path
    /// (``parseEventLine(_:)``); every other line, and every line where the bytes are not contiguous, the general one.
    public static func parse(_ line: some Collection<UInt8>) throws(DecodingError) -> ServerMessage {
        if let message = line.withContiguousStorageIfAvailable(parseEventLine), let message { return message }
        return try parseObject(line)
    }

    /// Parses a line from the server as a JSON object, whatever its shape: what ``parse(_:)`` gives for every line
    /// the fast path does not take.
    static func parseObject(_ line: some Collection<UInt8>) throws(DecodingError) -> ServerMessage {
        let parsed: JSONValue
        do {
            parsed = try JSONValue.parse(line)
        } catch {
            throw DecodingError(message: "not JSON: \(error.message)")
        }
        // The object's fields, taken out once for the lookups below.
        guard let value = parsed.object, let event = value["event"]?.string else {
            throw DecodingError(message: "no \"event\" field")
        }
        func int(_ key: String) throws(DecodingError) -> Int {
            guard let number = value[key]?.integer else { throw DecodingError(message: "\(event): \"\(key)\" missing") }
            return number
        }
        func double(_ key: String) throws(DecodingError) -> Double {
            guard let number = value[key]?.number else { throw DecodingError(message: "\(event): \"\(key)\" missing") }
            return number
        }
        switch event {
        case "hello":
            guard let sensor = SensorInfo(value["sensor"]) else { throw DecodingError(message: "hello: no sensor") }
            return .hello(
                Hello(
                    protocolVersion: try int("protocol"), sensor: sensor, shaking: value["shaking"]?.bool ?? false,
                    seq: try int("seq"), run: value["run"]?.string ?? ""))
        case "shake":
            let time = try double("time")
            let shake: ShakeEvent
            switch value["phase"]?.string {
            case "began":
                shake = .began(time: time)
            case "ended":
                guard let axis = value["axis"]?.string.flatMap(Axis.init(rawValue:)) else {
                    throw DecodingError(message: "ended: no axis")
                }
                shake = .ended(
                    ShakeSummary(
                        time: time, began: try double("began"), peak: try double("peak"), axis: axis,
                        reversals: try int("reversals")))
            case "cancelled":
                guard let reason = value["reason"]?.string.flatMap(ShakeEvent.CancelReason.init(rawValue:)) else {
                    throw DecodingError(message: "cancelled: no reason")
                }
                shake = .cancelled(
                    time: time, began: try double("began"), reason: reason,
                    detail: value["detail"]?.string.flatMap(ShakeEvent.Rejection.init(rawValue:)))
            default:
                throw DecodingError(message: "shake: unknown phase")
            }
            return .shake(
                Notification(
                    event: shake, seq: try int("seq"), timestamp: value["timestamp"]?.string ?? "",
                    simulated: value["simulated"]?.bool ?? false))
        case "status":
            guard let sensor = SensorInfo(value["sensor"]) else { throw DecodingError(message: "status: no sensor") }
            var counters: [String: Int] = [:]
            for (key, number) in value["counters"]?.object ?? [:] { counters[key] = number.integer }
            return .status(
                Status(
                    sensor: sensor, subscribers: try int("subscribers"), shaking: value["shaking"]?.bool ?? false,
                    seq: try int("seq"), uptime: try double("uptime"), counters: counters))
        case "replayed":
            return .replayed(
                since: try int("since"), count: try int("count"), complete: value["complete"]?.bool ?? false)
        case "dropped":
            return .dropped(count: try int("count"))
        case "sample":
            return .sample(Sample(time: try double("time"), x: try double("x"), y: try double("y"), z: try double("z")))
        case "error":
            return .error(code: value["error"]?.string ?? "error", message: value["message"]?.string ?? "")
        case "ok":
            return .ok(request: value["request"]?.string ?? "")
        case "key":
            guard let result = value["result"]?.string.flatMap(KeyReport.Result.init(rawValue:)) else {
                throw DecodingError(message: "key: no result")
            }
            return .key(KeyReport(seq: try int("seq"), chord: value["chord"]?.string ?? "", result: result))
        default:
            return .unknown(event: event)
        }
    }
}

/// RFC 3339 timestamps with milliseconds, in UTC: `2026-11-22T03:04:05.123Z`.
public enum Timestamp {
    public static func rfc3339(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        var seconds = time_t(interval.rounded(.down))
        let milliseconds = min(999, Int(((interval - Double(seconds)) * 1000).rounded(.down)))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(milliseconds), 3))Z"
    }
}
