// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import IIOSensor

/// Capture on and off: the ``CaptureGate`` that decides from who listens, and the wakeups that carry its decisions
/// to the source's thread — `stop` ends the capture in progress (the last listener left, or the rate changes),
/// `idle` ends the wait while nobody listens. The server's loop, the bus and session threads, the relay and the
/// reload feed the gate; the source's thread waits here.
final class CaptureSwitch: Sendable {
    private struct State: Sendable {
        var gate: CaptureGate
        var stop: Wakeup?
        var idle: Wakeup?
    }

    private let state: Locked<State>
    /// Signalled once, when the source stops for good.
    let shutdown = Wakeup()

    init(gate: CaptureGate) {
        state = Locked(State(gate: gate))
    }

    /// The gate as it is now.
    var gate: CaptureGate { state.withLock { $0.gate } }

    /// The clients that stream samples: the source hands them every sample while there is one.
    var sampleStreams: Int { state.withLock { $0.gate.sampleStreams } }

    /// Runs a step of the gate (a listener came or went, a claim, sessions, the relay, a reload) and starts or
    /// stops capture as it decided.
    func update(_ step: (inout CaptureGate) -> CaptureGate.Action?) {
        state.withLock { state in
            switch step(&state.gate) {
            case .startCapture: state.idle?.signal()
            // The capture loop starts again at once, at the rate the gate now wants; once capture has stopped, it
            // says why (not here, where a replay, which the gate does not stop, would log every client that leaves).
            case .stopCapture, .changeRate: state.stop?.signal()
            case nil: break
            }
        }
    }

    /// Stops the source's thread, wherever it waits.
    func stopForGood() {
        shutdown.signal()
        state.withLock { state in
            state.stop?.signal()
            state.idle?.signal()
        }
    }

    /// For the source's thread: the wakeup to wait on while capture is off, or nil when capture is wanted.
    func idleWakeup() -> Wakeup? {
        state.withLock { state in
            guard !state.gate.wantsCapture else { return nil }
            let idle = Wakeup()
            state.idle = idle
            return idle
        }
    }

    /// For the source's thread: a capture begins; the returned wakeup ends it (already signalled when capture is
    /// no longer wanted, or the source stops).
    func captureBegins() -> (stop: Wakeup, lowRate: Bool) {
        state.withLock { state in
            let stop = Wakeup()
            state.stop = stop
            if !state.gate.wantsCapture || shutdown.isSignalled { stop.signal() }
            return (stop, state.gate.wantsLowRate)
        }
    }

    /// For the source's thread: the wait or the capture ended.
    func waitEnded() {
        state.withLock { state in
            state.idle = nil
            state.stop = nil
        }
    }
}
