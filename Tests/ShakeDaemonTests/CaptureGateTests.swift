// SPDX-License-Identifier: Apache-2.0
import ShakeDaemon
import Testing

/// Capture on and off as listeners come and go, without a sensor.
struct CaptureGateTests {
    @Test func withASocketAndNobodyCaptureStartsOff() {
        let gate = CaptureGate(printEvents: false, hasSocket: true, alwaysOn: false)
        #expect(!gate.isCapturing)
        #expect(gate.reason == .nobody)
    }

    @Test(arguments: [
        (true, true, false, CaptureGate.Reason.printEvents),
        (false, false, false, .noSocket),
        (false, true, true, .alwaysOn),
    ])
    func someRunsCaptureWhoeverListens(printEvents: Bool, hasSocket: Bool, alwaysOn: Bool, reason: CaptureGate.Reason) {
        var gate = CaptureGate(printEvents: printEvents, hasSocket: hasSocket, alwaysOn: alwaysOn)
        #expect(gate.isCapturing)
        #expect(gate.reason == reason)
        // Listeners leaving changes nothing.
        #expect(gate.listenersChanged(subscribers: 1, sampleStreams: 0) == nil)
        #expect(gate.listenersChanged(subscribers: 0, sampleStreams: 0) == nil)
        #expect(gate.isCapturing)
    }

    @Test func theFirstListenerStartsCaptureAndTheLastStopsIt() {
        var gate = CaptureGate(printEvents: false, hasSocket: true, alwaysOn: false)
        #expect(gate.listenersChanged(subscribers: 1, sampleStreams: 0) == .startCapture(.subscribers))
        #expect(gate.listenersChanged(subscribers: 2, sampleStreams: 0) == nil)
        #expect(gate.listenersChanged(subscribers: 0, sampleStreams: 1) == nil)
        #expect(gate.reason == .sampleStreams)
        #expect(gate.listenersChanged(subscribers: 0, sampleStreams: 0) == .stopCapture)
        #expect(gate.listenersChanged(subscribers: 0, sampleStreams: 0) == nil)
        #expect(!gate.isCapturing)
    }

    @Test func aSampleStreamAloneStartsCapture() {
        var gate = CaptureGate(printEvents: false, hasSocket: true, alwaysOn: false)
        #expect(gate.listenersChanged(subscribers: 0, sampleStreams: 1) == .startCapture(.sampleStreams))
    }

    @Test func alwaysOnByReloadStartsAndKeepsCaptureThenHandsBackToListeners() {
        var gate = CaptureGate(printEvents: false, hasSocket: true, alwaysOn: false)
        #expect(gate.alwaysOnChanged(true) == .startCapture(.alwaysOn))
        #expect(gate.listenersChanged(subscribers: 1, sampleStreams: 0) == nil)
        #expect(gate.listenersChanged(subscribers: 0, sampleStreams: 0) == nil)
        #expect(gate.alwaysOnChanged(false) == .stopCapture)
        #expect(gate.listenersChanged(subscribers: 1, sampleStreams: 0) == .startCapture(.subscribers))
        #expect(gate.alwaysOnChanged(false) == nil)
    }

    @Test func negativeCountsAreNobody() {
        var gate = CaptureGate(printEvents: false, hasSocket: true, alwaysOn: false)
        #expect(gate.listenersChanged(subscribers: -3, sampleStreams: -1) == nil)
        #expect(gate.subscribers == 0)
    }

    @Test func aBusClaimStartsCaptureUntilItsClientReleasesOrLeaves() {
        var gate = CaptureGate(printEvents: false, hasSocket: true, alwaysOn: false)
        #expect(gate.claimed(by: ":1.7", user: 1000) == .startCapture(.busClaims))
        #expect(gate.claimed(by: ":1.7", user: 1000) == nil)
        #expect(gate.claimed(by: ":1.9", user: 1000) == nil)
        #expect(gate.released(by: ":1.7") == nil)
        #expect(gate.reason == .busClaims)
        // A client that never claimed (or already released) changes nothing.
        #expect(gate.released(by: ":1.7") == nil)
        #expect(gate.released(by: ":1.42") == nil)
        #expect(gate.released(by: ":1.9") == .stopCapture)
        #expect(!gate.isCapturing)
    }

