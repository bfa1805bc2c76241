// SPDX-License-Identifier: Apache-2.0
import ShakeDaemon
import ShakeDetection
import Testing
import UInput

/// Which chords the daemon presses for an event: only its subscriber's own user's, only while that user is in
/// front of a seat, and not more than the rate limit lets through. The clock is a reading passed in.
struct KeyGateTests {
    static let undo = try! KeyChord(parsing: "ctrl+z")
    static let redo = try! KeyChord(parsing: "shift+ctrl+z")
    static let start = ContinuousClock.now
    static let alice: UInt32 = 1000
    static let bob: UInt32 = 1001

    static func subscription(_ user: UInt32, _ chord: KeyChord = undo, _ phases: Set<ShakeEvent.Phase> = [.ended])
        -> KeyGate.Subscription
    {
        KeyGate.Subscription(user: user, chord: chord, phases: phases)
    }

    /// The outcome for each connection, in order.
    static func outcomes(_ decisions: [KeyGate.Decision]) -> [KeyGate.Connection: KeyGate.Outcome] {
        Dictionary(uniqueKeysWithValues: decisions.map { ($0.connection, $0.outcome) })
    }

    @Test func aChordIsPressedOnlyWhileItsUserIsInFront() {
        var gate = KeyGate()
        gate.subscribe(1, Self.subscription(Self.alice))
        gate.sessionsChanged(presentUsers: [Self.alice])
        let pressed = gate.decide(.ended, origin: .live, now: Self.start)
        #expect(pressed == [.init(connection: 1, user: Self.alice, chord: Self.undo, outcome: .pressed)])

        // Bob switches in: Alice's session is in the background, her chord is no longer typed.
        gate.sessionsChanged(presentUsers: [Self.bob])
        #expect(Self.outcomes(gate.decide(.ended, origin: .live, now: Self.start + .seconds(5))) == [1: .away])
        // Alice is back, then locks her screen.
        gate.sessionsChanged(presentUsers: [Self.alice])
        #expect(Self.outcomes(gate.decide(.ended, origin: .live, now: Self.start + .seconds(10))) == [1: .pressed])
        gate.sessionsChanged(presentUsers: [])
        #expect(Self.outcomes(gate.decide(.ended, origin: .live, now: Self.start + .seconds(15))) == [1: .away])
    }

