// SPDX-License-Identifier: Apache-2.0
import ShakeDetection
import ShakeMQTT
import ShakeProtocol
import Testing

/// The forwarder's decisions without a broker or a daemon: the queue, its order and limit, what is delivered.
struct ForwarderCoreTests {
    static let topics = ForwarderTopics(prefix: "shaked", device: "kiosk1")
    static let hello = ServerMessage.Hello(sensor: SensorInfo(source: "replay"), shaking: false, seq: 0, run: "r1")

    static func event(_ seq: Int) -> ServerMessage.Notification {
        ServerMessage.Notification(event: .began(time: Double(seq)), seq: seq, timestamp: "2026-11-27T08:00:00.000Z")
    }

    static func core(capacity: Int = 100) -> ForwarderCore {
        var core = ForwarderCore(topics: topics, qos: 1, capacity: capacity, discovery: nil)
        _ = core.handle(.daemonConnected(hello, replayComplete: true))
        return core
    }

    /// The entries each action sends, by seq.
    static func sent(_ actions: [ForwarderCore.Action]) -> [ForwarderCore.Entry] {
        actions.compactMap { if case .send(let entry) = $0 { entry } else { nil } }
    }

    /// Hands every entry sent over as mid = seq, as the shell would.
    static func hand(_ actions: [ForwarderCore.Action], to core: inout ForwarderCore) {
        for entry in sent(actions) { _ = core.handle(.handed(id: entry.id, mid: Int32(entry.seq))) }
    }

    @Test func eventsWaitWhileTheBrokerIsAwayAndGoInOrderWhenItConnects() {
        var core = Self.core()
        for seq in 1...5 { #expect(Self.sent(core.handle(.event(Self.event(seq)))).isEmpty) }
        #expect(core.queue.count == 5)
        let actions = core.handle(.brokerConnected)
        // Online, the state, then the events in order.
        let published = actions.compactMap { if case .publish(let message) = $0 { message.topic } else { nil } }
        #expect(published == ["shaked/kiosk1/availability", "shaked/kiosk1/state"])
        #expect(Self.sent(actions).map(\.seq) == [1, 2, 3, 4, 5])
        #expect(Self.sent(actions).allSatisfy { $0.message.topic == "shaked/kiosk1/event" && $0.message.qos == 1 })
    }

    @Test func anEventLeavesTheQueueWhenItAndAllBeforeItAreAcknowledged() {
        var core = Self.core()
        _ = core.handle(.brokerConnected)
        for seq in 1...3 { Self.hand(core.handle(.event(Self.event(seq))), to: &core) }
        // The broker acknowledges 2 before 1: nothing is delivered yet.
        #expect(core.handle(.acknowledged(mid: 2)).isEmpty)
        #expect(core.queue.count == 3)
        #expect(core.handle(.acknowledged(mid: 1)) == [.delivered(run: "r1", seq: 2)])
        #expect(core.handle(.acknowledged(mid: 3)) == [.delivered(run: "r1", seq: 3)])
        #expect(core.queue.isEmpty)
        #expect(core.counters.published == 3)
    }

    @Test func anUnknownOrRepeatedAcknowledgementChangesNothing() {
        var core = Self.core()
        _ = core.handle(.brokerConnected)
        Self.hand(core.handle(.event(Self.event(1))), to: &core)
        #expect(core.handle(.acknowledged(mid: 99)).isEmpty)
        #expect(core.handle(.acknowledged(mid: 1)) == [.delivered(run: "r1", seq: 1)])
        #expect(core.handle(.acknowledged(mid: 1)).isEmpty)
        #expect(core.counters.published == 1)
    }

    @Test func atItsLimitTheQueueDropsTheOldestWaitingEventAndSaysSoOnce() {
        var core = Self.core(capacity: 3)
        var notices: [ForwarderCore.Notice] = []
        for seq in 1...10 {
            for action in core.handle(.event(Self.event(seq))) {
                if case .notice(let notice) = action { notices.append(notice) }
            }
        }
        #expect(notices == [.queueFull(size: 3)])
        #expect(core.queue.map(\.seq) == [8, 9, 10])
        #expect(core.counters.dropped == 7)
        // When the broker returns, the drops of the outage are reported, and the newest events go.
        let actions = core.handle(.brokerConnected)
        #expect(actions.contains(.notice(.droppedWhileAway(dropped: 7))))
        #expect(Self.sent(actions).map(\.seq) == [8, 9, 10])
    }

    @Test func eventsInFlightAreNeverDroppedForNewOnes() {
        var core = Self.core(capacity: 2)
        _ = core.handle(.brokerConnected)
        Self.hand(core.handle(.event(Self.event(1))), to: &core)
        Self.hand(core.handle(.event(Self.event(2))), to: &core)
        _ = core.handle(.brokerLost)
        // Both are with the library, which resends them: the new event is the one dropped.
        _ = core.handle(.event(Self.event(3)))
        #expect(core.queue.map(\.seq) == [1, 2])
        #expect(core.counters.dropped == 1)
    }

    @Test func noMoreThanTheWindowIsInFlight() {
        var core = Self.core(capacity: 1000)
        for seq in 1...100 { _ = core.handle(.event(Self.event(seq))) }
        let first = core.handle(.brokerConnected)
        #expect(Self.sent(first).count == ForwarderCore.window)
        Self.hand(first, to: &core)
        let next = core.handle(.acknowledged(mid: 1))
        #expect(Self.sent(next).map(\.seq) == [ForwarderCore.window + 1])
    }

    @Test func anEventHandedBackAfterAFailureGoesAgainOnTheNextConnection() {
        var core = Self.core()
        _ = core.handle(.brokerConnected)
        let actions = core.handle(.event(Self.event(1)))
        let entry = Self.sent(actions)[0]
        _ = core.handle(.brokerLost)
        _ = core.handle(.handingFailed(id: entry.id))
        #expect(Self.sent(core.handle(.event(Self.event(2)))).isEmpty)
        #expect(Self.sent(core.handle(.brokerConnected)).map(\.seq) == [1, 2])
    }

    @Test func theStateFollowsTheDaemon() {
        var core = Self.core()
        _ = core.handle(.brokerConnected)
        let lost = core.handle(.daemonLost)
        #expect(
            lost == [
                .publish(
                    OutgoingMessage(
                        topic: "shaked/kiosk1/state",
                        payload: #"{"daemon":"disconnected","sensor":{"source":"replay"},"run":"r1"}"#, qos: 1,
                        retain: true))
            ])
        #expect(core.handle(.daemonConnected(Self.hello, replayComplete: false)).first == .notice(.replayIncomplete))
    }