    @Test func socketSubscribersAndBusClaimsBothKeepCaptureOn() {
        var gate = CaptureGate(printEvents: false, hasSocket: true, alwaysOn: false)
        #expect(gate.listenersChanged(subscribers: 1, sampleStreams: 0) == .startCapture(.subscribers))
        #expect(gate.claimed(by: ":1.3", user: 1000) == nil)
        #expect(gate.listenersChanged(subscribers: 0, sampleStreams: 0) == nil)
        #expect(gate.reason == .busClaims)
        #expect(gate.released(by: ":1.3") == .stopCapture)
    }

    // MARK: - Following the session

    /// A following gate with one user's session known: 1000 present (active, unlocked) or not.
    func following(present: Set<UInt32>?) -> CaptureGate {
        var gate = CaptureGate(printEvents: false, hasSocket: true, alwaysOn: false, followSession: true)
        _ = gate.sessionsChanged(presentUsers: present)
        return gate
    }

    @Test func lockingStopsCaptureAndUnlockingResumesIt() {
        var gate = following(present: [1000])
        #expect(gate.listenersChanged(subscribers: [1000], sampleStreams: 0) == .startCapture(.subscribers))
        #expect(gate.sessionsChanged(presentUsers: []) == .stopCapture)
        #expect(gate.reason == .sessionsAway)
        #expect(gate.sessionsChanged(presentUsers: [1000]) == .startCapture(.subscribers))
        // Another user's session changing changes nothing.
        #expect(gate.sessionsChanged(presentUsers: [1000, 1001]) == nil)
    }

    @Test func aBusClaimFollowsItsUsersSessionToo() {
        var gate = following(present: [])
        #expect(gate.claimed(by: ":1.4", user: 1000) == nil)
        #expect(gate.reason == .sessionsAway)
        #expect(gate.sessionsChanged(presentUsers: [1000]) == .startCapture(.busClaims))
        #expect(gate.released(by: ":1.4") == .stopCapture)
    }

    @Test func oneListenerWithAnActiveSessionIsEnough() {
        var gate = following(present: [1001])
        #expect(gate.listenersChanged(subscribers: [1000, 1001], sampleStreams: 0) == .startCapture(.subscribers))
        #expect(gate.listenersChanged(subscribers: [1000], sampleStreams: 0) == .stopCapture)
    }

    /// Root's listeners, listeners whose user is unknown, sample streams, always_on and a gate whose sessions
    /// are unknown (no logind) keep today's behaviour: they count whatever the sessions.
    @Test(arguments: [
        ([UInt32?](arrayLiteral: 0), 0, false, Set<UInt32>?.some([]), CaptureGate.Reason.subscribers),
        ([nil], 0, false, Set<UInt32>?.some([]), .subscribers),
        ([1000], 1, false, Set<UInt32>?.some([]), .sampleStreams),
        ([1000], 0, true, Set<UInt32>?.some([]), .alwaysOn),
        ([1000], 0, false, nil, .subscribers),
    ])
    func someListenersDoNotFollowSessions(
        users: [UInt32?], streams: Int, alwaysOn: Bool, present: Set<UInt32>?, reason: CaptureGate.Reason
    ) {
        var gate = CaptureGate(printEvents: false, hasSocket: true, alwaysOn: alwaysOn, followSession: true)
        _ = gate.sessionsChanged(presentUsers: present)
        _ = gate.listenersChanged(subscribers: users, sampleStreams: streams)
        #expect(gate.reason == reason)
        #expect(gate.isCapturing)
    }

