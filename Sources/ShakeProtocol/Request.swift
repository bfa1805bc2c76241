// SPDX-License-Identifier: Apache-2.0
public import ShakeDetection

/// A request a client sends: one JSON object on one line, `{"request":"status"}`.
public enum Request: Sendable, Hashable {
    /// The daemon's state: sensor, rate, subscribers, shaking, counters, uptime.
    case status
    /// Receive only these phases from now on (all phases when the list is empty or absent).
    case subscribe(phases: Set<ShakeEvent.Phase>)
    /// Send again the recent events after `since`, from the replay ring.
    case replay(since: Int)
    /// Stream raw samples, for recording and monitoring (privileged).
    case samples
    /// Inject a synthetic shake through the detector (privileged); its events carry `"simulated":true`.
    case simulate
    /// Have the daemon press a key chord (`ctrl+z`) for this connection's user on each event of these phases,
    /// while that user has the active, unlocked session of seat0. The chord is checked by the daemon.
    case key(chord: String, phases: Set<ShakeEvent.Phase>)

    /// The request names, as they appear on the wire.
    public static let names = ["status", "subscribe", "replay", "samples", "simulate", "key"]

    /// The longest chord a `key` request may name, in bytes (the longest the daemon knows is far shorter).
    public static let maxChordLength = 64

    /// Whether only privileged peers may make this request.
    public var isPrivileged: Bool {
        switch self {
        case .samples, .simulate: true
        case .status, .subscribe, .replay, .key: false
        }
    }

    public var name: String {
        switch self {
        case .status: "status"
        case .subscribe: "subscribe"
        case .replay: "replay"
        case .samples: "samples"
        case .simulate: "simulate"
        case .key: "key"
        }
    }

    /// The request as a line (without the newline).
    public var line: String {
        var writer = JSONObjectWriter()
        writer.add("request", name)
        switch self {
        case .subscribe(let phases):
            let names = ShakeEvent.Phase.allCases.filter { phases.contains($0) }.map { "\"\($0.rawValue)\"" }
            writer.add("phases", rawJSON: "[" + names.joined(separator: ",") + "]")
        case .replay(let since):
            writer.add("since", since)
        case .key(let chord, let phases):
            writer.add("chord", chord)
            let names = ShakeEvent.Phase.allCases.filter { phases.contains($0) }.map { "\"\($0.rawValue)\"" }
            writer.add("phases", rawJSON: "[" + names.joined(separator: ",") + "]")
        case .status, .samples, .simulate:
            break
        }
        return writer.result
    }
}

/// Why a line is not a valid request; sent back as `{"event":"error","error":CODE,"message":...}`.
public struct RequestError: Error, Sendable, Hashable {
    /// A stable, machine-readable code.
    public var code: String
    /// What was wrong, for a person.
    public var message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    public static func tooLong(limit: Int) -> RequestError {
        RequestError(code: "line_too_long", message: "a request line must be at most \(limit) bytes")
    }
}

extension Request {
    /// Parses one line (without its newline).
    /// - Throws: ``RequestError`` naming the problem: not JSON, not an object, unknown request, wrong types.
    public static func parse(_ line: some Collection<UInt8>) throws(RequestError) -> Request {
        let value: JSONValue
        do {
            value = try JSONValue.parse(line)
        } catch {
            throw RequestError(
                code: "not_json", message: "the line is not JSON (\(error.message) at byte \(error.offset))")
        }
        guard let fields = value.object else {
            throw RequestError(
                code: "not_an_object", message: "a request is a JSON object, e.g. {\"request\":\"status\"}")
        }
        guard let nameValue = fields["request"] else {
            throw RequestError(code: "missing_request", message: "the object has no \"request\" field")
        }
        guard let name = nameValue.string else {
            throw RequestError(code: "wrong_type", message: "\"request\" must be a string")
        }
        let allowed: Set<String>
        let request: Request
        switch name {
        case "status":
            allowed = ["request"]
            request = .status
        case "samples":
            allowed = ["request"]
            request = .samples
        case "simulate":
            allowed = ["request"]
            request = .simulate
        case "subscribe":
            allowed = ["request", "phases"]
            var phases = Set<ShakeEvent.Phase>()
            if let list = fields["phases"], list != .null {
                guard let names = list.array else {
                    throw RequestError(code: "wrong_type", message: "\"phases\" must be a list of phase names")
                }
                for entry in names {
                    guard let text = entry.string, let phase = ShakeEvent.Phase(rawValue: text) else {
                        throw RequestError(
                            code: "bad_value",
                            message: "\"phases\" may hold \"began\", \"ended\" and \"cancelled\" only")
                    }
                    phases.insert(phase)
                }
            }
            request = .subscribe(phases: phases)
        case "key":
            allowed = ["request", "chord", "phases"]
            guard let value = fields["chord"] else {
                throw RequestError(code: "missing_field", message: "\"key\" needs \"chord\", e.g. \"ctrl+z\"")
            }
            guard let chord = value.string, !chord.isEmpty, chord.utf8.count <= maxChordLength else {
                throw RequestError(
                    code: "wrong_type",
                    message: "\"chord\" must be a string of 1 to \(maxChordLength) bytes, e.g. \"ctrl+z\"")
            }
            var phases: Set<ShakeEvent.Phase> = [.ended]
            if let list = fields["phases"], list != .null {
                guard let names = list.array, !names.isEmpty else {
                    throw RequestError(
                        code: "wrong_type", message: "\"phases\" must be a list of at least one phase name")
                }
                phases = []
                for entry in names {
                    guard let text = entry.string, let phase = ShakeEvent.Phase(rawValue: text) else {
                        throw RequestError(
                            code: "bad_value",
                            message: "\"phases\" may hold \"began\", \"ended\" and \"cancelled\" only")
                    }
                    phases.insert(phase)
                }
            }
            request = .key(chord: chord, phases: phases)
        case "replay":
            allowed = ["request", "since"]
            guard let value = fields["since"] else {
                throw RequestError(code: "missing_field", message: "\"replay\" needs \"since\": the last seq you have")
            }
            // Any whole number counts: past the largest seq there can be (2^53, where doubles stop being exact),
            // it means "after everything", so nothing is replayed.
            guard case .number(let number) = value, number == number.rounded(), number >= 0 else {
                throw RequestError(code: "wrong_type", message: "\"since\" must be a whole number >= 0")
            }
            request = .replay(since: number < 9_007_199_254_740_992 ? Int(number) : .max)
        default:
            throw RequestError(
                code: "unknown_request",
                message: "unknown request \"\(name.prefix(40))\"; known: \(names.joined(separator: ", "))")
        }
        if let extra = fields.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw RequestError(code: "unknown_field", message: "\"\(name)\" takes no field \"\(extra.prefix(40))\"")
        }
        return request
    }
}