    @Test func withoutLogindOnlyRootsChordsArePressed() {
        var gate = KeyGate()
        gate.subscribe(1, Self.subscription(Self.alice))
        gate.subscribe(2, Self.subscription(0))
        #expect(Self.outcomes(gate.decide(.ended, origin: .live, now: Self.start)) == [1: .away, 2: .pressed])
        // logind answered once, then the bus was lost: unknown again.
        gate.sessionsChanged(presentUsers: [Self.alice])
        gate.sessionsChanged(presentUsers: nil)
        #expect(
            Self.outcomes(gate.decide(.ended, origin: .live, now: Self.start + .seconds(5))) == [1: .away, 2: .pressed])
    }

    @Test func twoUsersAtTwoSeatsEachGetTheirOwnAndOnlyTheirs() {
        var gate = KeyGate()
        gate.subscribe(1, Self.subscription(Self.alice, Self.undo))
        gate.subscribe(2, Self.subscription(Self.bob, Self.redo))
        gate.sessionsChanged(presentUsers: [Self.alice])
        let decisions = gate.decide(.ended, origin: .live, now: Self.start)
        #expect(
            decisions == [
                .init(connection: 1, user: Self.alice, chord: Self.undo, outcome: .pressed),
                .init(connection: 2, user: Self.bob, chord: Self.redo, outcome: .away),
            ])
    }

    @Test func onlyThePhasesASubscriberNamedPress() {
        var gate = KeyGate()
        gate.sessionsChanged(presentUsers: [Self.alice])
        gate.subscribe(1, Self.subscription(Self.alice, Self.undo, [.ended]))
        gate.subscribe(2, Self.subscription(Self.alice, Self.redo, [.began, .cancelled]))
        #expect(Self.outcomes(gate.decide(.began, origin: .live, now: Self.start)) == [2: .pressed])
        #expect(Self.outcomes(gate.decide(.ended, origin: .live, now: Self.start + .seconds(1))) == [1: .pressed])
        #expect(Self.outcomes(gate.decide(.cancelled, origin: .live, now: Self.start + .seconds(2))) == [2: .pressed])
    }

    @Test func aSimulatedShakePressesOnlyTheChordsOfWhoAskedForIt() {
        var gate = KeyGate()
        gate.sessionsChanged(presentUsers: [Self.alice, Self.bob])
        gate.subscribe(1, Self.subscription(Self.alice))
        gate.subscribe(2, Self.subscription(Self.bob))
        gate.subscribe(3, Self.subscription(0))
        #expect(Self.outcomes(gate.decide(.ended, origin: .simulated(by: Self.bob), now: Self.start)) == [2: .pressed])
        #expect(
            Self.outcomes(gate.decide(.ended, origin: .simulated(by: 0), now: Self.start + .seconds(5))) == [
                3: .pressed
            ])
        // Nobody's when the kernel did not say who asked.
        #expect(gate.decide(.ended, origin: .simulated(by: nil), now: Self.start + .seconds(10)).isEmpty)
        // And the session rule still holds for the one who asked.
        gate.sessionsChanged(presentUsers: [Self.alice])
        #expect(
            Self.outcomes(gate.decide(.ended, origin: .simulated(by: Self.bob), now: Self.start + .seconds(15)))
                == [2: .away])
    }

    @Test func aBurstOfFiveHundredEventsPressesOnlyTheBurst() {
        var gate = KeyGate()
        gate.sessionsChanged(presentUsers: [Self.alice])
        gate.subscribe(1, Self.subscription(Self.alice))
        var pressed = 0
        for index in 0..<500 {
            let decisions = gate.decide(.ended, origin: .live, now: Self.start + .microseconds(index))
            pressed += decisions.filter { $0.outcome == .pressed }.count
        }
        #expect(pressed == KeyGate.perUser.burst)
        #expect(gate.pressed == KeyGate.perUser.burst)
        #expect(gate.dropped == 500 - KeyGate.perUser.burst)
        // Time refills the bucket: two a second.
        let later = gate.decide(.ended, origin: .live, now: Self.start + .seconds(1))
        #expect(Self.outcomes(later) == [1: .pressed])
    }

    @Test func manyConnectionsOfOneUserShareItsLimitAndEveryoneSharesTheOverallOne() {
        var gate = KeyGate()
        let users = (0..<20).map { UInt32(2000 + $0) }
        gate.sessionsChanged(presentUsers: Set(users + [Self.alice]))
        for connection in 1...50 { gate.subscribe(KeyGate.Connection(connection), Self.subscription(Self.alice)) }
        let one = gate.decide(.ended, origin: .live, now: Self.start)
        #expect(one.filter { $0.outcome == .pressed }.count == KeyGate.perUser.burst)

        var many = KeyGate()
        many.sessionsChanged(presentUsers: Set(users))
        for (index, user) in users.enumerated() { many.subscribe(KeyGate.Connection(index), Self.subscription(user)) }
        var pressed = 0
        for index in 0..<500 {
            pressed +=
                many.decide(.ended, origin: .live, now: Self.start + .microseconds(index)).filter {
                    $0.outcome == .pressed
                }.count
        }
        #expect(pressed == KeyGate.overall.burst)
    }

    @Test func resubscribingDoesNotRefillTheLimit() {
        var gate = KeyGate()
        gate.sessionsChanged(presentUsers: [Self.alice])
        gate.subscribe(1, Self.subscription(Self.alice))
        var pressed = 0
        for index in 0..<100 {
            gate.subscribe(1, Self.subscription(Self.alice))
            pressed +=
                gate.decide(.ended, origin: .live, now: Self.start + .microseconds(index)).filter {
                    $0.outcome == .pressed
                }.count
        }
        #expect(pressed == KeyGate.perUser.burst)
    }

    @Test func aClosedConnectionIsNoLongerPressed() {
        var gate = KeyGate()
        gate.sessionsChanged(presentUsers: [Self.alice])
        gate.subscribe(1, Self.subscription(Self.alice))
        let first = gate.unsubscribe(1)
        let second = gate.unsubscribe(1)
        #expect(first && !second)
        #expect(gate.decide(.ended, origin: .live, now: Self.start).isEmpty)
        #expect(gate.subscriptions.isEmpty)
    }

    @Test func droppedPressesAreLoggedOnceAnIntervalWithTheirCount() {
        var gate = KeyGate()
        gate.sessionsChanged(presentUsers: [Self.alice])
        gate.subscribe(1, Self.subscription(Self.alice))
        #expect(gate.dropsToLog(now: Self.start) == nil)
        for index in 0..<10 { _ = gate.decide(.ended, origin: .live, now: Self.start + .microseconds(index)) }
        // The first line at once, with what was dropped so far.
        #expect(gate.dropsToLog(now: Self.start + .milliseconds(1)) == 10 - KeyGate.perUser.burst)
        for index in 0..<100 { _ = gate.decide(.ended, origin: .live, now: Self.start + .milliseconds(2 + index)) }
        #expect(gate.dropsToLog(now: Self.start + .seconds(1)) == nil)
        let count = gate.dropsToLog(now: Self.start + .seconds(11))
        #expect(count != nil && count! > 90)
        #expect(gate.dropsToLog(now: Self.start + .seconds(30)) == nil)
    }
}
