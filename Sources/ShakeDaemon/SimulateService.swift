// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import ServiceLifecycle
import ShakeDetection
import ShakeTrace

/// Requests for a simulated shake (`{"request":"simulate"}`), from the server's loop to the simulate service:
/// one at a time, a request while one runs changes nothing. Each carries the user who asked (nil when the kernel
/// did not say): a simulated shake presses that user's key chords only.
final class SimulationRequests: Sendable {
    private let requests = AsyncStream.makeStream(of: UInt32?.self, bufferingPolicy: .bufferingNewest(1))
    private let running = Locked(false)

    var stream: AsyncStream<UInt32?> { requests.stream }

    /// Asks for a shake for `requester`, unless one is under way.
    func request(by requester: UInt32?) {
        let alreadyRunning = running.withLock { running in
            defer { running = true }
            return running
        }
        if !alreadyRunning { requests.continuation.yield(requester) }
    }

    /// The shake asked for is over.
    func done() {
        running.withLock { $0 = false }
    }

    /// No more shakes: the service's loop ends.
    func finish() {
        requests.continuation.finish()
    }
}

/// Simulated shakes, one at a time, as child work of the group: a shutdown waits for the one in progress to stop,
/// so nothing is published after the server closes.
struct SimulateService: Service {
    let requests: SimulationRequests
    /// The detector's settings in force.
    let settings: @Sendable () -> DetectorSettings
    let path: EventPath
    /// Whether events come in real time (as the shake would make them); false publishes them at once (tests).
    var realTime = true

    func run() async {
        for await requester in requests.stream.cancelOnGracefulShutdown() {
            await simulate(for: requester)
        }
    }

    /// Runs a synthesized shake through a detector of its own, in real time, and publishes its events marked
    /// `simulated` through the event path like any other: like the iOS Simulator's Shake command, without
    /// disturbing the real stream. A shutdown stops it between events.
    func simulate(for requester: UInt32?) async {
        defer { requests.done() }
        var options = SynthesisOptions()
        options.before = 0.8
        options.after = 0.6
        options.duration = 1.2
        options.background = .still
        options.seed = UInt64.random(in: 1...UInt64.max)
        let samples = TraceSynthesizer(options: options).samples()
        var detector = ShakeDetector(settings: settings())
        let clock = ContinuousClock()
        let start = clock.now
        for sample in samples {
            guard let event = detector.process(sample) else { continue }
            if realTime {
                let due = start + .nanoseconds(Int64(sample.time * 1e9))
                // On an event loop's timer: `clock.sleep` is libdispatch's, whose pool, once woken, keeps a timer
                // of its own for the rest of the process (LoopExecutor).
                let wait = clock.now.duration(to: due)
                if (try? await cancelWhenGracefulShutdown({ try await LoopExecutor.sleep(for: wait) })) == nil {
                    return
                }
            }
            path.publish(event, origin: .simulated(by: requester))
        }
    }
}
