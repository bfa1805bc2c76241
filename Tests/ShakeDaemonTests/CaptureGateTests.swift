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
