import Dispatch
import Foundation
import IIOSensor
import Logging
import ShakeDetection
import ShakeProtocol
import ShakeServer
import ShakeTrace
import Synchronization

/// The running daemon: one source of samples, one detector, the event outputs (the socket server and, with
/// `--print-events`, standard output); stopped by SIGTERM or SIGINT.
///
/// Capture from a sensor runs only while somebody listens (a subscriber, a sample stream, `--print-events` or
/// `--always-on`); with nobody, the buffer is disabled and the daemon sleeps.
final class Daemon: Sendable {
    enum Input: Sendable {
        case iio(backend: LibIIOBackend, configuration: SensorSource.Configuration)
        case replay(path: String, speed: Double, loop: Bool)
    }

    struct Options: Sendable {
        var printEvents = false
        var alwaysOn = false
        var listener: ShakeServer.Listener?
        var serverConfiguration = ServerConfiguration()
    }

    private struct CaptureControl: Sendable {
        var stop: Wakeup?
        var idle: Wakeup?
    }

    /// What the capture thread shares with the server's thread.
    private struct Shared {
        var sensor = SensorInfo.none
        var shaking = false
        var counters = ShakeDetector.Counters()
        var subscribers = 0
        var sampleStreams = 0
        var simulating = false
    }

    private let settings: DetectorSettings
    private let sink: EventSink
    private let logger: Logger
    private let input: Input
    private let options: Options
    private let shutdown = Wakeup()
    private let shared = Locked(Shared())
    /// Stops the capture in progress (when the last listener leaves), and wakes the idle wait (when one comes).
    private let captureControl = Locked<CaptureControl>(CaptureControl())
    private let serverBox = Locked<ShakeServer?>(nil)
    private var server: ShakeServer? { serverBox.withLock { $0 } }
    nonisolated(unsafe) private var detector: ShakeDetector  // Only on the capture thread.
    nonisolated(unsafe) private var signalSources: [any DispatchSourceSignal] = []

    init(settings: DetectorSettings, sink: EventSink, logger: Logger, input: Input, options: Options) {
        self.settings = settings
        detector = ShakeDetector(settings: settings)
        self.sink = sink
        self.logger = logger
        self.input = input
        self.options = options
        if case .replay(let path, _, _) = input {
            shared.withLock { $0.sensor = SensorInfo(source: "replay", name: path) }
        }
    }

    /// Runs until a signal (or, for a replay without --loop, the end of the trace).
    /// - Returns: the exit status.
    func run() -> Int32 {
        installSignalHandlers()
        let server = startServer()
        if options.listener != nil && server == nil { return 1 }
        var status: Int32 = 0
        switch input {
        case .iio(let backend, let configuration):
            logger.info(
                "starting",
                metadata: [
                    "source": "\(backend.uri.map { "iio:\($0)" } ?? "iio (local)")",
                    "device": "\(configuration.request)", "rate": "\(SamplingFrequency.format(configuration.rate)) Hz",
                ])
            let source = SensorSource(backend: backend, configuration: configuration, logger: logger)
            // The sensor in use stays in status while capture is off for lack of listeners; it is forgotten
            // only when it breaks (vanishes, fails) — see streamBroke.
            source.sensorChanged = { [shared] selection in
                guard let (accelerometer, rate) = selection else { return }
                shared.withLock {
                    $0.sensor = SensorInfo(
                        source: "iio", name: accelerometer.name ?? accelerometer.label, id: accelerometer.id,
                        location: accelerometer.location?.rawValue, rate: rate)
                }
            }
            captureWhileListened(source)
        case .replay(let path, let speed, let loop):
            status = replay(path: path, speed: speed, loop: loop)
        }
        if let event = detector.interrupt() { emit(event) }
        if let server { wait { await server.shutdown() } }
        let counters = detector.counters
        logger.info(
            "stopped",
            metadata: [
                "samples": "\(counters.samples)", "invalid": "\(counters.invalid)",
                "discontinuities": "\(counters.discontinuities)", "began": "\(counters.began)",
                "ended": "\(counters.ended)", "cancelled": "\(counters.cancelled)",
            ])
        return status
    }

    // MARK: - The server

    private func startServer() -> ShakeServer? {
        guard let listener = options.listener else { return nil }
        let shared = self.shared
        let server = ShakeServer(
            configuration: options.serverConfiguration,
            hooks: .init(
                status: {
                    let state = shared.withLock { $0 }
                    let counters = state.counters
                    return .init(
                        sensor: state.sensor, shaking: state.shaking,
                        counters: [
                            "samples": counters.samples, "invalid_samples": counters.invalid,
                            "discontinuities": counters.discontinuities, "began": counters.began,
                            "ended": counters.ended, "cancelled": counters.cancelled,
                        ])
                },
                simulate: { [self] in simulate() },
                listenersChanged: { [self] subscribers, streams in listenersChanged(subscribers, streams) }),
            logger: logger)
        do {
            try wait { try await server.start(listener) }
            serverBox.withLock { $0 = server }
            return server
        } catch {
            logger.critical("cannot listen: \(error)")
            return nil
        }
    }

