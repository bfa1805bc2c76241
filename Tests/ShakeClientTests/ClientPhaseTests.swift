// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeClient
import ShakeDetection
import ShakeProtocol
import ShakeTestSupport
import Testing

/// The daemon sends every connection every phase until it has read the connection's `subscribe` (the protocol's
/// default); a subscriber that asked for some phases gets those alone, even of an event sent in that moment.
struct ClientPhaseTests {
    @Test func anEventOfAnotherPhaseSentBeforeTheSubscribeIsReadIsNotHandedOn() async throws {
        let directory = try Scratch.directory("client-phases")
        let socket = directory + "/shaked.sock"
        let listener = try #require(UnixSocket.bind(socket, type: Int32(SOCK_STREAM.rawValue)))
        defer { close(listener) }
        #expect(listen(listener, 1) == 0)
        let hello = ServerMessage.hello(.init(sensor: SensorInfo(source: "replay"), shaking: false, seq: 0, run: "r1"))
        let began = ServerMessage.shake(.init(event: .began(time: 1), seq: 1, timestamp: "2026-01-01T00:00:00.000Z"))
        let summary = ShakeSummary(time: 2, began: 1, peak: 20, axis: .x, reversals: 4)
        let ended = ServerMessage.shake(.init(event: .ended(summary), seq: 2, timestamp: "2026-01-01T00:00:01.000Z"))
        // The daemon's side: hello and a `began` at once, the `ended` only after the subscribe has been read.
        let daemon = Thread {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            defer { close(connection) }
            func send(_ message: ServerMessage) {
                let bytes = Array((message.line + "\n").utf8)
                _ = bytes.withUnsafeBytes { Foundation.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
            send(hello)
            send(began)
            var byte: UInt8 = 0
            while recv(connection, &byte, 1, 0) == 1, byte != UInt8(ascii: "\n") {}
            send(.ok(request: "subscribe"))
            send(ended)
            while recv(connection, &byte, 1, 0) == 1 {}
        }
        daemon.start()
        let client = ShakeClient(socketPath: socket)
        let first: ServerMessage.Notification? = try await client.withUpdates(phases: [.ended], reconnect: false) {
            updates in
            for try await update in updates {
                if case .shake(let notification) = update { return notification }
            }
            return nil
        }
        #expect(first?.seq == 2)
        #expect(first?.event.phase == .ended)
    }
}
