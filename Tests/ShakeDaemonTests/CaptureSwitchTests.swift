// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import IIOSensor
import Testing

@testable import ShakeDaemon

/// The capture gate's decisions carried to the source's thread as wakeups, without a sensor or a thread.
struct CaptureSwitchTests {
    static func socketGate() -> CaptureGate {
        CaptureGate(printEvents: false, hasSocket: true, alwaysOn: false)
    }

    @Test func whileNobodyListensTheSourceWaitsAndTheFirstListenerWakesIt() throws {
        let capture = CaptureSwitch(gate: Self.socketGate())
        let idle = try #require(capture.idleWakeup())
        #expect(!idle.isSignalled)
        capture.update { $0.listenersChanged(subscribers: [1000], sampleStreams: 0) }
        #expect(idle.isSignalled)
        capture.waitEnded()
        // Now capture is wanted: no wait.
        #expect(capture.idleWakeup() == nil)
    }

    @Test func theLastListenerLeavingStopsTheCaptureInProgress() {
        let capture = CaptureSwitch(gate: Self.socketGate())
        capture.update { $0.listenersChanged(subscribers: [1000], sampleStreams: 1) }
        #expect(capture.sampleStreams == 1)
        let (stop, lowRate) = capture.captureBegins()
        #expect(!stop.isSignalled && !lowRate)
        // A listener more changes nothing; the last one leaving ends the capture.
        capture.update { $0.listenersChanged(subscribers: [1000, 1001], sampleStreams: 1) }
        #expect(!stop.isSignalled)
        capture.update { $0.listenersChanged(subscribers: [], sampleStreams: 0) }
        #expect(stop.isSignalled)
    }

    @Test func aRateChangeEndsTheCaptureSoThatItStartsAgainAtTheNewRate() {
        let capture = CaptureSwitch(
            gate: CaptureGate(printEvents: false, hasSocket: true, alwaysOn: false, relay: true))
        let (relayOnly, lowRate) = capture.captureBegins()
        #expect(!relayOnly.isSignalled && lowRate)
        capture.update { $0.listenersChanged(subscribers: [1000], sampleStreams: 0) }
        #expect(relayOnly.isSignalled)
        capture.waitEnded()
        let (forClients, clientRate) = capture.captureBegins()
        #expect(!forClients.isSignalled && !clientRate)
    }

    @Test func aCaptureBegunWhenNoLongerWantedEndsAtOnce() {
        let capture = CaptureSwitch(gate: Self.socketGate())
        #expect(capture.captureBegins().stop.isSignalled)
    }

    @Test func stoppingForGoodEndsTheWaitAndTheCapture() throws {
        let waiting = CaptureSwitch(gate: Self.socketGate())
        let idle = try #require(waiting.idleWakeup())
        waiting.stopForGood()
        #expect(idle.isSignalled && waiting.shutdown.isSignalled)

        let capturing = CaptureSwitch(gate: CaptureGate(printEvents: true, hasSocket: true, alwaysOn: false))
        let (stop, _) = capturing.captureBegins()
        #expect(!stop.isSignalled)
        capturing.stopForGood()
        #expect(stop.isSignalled)
        // A capture begun after that ends at once.
        #expect(capturing.captureBegins().stop.isSignalled)
    }
}