    /// Runs an async operation from this synchronous daemon thread.
    private func wait<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) throws -> T {
        let result = Locked<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                let value = try await operation()
                result.withLock { $0 = .success(value) }
            } catch {
                result.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0! }.get()
    }

    private func wait(_ operation: @escaping @Sendable () async -> Void) {
        _ = try? wait { () async throws -> Bool in
            await operation()
            return true
        }
    }

    // MARK: - Power: capture only while somebody listens

    private var captureWanted: Bool {
        options.printEvents || options.alwaysOn || options.listener == nil
            || shared.withLock { $0.subscribers + $0.sampleStreams > 0 }
    }

    private func listenersChanged(_ subscribers: Int, _ streams: Int) {
        shared.withLock {
            $0.subscribers = subscribers
            $0.sampleStreams = streams
        }
        let wanted = captureWanted
        captureControl.withLock { control in
            if wanted { control.idle?.signal() } else { control.stop?.signal() }
        }
    }

    private func captureWhileListened(_ source: SensorSource) {
        while !shutdown.isSignalled {
            if !captureWanted {
                let idle = Wakeup()
                captureControl.withLock { $0.idle = idle }
                if captureWanted { idle.signal() }
                logger.info("nobody is listening: capture is off until a client connects")
                while !shutdown.isSignalled && !idle.isSignalled {
                    idle.sleep(for: .seconds(3600))
                    if shutdown.isSignalled { break }
                }
                captureControl.withLock { $0.idle = nil }
                if shutdown.isSignalled { return }
                logger.info("a client is listening: capture is on")
            }
            let stop = Wakeup()
            captureControl.withLock { $0.stop = stop }
            if !captureWanted || shutdown.isSignalled { stop.signal() }
            source.run(wakeup: stop, onSample: process, onBreak: streamBroke)
            captureControl.withLock { $0.stop = nil }
            // The stream ends with the capture: a shake in progress is interrupted.
            if let event = detector.interrupt() { emit(event) }
        }
    }

    // MARK: - Samples and events

    private func process(_ sample: Sample) {
        if let event = detector.process(sample) { emit(event) }
        let counters = detector.counters
        let wantsSamples = shared.withLock {
            $0.counters = counters
            return $0.sampleStreams > 0
        }
        if wantsSamples { server?.publish(sample: sample) }
    }

    private func emit(_ event: ShakeEvent) {
        sink.emit(event)
        server?.publish(event)
        let shaking = detector.isShaking
        let counters = detector.counters
        shared.withLock {
            $0.shaking = shaking
            $0.counters = counters
        }
    }

    private func streamBroke(_ reason: String) {
        logger.debug("the stream broke", metadata: ["reason": "\(reason)"])
        if case .iio = input { shared.withLock { $0.sensor = .none } }
        if let event = detector.interrupt() { emit(event) }
    }

    /// Runs a synthesized shake through a detector of its own, in real time, and publishes its events marked
    /// `simulated`: like the iOS Simulator's Shake command, without disturbing the real stream.
    private func simulate() {
        let alreadyRunning = shared.withLock { state in
            defer { state.simulating = true }
            return state.simulating
        }
        guard !alreadyRunning else { return }
        let settings = self.settings
        let server = self.server
        let sink = self.sink
        let shared = self.shared
        Thread.detachNewThread {
            var options = SynthesisOptions()
            options.before = 0.8
            options.after = 0.6
            options.duration = 1.2
            options.background = .still
            options.seed = UInt64.random(in: 1...UInt64.max)
            let samples = TraceSynthesizer(options: options).samples()
            var detector = ShakeDetector(settings: settings)
            let start = Date()
            for sample in samples {
                guard let event = detector.process(sample) else { continue }
                let due = start.addingTimeInterval(sample.time)
                let wait = due.timeIntervalSinceNow
                if wait > 0 { Thread.sleep(forTimeInterval: wait) }
                sink.emit(event, simulated: true)
                server?.publish(event, simulated: true)
            }
            shared.withLock { $0.simulating = false }
        }
    }

    // MARK: - Signals

    private func installSignalHandlers() {
        // A parent may hand down blocked signals (a socket activator that execs us does): unblock the ones
        // the daemon must hear, or SIGTERM would never arrive.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for number in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&unblock, number) }
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        signal(SIGPIPE, SIG_IGN)
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            let shutdown = self.shutdown
            let captureControl = self.captureControl
            let logger = self.logger
            source.setEventHandler {
                logger.info("stopping on signal \(number == SIGTERM ? "SIGTERM" : "SIGINT")")
                shutdown.signal()
                captureControl.withLock { control in
                    control.stop?.signal()
                    control.idle?.signal()
                }
            }
            source.resume()
            signalSources.append(source)
        }
    }

    // MARK: - Replay

    /// Plays a trace at its own pace (or `speed` times faster; 0: at once), again and again with `loop`.
    private func replay(path: String, speed: Double, loop: Bool) -> Int32 {
        let samples: [Sample]
        do {
            samples = try TraceFile.read(path: path)
        } catch {
            logger.error("\(error)")
            return 1
        }
        guard let first = samples.first, let last = samples.last else {
            logger.warning("\(path) holds no samples")
            return 0
        }
        let interval = samples.count > 1 ? (last.time - first.time) / Double(samples.count - 1) : 0.01
        let period = last.time - first.time + interval
        shared.withLock { $0.sensor = SensorInfo(source: "replay", name: path, rate: 1 / interval) }
        logger.info(
            "replaying \(path)",
            metadata: [
                "samples": "\(samples.count)", "seconds": "\(JSONObjectWriter.format(period, decimals: 3))",
                "speed": "\(speed == 0 ? "as fast as possible" : "\(speed)x")", "loop": "\(loop)",
            ])
        let start = SensorSource.monotonicSeconds()
        var pass = 0
        repeat {
            let offset = Double(pass) * period
            for sample in samples {
                let time = sample.time + offset
                if speed > 0 {
                    let due = start + (time - first.time) / speed
                    let wait = due - SensorSource.monotonicSeconds()
                    if wait > 0, shutdown.sleep(for: .microseconds(Int64(wait * 1e6))) { return 0 }
                } else if shutdown.isSignalled {
                    return 0
                }
                process(Sample(time: time, acceleration: sample.acceleration))
            }
            pass += 1
        } while loop && !shutdown.isSignalled
        return 0
    }
}