    @Test func withoutFollowingLockedSessionsChangeNothing() {
        var gate = CaptureGate(printEvents: false, hasSocket: true, alwaysOn: false, followSession: false)
        #expect(gate.listenersChanged(subscribers: [1000], sampleStreams: 0) == .startCapture(.subscribers))
        #expect(gate.sessionsChanged(presentUsers: []) == nil)
        #expect(gate.isCapturing)
    }
}

/// The relay to iio-sensor-proxy as a listener that needs only a low rate.
struct CaptureGateRelayTests {
    @Test func theRelayAloneCapturesAtTheLowRate() {
        let gate = CaptureGate(printEvents: false, hasSocket: true, alwaysOn: false, relay: true)
        #expect(gate.isCapturing)
        #expect(gate.reason == .relay)
        #expect(gate.wantsLowRate)
        #expect(gate.isLowRate)
    }

    @Test func aSubscriberRaisesTheRateAndItsLeavingLowersIt() {
        var gate = CaptureGate(printEvents: false, hasSocket: true, alwaysOn: false, relay: true)
        #expect(gate.listenersChanged(subscribers: 1, sampleStreams: 0) == .changeRate(.subscribers))
        #expect(!gate.wantsLowRate)
        #expect(gate.listenersChanged(subscribers: 2, sampleStreams: 1) == nil)
        #expect(gate.listenersChanged(subscribers: 0, sampleStreams: 0) == .changeRate(.relay))
        #expect(gate.isCapturing)
        #expect(gate.isLowRate)
    }

    @Test func aRelayThatFailsStopsCaptureUnlessSomebodyListens() {
        var gate = CaptureGate(printEvents: false, hasSocket: true, alwaysOn: false, relay: true)
        #expect(gate.relayChanged(false) == .stopCapture)
        #expect(!gate.isCapturing)
        var listened = CaptureGate(printEvents: false, hasSocket: true, alwaysOn: false, relay: true)
        #expect(listened.listenersChanged(subscribers: 1, sampleStreams: 0) == .changeRate(.subscribers))
        #expect(listened.relayChanged(false) == nil)
        #expect(listened.listenersChanged(subscribers: 0, sampleStreams: 0) == .stopCapture)
    }

    /// Nothing reads the relay's device (no client claims the accelerometer from iio-sensor-proxy): the relay
    /// keeps no capture on, a subscriber still does, and the relay read again starts the low rate.
    @Test func anUnreadRelayKeepsNoCaptureOn() {
        var gate = CaptureGate(printEvents: false, hasSocket: true, alwaysOn: false, relay: true)
        #expect(gate.relayReadChanged(false) == .stopCapture)
        #expect(gate.reason == .relayUnread)
        #expect(!gate.reason.captures)
        #expect(gate.listenersChanged(subscribers: 1, sampleStreams: 0) == .startCapture(.subscribers))
        #expect(!gate.isLowRate)
        #expect(gate.listenersChanged(subscribers: 0, sampleStreams: 0) == .stopCapture)
        #expect(gate.relayReadChanged(true) == .startCapture(.relay))
        #expect(gate.isLowRate)
        // Without a relay, whether it is read changes nothing.
        var plain = CaptureGate(printEvents: false, hasSocket: true, alwaysOn: false)
        #expect(plain.relayReadChanged(false) == nil)
        #expect(plain.reason == .nobody)
    }

    @Test func theRelayStartingWhileNobodyListensStartsLowRateCapture() {
        var gate = CaptureGate(printEvents: false, hasSocket: true, alwaysOn: false)
        #expect(gate.relayChanged(true) == .startCapture(.relay))
        #expect(gate.isLowRate)
    }

    @Test func alwaysOnAndPrintedEventsKeepTheConfiguredRate() {
        var gate = CaptureGate(printEvents: false, hasSocket: true, alwaysOn: true, relay: true)
        #expect(!gate.wantsLowRate)
        #expect(gate.alwaysOnChanged(false) == .changeRate(.relay))
        let printing = CaptureGate(printEvents: true, hasSocket: true, alwaysOn: false, relay: true)
        #expect(!printing.wantsLowRate)
    }
}
