// SPDX-License-Identifier: Apache-2.0
import IIOModel
import IIOSensor
import Logging
import NumberFormat
import ServiceLifecycle
import ShakeDetection
import ShakeProtocol
import SystemdSupport

/// The source of samples on its one blocking thread: capture from a sensor (libiio blocks) or a replayed trace.
/// The thread is the service's own: started by `run`, stopped on graceful shutdown (or cancellation), and
/// joined before `run` returns.
struct SourceService: Service {
    let source: SourceLoop

    func run() async {
        let source = self.source
        await withTaskCancellationOrGracefulShutdownHandler {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                let started = startThread(name: "shaked-source") {
                    source.run()
                    done.resume()
                }
                // Without a thread of its own (the system out of threads), the source runs here rather than never.
                if !started {
                    source.run()
                    done.resume()
                }
            }
        } onCancelOrGracefulShutdown: {
            source.capture.stopForGood()
        }
    }
}

/// What runs on the source's thread: capture while somebody listens (as the ``CaptureSwitch`` says), or the
/// replay; every sample through the live stream's detector, its events to the ``EventPublisher``, the sensor's
/// state to the ``StatusBoard``, and the relay's steps to its ``RelayLink``.
final class SourceLoop: Sendable {
    enum Input: Sendable {
        case iio(backend: LibIIOBackend, configuration: SensorSource.Configuration)
        case replay(path: String, speed: Double, loop: Bool)
    }

    private let input: Input
    let capture: CaptureSwitch
    private let status: StatusBoard
    private let publisher: EventPublisher
    private let relay: RelayLink?
    private let notices: SystemdNotices
    private let logger: Logger
    /// The detector of the live stream, used by the source's thread, by a reload (new settings: a shake in
    /// progress goes on and is decided under them) and by `run` once that thread has ended.
    private let detector: Locked<ShakeDetector>
    /// The exit status the source ended with (a trace that cannot be read: 1).
    private let exitStatus = Locked<Int32>(0)

    init(
        input: Input, settings: DetectorSettings, capture: CaptureSwitch, status: StatusBoard,
        publisher: EventPublisher, relay: RelayLink?, notices: SystemdNotices, logger: Logger
    ) {
        self.input = input
        detector = Locked(ShakeDetector(settings: settings))
        self.capture = capture
        self.status = status
        self.publisher = publisher
        self.relay = relay
        self.notices = notices
        self.logger = logger
    }

    /// The detector's counters, for the last log line.
    var counters: ShakeDetector.Counters { detector.withLock { $0.counters } }

    /// The exit status: 1 when a replayed trace could not be read.
    var exitCode: Int32 { exitStatus.withLock { $0 } }

    /// A reload's new detector settings.
    func update(settings: DetectorSettings) {
        detector.withLock { $0.update(settings: settings) }
    }

    /// The source's thread: capture while somebody listens, or the replay; then a shake in progress is
    /// interrupted, and its event published while the server still runs.
    func run() {
        switch input {
        case .iio(let backend, let configuration):
            logger.info(
                "starting",
                metadata: [
                    "source": "\(backend.uri.map { "iio:\($0)" } ?? "iio (local)")",
                    "device": "\(configuration.request)", "rate": "\(DecimalText.format(configuration.rate)) Hz",
                ])
            let source = SensorSource(backend: backend, configuration: configuration, logger: logger)
            follow(source)
            captureWhileListened(source)
        case .replay(let path, let speed, let loop):
            let replay = TraceReplay(path: path, speed: speed, loop: loop, logger: logger)
            let status = replay.run(
                shutdown: capture.shutdown,
                started: { [self] rate in
                    self.status.change {
                        $0.sensor = SensorInfo(source: "replay", name: path, rate: rate, state: "replaying")
                    }
                },
                onSample: process)
            exitStatus.withLock { $0 = status }
        }
        interrupt()
    }

