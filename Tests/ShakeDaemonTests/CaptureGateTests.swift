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
        #expect(gate.claimed(by: ":1.7") == .startCapture(.busClaims))
        #expect(gate.claimed(by: ":1.7") == nil)
        #expect(gate.claimed(by: ":1.9") == nil)
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
        #expect(gate.claimed(by: ":1.3") == nil)
        #expect(gate.listenersChanged(subscribers: 0, sampleStreams: 0) == nil)
        #expect(gate.reason == .busClaims)
        #expect(gate.released(by: ":1.3") == .stopCapture)
    }
}
