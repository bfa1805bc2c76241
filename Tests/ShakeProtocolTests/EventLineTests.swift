// SPDX-License-Identifier: Apache-2.0
import PropertyBased
import ShakeDetection
import Testing

@testable import ShakeProtocol

/// The fast path for shake event lines against the general parse: on every event the server writes they agree, and
/// on any other line (changed, cut, reordered, spaced) the message or the error is the general parse's.
struct EventLineTests {
    /// What `parse` gives, error included, as a value to compare.
    private func parsed(_ bytes: [UInt8]) -> Result<ServerMessage, ServerMessage.DecodingError> {
        Result { () throws(ServerMessage.DecodingError) in try ServerMessage.parse(bytes) }
    }

    private func general(_ bytes: [UInt8]) -> Result<ServerMessage, ServerMessage.DecodingError> {
        Result { () throws(ServerMessage.DecodingError) in try ServerMessage.parseObject(bytes) }
    }

    private func fast(_ bytes: [UInt8]) -> ServerMessage? {
        bytes.withUnsafeBufferPointer(ServerMessage.parseEventLine)
    }

    /// An event of every shape the server sends, its fields drawn from `seed`.
    private func notification(_ seed: Int) -> ServerMessage.Notification {
        var state = UInt64(truncatingIfNeeded: seed) | 1
        func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
        func time() -> Double { Double(next() % 2_000_000) / 1000 - 10 }
        let event: ShakeEvent
        switch next() % 4 {
        case 0: event = .began(time: time())
        case 1:
            event = .ended(
                ShakeSummary(
                    time: time(), began: time(), peak: Double(next() % 10_000) / 100,
                    axis: Axis.allCases[Int(next() % 3)], reversals: Int(next() % 40)))
        case 2:
            event = .cancelled(
                time: time(), began: time(),
                reason: ShakeEvent.CancelReason.allCases[Int(next() % UInt64(ShakeEvent.CancelReason.allCases.count))])
        default:
            let details = ShakeEvent.Rejection.allCases
            event = .cancelled(
                time: time(), began: time(), reason: .notAShake, detail: details[Int(next() % UInt64(details.count))])
        }
        return ServerMessage.Notification(
            event: event, seq: Int(next() % 1_000_000_000_000), timestamp: Timestamp.rfc3339(.now),
            simulated: next() % 2 == 0)
    }

    @Test func everyEventTheServerWritesTakesTheFastPathAndAgrees() async {
        await propertyCheck(count: 2000, input: Gen.int(in: 0...Int.max)) { seed in
            let message = ServerMessage.shake(notification(seed))
            let bytes = Array(message.line.utf8)
            let taken = fast(bytes)
            #expect(taken != nil, "\(message.line)")
            #expect(taken.map { .success($0) } == general(bytes), "\(message.line)")
        }
    }

    @Test(arguments: [
        // Spaced, reordered, a field more or less, a field of another type, a detail this client does not know.
        #"{ "event":"shake","phase":"began","time":1,"seq":1,"timestamp":"t"}"#,
        #"{"event":"shake","phase":"began","time":1,"seq":1,"timestamp":"t"} "#,
        #"{"phase":"began","event":"shake","time":1,"seq":1,"timestamp":"t"}"#,
        #"{"event":"shake","phase":"began","time":1,"seq":1}"#,
        #"{"event":"shake","phase":"began","time":1,"seq":1,"timestamp":"t","extra":2}"#,
        #"{"event":"shake","phase":"began","time":1,"seq":1.5,"timestamp":"t"}"#,
        #"{"event":"shake","phase":"began","time":"1","seq":1,"timestamp":"t"}"#,
        #"{"event":"shake","phase":"began","time":1,"seq":1,"timestamp":"t","simulated":1}"#,
        #"{"event":"shake","phase":"began","time":1,"seq":1,"timestamp":"t","simulated":false}"#,
        #"{"event":"shake","phase":"ended","time":3,"began":2,"duration":"x","peak":4,"axis":"x","reversals":7,"seq":4,"timestamp":"t"}"#,
        #"{"event":"shake","phase":"ended","time":3,"began":2,"duration":1,"peak":4,"axis":"w","reversals":7,"seq":4,"timestamp":"t"}"#,
        #"{"event":"shake","phase":"cancelled","time":2,"began":1,"reason":"not_a_shake","detail":"new","seq":1,"timestamp":"t"}"#,
        #"{"event":"shake","phase":"cancelled","time":2,"began":1,"reason":"why","seq":1,"timestamp":"t"}"#,
        #"{"event":"shake","phase":"later","time":2,"seq":1,"timestamp":"t"}"#,
        #"{"event":"shake","phase":"began","time":1,"time":2,"seq":1,"timestamp":"t"}"#,
        #"{"event":"shake","phase":"began","time":1e400,"seq":1,"timestamp":"t"}"#,
        #"{"event":"shake","phase":"began","time":1,"seq":1,"timestamp":"t\u00e9\n"}"#,
        #"{"event":"shake","phase":"began","time":1,"seq":9e15,"timestamp":"t"}"#,
    ])
    func linesOfAnotherShapeGetTheGeneralParse(line: String) {
        let bytes = Array(line.utf8)
        #expect(parsed(bytes) == general(bytes))
    }

    @Test func eventLinesChangedOrCutGetWhatTheGeneralParseGives() async {
        let lines = (0..<8).map { Array(ServerMessage.shake(notification($0 * 7919)).line.utf8) }
        await propertyCheck(
            count: 4000, input: Gen.int(in: 0..<lines.count), Gen.int(in: 0..<400), Gen.int(in: 0...255),
            Gen.int(in: 0..<3)
        ) { which, position, byte, change in
            var bytes = lines[which]
            let at = position % bytes.count
            switch change {
            case 0: bytes[at] = UInt8(byte)
            case 1: bytes.removeSubrange(at...)
            default: bytes.insert(UInt8(byte), at: at)
            }
            #expect(parsed(bytes) == general(bytes), "\(String(decoding: bytes, as: UTF8.self))")
        }
    }

    @Test func aLineInPiecesGetsTheGeneralParseAndTheSameMessage() throws {
        let message = ServerMessage.shake(notification(42))
        // Not contiguous: no fast path, the same message.
        let pieces = message.line.utf8.lazy.map { $0 }
        #expect(try ServerMessage.parse(pieces) == ServerMessage.parseObject(Array(message.line.utf8)))
    }
}