    /// The sensor's state, as the source finds it, into the status, the relay and systemd's status line. The
    /// sensor in use stays in status while capture is off for lack of listeners; it is forgotten only when it
    /// breaks (vanishes, fails) — see `streamBroke`.
    private func follow(_ source: SensorSource) {
        source.sensorChanged = { [self] selection in
            guard let (accelerometer, rate) = selection else { return }
            relay?.act { $0.sensorChanged(accelerometer) }
            let line = status.change { $0.sensor.capturing(accelerometer, rate: rate) }
            notices.ready(status: line)
        }
        source.busy = { [self] accelerometer, advice in
            // Not announced on the bus: the sensor it names is the one in use already.
            notices.ready(status: status.update { $0.sensor.busy(accelerometer, advice: advice) })
        }
        source.motionUnderWay = { [self] in detector.withLock { $0.isMotionUnderWay } }
        // Whether the relay is read is looked at while capturing, samples or not (a silent sensor delivers none).
        source.beforeRead = { [self] in relay?.readers.check() }
        source.waiting = { [self] reason in
            relay?.act { $0.sensorGone() }
            notices.ready(status: status.change { $0.sensor.waiting(reason) })
        }
    }

    private func captureWhileListened(_ source: SensorSource) {
        while !capture.shutdown.isSignalled {
            if let idle = capture.idleWakeup() {
                sayIdle(source)
                while !capture.shutdown.isSignalled && !idle.isSignalled {
                    // While only an unread relay keeps it off, an open of the relay's node ends the wait too.
                    if let relay { _ = relay.readers.wait(idle: idle) } else { idle.sleep(for: .seconds(3600)) }
                }
                capture.waitEnded()
                if capture.shutdown.isSignalled { return }
                logger.info("a client is listening: capture is on")
            }
            let (stop, lowRate) = capture.captureBegins()
            if lowRate { logger.info("only the relay reads the sensor: capturing at its low rate") }
            source.run(
                wakeup: stop, lowestRate: lowRate ? AccelerometerRelay.minimumRate : nil, onSample: process,
                onBreak: streamBroke)
            capture.waitEnded()
            // The stream ends with the capture: a shake in progress is interrupted.
            interrupt()
        }
    }

    /// Capture is off: clients are told which sensor there is and that it is idle (before the first capture, it
    /// is looked up without being opened), the log and systemd why.
    private func sayIdle(_ source: SensorSource) {
        // Looked up outside the status's lock: peeking reads the device list.
        let found = status.current.sensor.source == "iio" ? nil : source.peek()
        status.change { $0.sensor.idle(lookUp: { found }) }
        let why = capture.gate.reason
        if why == .sessionsAway {
            logger.info("the listeners' sessions are locked or inactive: capture is off until one is back")
        } else if why == .relayUnread {
            logger.info(
                "nobody listens and nothing reads the relay: capture is off until a client connects or the relay is read"
            )
        } else {
            logger.info("nobody is listening: capture is off until a client connects")
        }
        notices.ready(status: "capture off: \(why.rawValue)")
    }

    private func process(_ sample: Sample) {
        let (event, shaking, counters) = detector.withLock { detector in
            (detector.process(sample), detector.isShaking, detector.counters)
        }
        if let event {
            publisher.publish(event, shaking: shaking, counters: counters)
        } else {
            status.update { $0.counters = counters }
        }
        if capture.sampleStreams > 0 { publisher.publish(sample: sample) }
        relay?.act { $0.sample(sample) }
    }

    private func streamBroke(_ reason: String) {
        logger.debug("the stream broke", metadata: ["reason": "\(reason)"])
        status.change { $0.sensor.streamBroke() }
        interrupt()
    }

    /// A shake in progress is interrupted, and its event published.
    private func interrupt() {
        let (event, shaking, counters) = detector.withLock { ($0.interrupt(), $0.isShaking, $0.counters) }
        if let event { publisher.publish(event, shaking: shaking, counters: counters) }
    }
}
