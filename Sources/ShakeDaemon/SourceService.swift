// SPDX-License-Identifier: Apache-2.0
import BlockingWork
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
            // Never on the cooperative pool instead: libiio's calls block, and the pool has a thread per core.
            guard let thread = BlockingThread.start(name: "shaked-source", source.run) else {
                source.cannotStart()
                return
            }
            await thread.join()
        } onCancelOrGracefulShutdown: {
            source.capture.stopForGood()
        }
    }
}

/// What runs on the source's thread: capture while somebody listens (as the ``CaptureSwitch`` says), or the
/// replay; the source's reports handled in one place (``handle(_:)``): every sample through the live stream's
/// detector, the sensor's state to the ``StatusBoard`` and systemd, and events, samples and reports out through
/// the ``EventPath``.
final class SourceLoop: Sendable {
    enum Input: Sendable {
        /// Capture from a sensor: `open` makes the capture loop (a `SensorSource`; a stand-in in tests) on the
        /// source's thread; `describe` is what the log says it starts (the URI, the device and rate asked for).
        case capture(open: @Sendable () -> any SensorCapture, describe: Logger.Metadata)
        case replay(path: String, speed: Double, loop: Bool)
    }

    private let input: Input
    let capture: CaptureSwitch
    private let status: StatusBoard
    private let path: EventPath
    private let notices: SystemdNotices
    /// The relay's link (with `sensor.relay`): whether its evdev node is read decides capture while only it
    /// would read.
    private let relay: RelayLink?
    private let logger: Logger
    /// The detector of the live stream, used by the source's thread, by a reload (new settings: a shake in
    /// progress goes on and is decided under them) and by `run` once that thread has ended.
    private let detector: Locked<ShakeDetector>
    /// The exit status the source ended with (a trace that cannot be read: 1).
    private let exitStatus = Locked<Int32>(0)

    init(
        input: Input, settings: DetectorSettings, capture: CaptureSwitch, status: StatusBoard, path: EventPath,
        notices: SystemdNotices, relay: RelayLink? = nil, logger: Logger
    ) {
        self.relay = relay
        self.input = input
        detector = Locked(ShakeDetector(settings: settings))
        self.capture = capture
        self.status = status
        self.path = path
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

    /// The system gave the source no thread (out of threads or memory): said, and the daemon ends with status 1.
    func cannotStart() {
        logger.error("the source's thread could not be started: the daemon stops")
        exitStatus.withLock { $0 = 1 }
    }

    /// The source's thread: capture while somebody listens, or the replay; then a shake in progress is
    /// interrupted, and its event published while the server still runs.
    func run() {
        switch input {
        case .capture(let open, let describe):
            logger.info("starting", metadata: describe)
            captureWhileListened(open())
        case .replay(let path, let speed, let loop):
            let replay = TraceReplay(path: path, speed: speed, loop: loop, logger: logger)
            let status = replay.run(
                shutdown: capture.shutdown,
                started: { [self] rate in
                    self.status.change { $0.sensor = .replaying(path: path, rate: rate) }
                },
                onSample: { [self] in handle(.sample($0)) })
            exitStatus.withLock { $0 = status }
        }
        interrupt()
    }

    /// What the source reported: a sample goes through the detector; the sensor's state goes into the status,
    /// and systemd's status line. The sensor in use stays in status while capture is off for lack of listeners;
    /// it is forgotten only when it breaks (vanishes, fails). Then the report goes out to the consumers (the
    /// relay follows the sensor, the sample streams get the sample).
    private func handle(_ report: SourceEvent) {
        switch report {
        case .sample(let sample):
            process(sample)
        case .capturing(let accelerometer, let rate):
            notices.ready(status: status.change { $0.sensor.capturing(accelerometer, rate: rate) })
        case .busy(let accelerometer, let advice):
            // Not announced on the bus: the sensor it names is the one in use already.
            notices.ready(status: status.update { $0.sensor.busy(accelerometer, advice: advice) })
        case .waiting(let reason):
            notices.ready(status: status.change { $0.sensor.waiting(reason) })
        case .broke(let reason, let sensorKept):
            logger.debug("the stream broke", metadata: ["reason": "\(reason)"])
            // A break within a capture that goes on (a sleep, a leap of the timestamps) keeps the sensor: status,
            // hello and the bus's HasAccelerometer and Sensor still name it.
            if !sensorKept { status.change { $0.sensor.streamBroke() } }
            interrupt()
        case .stopped:
            break
        }
        path.report(report)
    }

    private func captureWhileListened(_ source: any SensorCapture) {
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
            // Reads come in short steps while the detector follows a motion (ReadPacing), and while only the relay
            // reads, just before iio-sensor-proxy's polls (the opens of its node, `relayTiming`).
            source.run(
                wakeup: stop, lowestRate: lowRate ? AccelerometerRelay.minimumRate : nil,
                motionUnderWay: { detector.withLock { $0.isMotionUnderWay } },
                beforeRead: {
                    // Whether the relay is read is looked at before every wait for samples, samples or not (a
                    // silent sensor delivers none), and the relay's newest reading of the last read handed over.
                    relay?.readers.check()
                    relay?.flush()
                }, relayTiming: relay?.readers, report: handle)
            capture.waitEnded()
            // The stream ends with the capture: a shake in progress is interrupted.
            interrupt()
        }
    }

    /// Capture is off: clients are told which sensor there is and that it is idle (before the first capture, it
    /// is looked up without being opened), the log and systemd why.
    private func sayIdle(_ source: any SensorCapture) {
        // Looked up outside the status's lock: peeking reads the device list.
        let found = status.current.sensor.accelerometer == nil ? source.peek() : nil
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
            publish(event, shaking: shaking, counters: counters)
        } else {
            status.update { $0.counters = counters }
        }
    }

    /// A shake in progress is interrupted, and its event published.
    private func interrupt() {
        let (event, shaking, counters) = detector.withLock { ($0.interrupt(), $0.isShaking, $0.counters) }
        if let event { publish(event, shaking: shaking, counters: counters) }
    }

    /// An event of the live stream, with the detector's state after it and the sensor it came from.
    private func publish(_ event: ShakeEvent, shaking: Bool, counters: ShakeDetector.Counters) {
        let sensor = status.current.sensor.logName
        path.publish(event, origin: .live(.init(shaking: shaking, counters: counters, sensor: sensor)))
    }
}

/// What the source's thread captures from: `SensorSource` (libiio), or a stand-in in tests.
protocol SensorCapture {
    /// The accelerometer capture would use now, found without opening it.
    func peek() -> Accelerometer?
    /// Captures until `wakeup` is signalled, reporting samples and the sensor's state in order. As it goes it asks
    /// `motionUnderWay` whether the detector follows a motion (before each read of a buffer), and calls
    /// `beforeRead` before each wait for samples, and times the relay's reads by `relayTiming`.
    func run(
        wakeup: Wakeup, lowestRate: Double?, motionUnderWay: () -> Bool, beforeRead: () -> Void,
        relayTiming: (any RelayReadTiming)?, report: (SourceEvent) -> Void)
}

extension SensorSource: SensorCapture {}
