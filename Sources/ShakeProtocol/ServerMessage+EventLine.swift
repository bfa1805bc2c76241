// SPDX-License-Identifier: Apache-2.0
import ShakeDetection

// The fast path for the line every subscriber gets most: a shake event exactly as the server writes it.
extension ServerMessage {
    /// The shake event on `bytes` when they are exactly as the server writes one (its fields in its order, no
    /// white space, no field it does not write), read in one pass without building an object; nil for any other
    /// line, which the general parse then reads. Strings and numbers are read by the general parser's own code, so
    /// whatever this gives is what ``parse(_:)`` gives through ``JSONValue`` for the same bytes.
    static func parseEventLine(_ bytes: UnsafeBufferPointer<UInt8>) -> ServerMessage? {
        var reader = EventLineReader(bytes: bytes)
        return reader.notification().map(ServerMessage.shake)
    }
}

/// Reads a shake event line field by field; every step is nil when the bytes are not what it expects.
private struct EventLineReader {
    var parser: Parser

    init(bytes: UnsafeBufferPointer<UInt8>) {
        parser = Parser(bytes: bytes)
    }

    mutating func notification() -> ServerMessage.Notification? {
        guard expect(#"{"event":"shake","phase":"#), let phase = string(),
            expect(#","time":"#), let time = number()
        else { return nil }
        let event: ShakeEvent
        switch phase {
        case "began":
            event = .began(time: time)
        case "ended":
            guard expect(#","began":"#), let began = number(), expect(#","duration":"#), number() != nil,
                expect(#","peak":"#), let peak = number(), expect(#","axis":"#),
                let axis = string().flatMap(Axis.init(rawValue:)), expect(#","reversals":"#),
                let reversals = integer()
            else { return nil }
            event = .ended(ShakeSummary(time: time, began: began, peak: peak, axis: axis, reversals: reversals))
        case "cancelled":
            guard expect(#","began":"#), let began = number(), expect(#","reason":"#),
                let reason = string().flatMap(ShakeEvent.CancelReason.init(rawValue:))
            else { return nil }
            var detail: ShakeEvent.Rejection?
            if expect(#","detail":"#) {
                // A detail this client does not know is left out by the general parse; here the line goes to it.
                guard let known = string().flatMap(ShakeEvent.Rejection.init(rawValue:)) else { return nil }
                detail = known
            }
            event = .cancelled(time: time, began: began, reason: reason, detail: detail)
        default:
            return nil
        }
        guard expect(#","seq":"#), let seq = integer(), expect(#","timestamp":"#), let timestamp = string() else {
            return nil
        }
        var simulated = false
        if expect(#","simulated":"#) {
            if expect("true") {
                simulated = true
            } else if !expect("false") {
                return nil
            }
        }
        guard expect("}"), parser.index == parser.bytes.count else { return nil }
        return ServerMessage.Notification(event: event, seq: seq, timestamp: timestamp, simulated: simulated)
    }

    /// Steps over `text` if the bytes go on with it.
    mutating func expect(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard parser.bytes.count - parser.index >= count else { return false }
        let matches = text.withUTF8Buffer { expected in
            for offset in 0..<count where parser.bytes[parser.index + offset] != expected[offset] { return false }
            return true
        }
        if matches { parser.index += count }
        return matches
    }

    /// A string, as the general parser reads it.
    mutating func string() -> String? {
        guard parser.index < parser.bytes.count, parser.bytes[parser.index] == UInt8(ascii: "\"") else { return nil }
        return try? parser.string()
    }

    /// A number, as the general parser reads it.
    mutating func number() -> Double? {
        try? parser.number()
    }

    /// A whole number that fits an `Int`, as ``JSONValue/integer`` takes one.
    mutating func integer() -> Int? {
        number().flatMap { JSONValue.number($0).integer }
    }
}