    @Test func eventsCarryTheRunOfTheDaemonTheyCameFrom() {
        var core = Self.core()
        _ = core.handle(.brokerConnected)
        var other = Self.hello
        other.run = "r2"
        _ = core.handle(.daemonConnected(other, replayComplete: true))
        let entry = Self.sent(core.handle(.event(Self.event(1))))[0]
        #expect(entry.run == "r2")
        #expect(entry.message.payload.hasSuffix(#","run":"r2"}"#))
    }
}

struct ReconnectBackoffTests {
    @Test func doublesUpToTheMaximumAndStartsAgainAfterASuccess() {
        var backoff = ReconnectBackoff(initial: 0.5, maximum: 8, afterRefusal: 5)
        let waits = (0..<7).map { _ in backoff.next(refused: false, jitter: 0) }
        #expect(waits == [0.5, 1, 2, 4, 8, 8, 8])
        backoff.reset()
        #expect(backoff.next(refused: false, jitter: 0) == 0.5)
    }

    @Test func aRefusalWaitsLongerFromTheStart() {
        var backoff = ReconnectBackoff(initial: 0.5, maximum: 60, afterRefusal: 5)
        #expect(backoff.next(refused: true, jitter: 0) == 5)
        #expect(backoff.next(refused: true, jitter: 0) == 10)
    }

    @Test func jitterTakesOffAtMostAQuarter() {
        var backoff = ReconnectBackoff(initial: 4, maximum: 60, afterRefusal: 5)
        #expect(backoff.next(refused: false, jitter: 0.999_999) > 3)
        var again = ReconnectBackoff(initial: 4, maximum: 60, afterRefusal: 5)
        #expect(again.next(refused: false, jitter: 5) == 3)  // Out of range: held to 1.
    }

    @Test func manyFailuresNeverOverflow() {
        var backoff = ReconnectBackoff(initial: 0.5, maximum: 60, afterRefusal: 5)
        for _ in 0..<10_000 { _ = backoff.next(refused: false, jitter: 0) }
        #expect(backoff.next(refused: false, jitter: 0) == 60)
    }
}

struct BrokerRefusalTests {
    @Test(arguments: [
        (Int32(4), BrokerRefusal.badCredentials), (5, .notAuthorized), (2, .identifierRejected), (1, .protocolVersion),
        (3, .unavailable), (134, .badCredentials), (135, .notAuthorized), (77, .other(code: 77)),
    ])
    func connackCodes(code: Int32, refusal: BrokerRefusal) {
        #expect(BrokerRefusal.classify(connack: code, result: 0, tls: false, logged: nil) == refusal)
    }

    @Test func aLostConnectionIsNoRefusal() {
        #expect(BrokerRefusal.classify(connack: nil, result: 7, tls: false, logged: nil) == nil)
        #expect(BrokerRefusal.classify(connack: 0, result: 7, tls: false, logged: nil) == nil)
    }

    @Test func aFailedHandshakeIsATLSRefusalWithWhatTheLibrarySaid() {
        let logged = "OpenSSL Error[0]: error:0A000086:SSL routines::certificate verify failed"
        let refusal = BrokerRefusal.classify(connack: nil, result: 14, tls: true, logged: logged)
        #expect(refusal == .tls(logged))
        #expect(refusal?.advice.contains("broker.ca_file") == true)
        #expect(BrokerRefusal.classify(connack: nil, result: 8, tls: true, logged: nil) == .tls("TLS error"))
    }

    /// mosquitto answers a wrong password with "not authorised" (5), not "bad user name or password" (4).
    @Test(arguments: [BrokerRefusal.badCredentials, .notAuthorized])
    func refusedCredentialsAdviseWhereThePasswordComesFrom(refusal: BrokerRefusal) {
        #expect(refusal.advice.contains("broker.password_file"))
        #expect(refusal.advice.contains("broker.password_credential"))
    }
}
