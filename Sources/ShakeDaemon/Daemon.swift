import Foundation
import IIOModel
import IIOSensor
public import Logging
import NumberFormat
import ServiceLifecycle
public import ShakeConfig
import ShakeDetection
import ShakeProtocol
public import ShakeServer
import ShakeTrace
import Synchronization
import SystemdSupport
import UnixSignals

/// The running daemon: one source of samples, one detector, the event outputs (the socket server and, with
/// `--print-events`, standard output); stopped by SIGTERM or SIGINT.
///
/// Its long-running parts are services under one `ServiceGroup` (`DaemonServices.swift`); the source runs on
/// the one blocking thread its service owns.
///
/// Capture from a sensor runs only while somebody listens (a subscriber, a sample stream, `--print-events` or
/// `--always-on`); with nobody, the buffer is disabled and the daemon sleeps.
public final class Daemon: Sendable {
    enum Input: Sendable {
        case iio(backend: LibIIOBackend, configuration: SensorSource.Configuration)
        case replay(path: String, speed: Double, loop: Bool)
    }

    /// What the command line sets for this run only.
    public struct RunOptions: Sendable {
        public var printEvents = false
        public var speed = 1.0
        public var loop = false
        /// Where to listen; nil: no socket.
        public var listener: ShakeServer.Listener?

        public init(printEvents: Bool, speed: Double, loop: Bool, listener: ShakeServer.Listener?) {
            self.printEvents = printEvents
            self.speed = speed
            self.loop = loop
            self.listener = listener
        }
    }

    private struct CaptureControl: Sendable {
        var stop: Wakeup?
        var idle: Wakeup?
    }

    /// What the capture thread shares with the server's thread, the bus thread and the reload.
    struct Shared {
        var sensor = SensorInfo.none
        var shaking = false
        var counters = ShakeDetector.Counters()
        /// Whether capture runs, from who listens.
        var gate: CaptureGate
        var simulating = false
        /// The configuration in force (the latest that validated).
        var configuration: ShakedConfiguration
        /// The detector's settings in force, and new ones for the capture thread to take up.
        var settings: DetectorSettings
        var pendingSettings: DetectorSettings?
        var reloads = 0
        var rejectedReloads = 0
        var ready = false
        /// Who may do what (the configuration's accounts resolved), for D-Bus callers.
        var access: AccessPolicy
        /// The D-Bus clients that claim the sensor, by unique name, with the credentials they claimed with.
        var busClaimants: [String: PeerCredentials] = [:]
        /// The property values last announced on the bus.
        var announced = BusProperties()
        /// The sequence number of the last event, for the bus when there is no socket server to number them.
        var lastSeq: UInt64 = 0

        /// The bus object's properties now.
        var busProperties: BusProperties {
            BusProperties(sensor: sensor, shaking: shaking, sensitivity: configuration.detector.sensitivity)
        }
    }

    private let runOptions: RunOptions
    private let sink: EventSink
    let logger: Logger
    private let logLevel: LogLevelControl
    private let input: Input
    /// The configuration the daemon started with: sensor and socket changes need a restart.
    let started: ShakedConfiguration
    private let reload: @Sendable () throws -> ShakedConfiguration
    private let configPath: @Sendable () -> String?
    private let notifier = ServiceNotifier()
    private let shutdown = Wakeup()
    /// Whether systemd was told STOPPING: it is told once, by whichever comes first of a signal, the group's
    /// shutdown and the end of `run`.
    private let stoppingAnnounced = Locked(false)
    /// The exit status the source ends with (a trace that cannot be read: 1).
    private let sourceStatus = Locked<Int32>(0)
    let shared: Locked<Shared>
    /// Stops the capture in progress (when the last listener leaves), and wakes the idle wait (when one comes).
    private let captureControl = Locked<CaptureControl>(CaptureControl())
    private let serverBox = Locked<ShakeServer?>(nil)
    private var server: ShakeServer? { serverBox.withLock { $0 } }
    /// The shake object on the system bus, while there is one.
    private let busBox = Locked<BusObject?>(nil)
    var bus: BusObject? { busBox.withLock { $0 } }
    /// Requests for a simulated shake, for the simulate service.
    private let simulations = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    /// The detector of the live stream, used by the source's thread (and by `run` once that thread has ended):
    /// the lock is never contended, it only makes that sharing checked.
    private let detector: Locked<ShakeDetector>
    /// The relay to iio-sensor-proxy, decided on the source's thread (nil: off, or it failed); its actions go to
    /// the relay service.
    private let relay: Locked<AccelerometerRelay?>
    private let relayActions = AsyncStream.makeStream(of: AccelerometerRelay.Action.self)

    public init(
        configuration: ShakedConfiguration, run: RunOptions, logger: Logger, logLevel: LogLevelControl,
        reload: @escaping @Sendable () throws -> ShakedConfiguration,
        configPath: @escaping @Sendable () -> String?
    ) {
        let settings = configuration.detector.settings()
        detector = Locked(ShakeDetector(settings: settings))
        var relays = false
        if case .iio = configuration.sensor.source {
            relays = IIOSensorProxy.relays(
                configuration.sensor.relay,
                installed: IIOSensorProxy.isInstalled(fileExists: { FileManager.default.fileExists(atPath: $0) }))
        }
        relay = Locked(relays ? AccelerometerRelay() : nil)
        let gate = CaptureGate(
            printEvents: run.printEvents, hasSocket: run.listener != nil, alwaysOn: configuration.sensor.alwaysOn,
            relay: relays, followSession: configuration.sensor.followSession)
        shared = Locked(
            Shared(
                gate: gate, configuration: configuration, settings: settings,
                access: ServerConfiguration(configuration).access))
        sink = EventSink(printEvents: run.printEvents, logger: logger)
        self.runOptions = run
        self.logger = logger
        self.logLevel = logLevel
        self.reload = reload
        self.configPath = configPath
        started = configuration
        let sensor = configuration.sensor
        switch sensor.source {
        case .iio(let uri):
            input = .iio(
                backend: LibIIOBackend(uri: uri),
                configuration: SensorSource.Configuration(
                    request: sensor.device, rate: sensor.rate))
        case .replay(let path):
            input = .replay(path: path, speed: run.speed, loop: run.loop)
            shared.withLock { $0.sensor = SensorInfo(source: "replay", name: path, state: "replaying") }
        }
    }

    /// Runs until SIGTERM or SIGINT (or, for a replay without --loop, the end of the trace): the services under
    /// one group, shut down in reverse order within ``maximumShutdown``. Nothing of the daemon runs after it
    /// returns.
    /// - Returns: the exit status.
    public func run() async -> Int32 {
        prepareSignals()
        // SIGTERM and SIGINT are trapped from here, before the socket exists and READY is sent, so that one that
        // comes before the services run still stops the daemon gracefully.
        let stopSignals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        raiseDescriptorLimit(for: started.clients.maxClients)
        let server = await startServer()
        if runOptions.listener != nil && server == nil { return 1 }
        let sessions = startSessionWatcher()
        let (bus, busFailed) = startBus()
        if busFailed {
            sessions?.close()
            await server?.shutdown()
            return 1
        }
        if let bus {
            busBox.withLock { $0 = bus }
            announceBusProperties()
        }
        let hangUps = await UnixSignalsSequence(trapping: .sighup)
        if case .replay(let path, _, _) = input { ready(status: "replaying \(path)") }
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        if let server { services.append(.init(service: ServerService(server: server))) }
        if let bus { services.append(.init(service: BusService(bus: bus))) }
        if let sessions { services.append(.init(service: SessionService(watcher: sessions))) }
        services += [
            .init(
                service: WatchdogService(notifier: notifier, server: server, logger: logger),
                successTerminationBehavior: .ignore),
            .init(service: ReloadService(hangUps: hangUps, reload: { [self] in await reloadConfiguration() })),
            .init(
                service: SimulateService(requests: simulations.stream, simulate: { [self] in await runSimulation() })),
        ]
        if relay.withLock({ $0 != nil }) {
            // Before the source: shut down after it, so that nothing is relayed once the device is destroyed.
            services.append(
                .init(
                    service: RelayService(
                        actions: relayActions.stream, propertiesPath: RelayService.defaultPropertiesPath,
                        uinputPath: "/dev/uinput", logger: logger, failed: { [self] _ in relayFailed() })))
        }
        services += [
            .init(service: SourceService(daemon: self), successTerminationBehavior: .gracefullyShutdownGroup),
            .init(service: StoppingNoticeService(announce: { [self] in announceStopping() })),
        ]
        var configuration = ServiceGroupConfiguration(services: services, logger: logger)
        configuration.maximumGracefulShutdownDuration = Self.maximumShutdown
        let group = ServiceGroup(configuration: configuration)
        await withDiscardingTaskGroup { tasks in
            tasks.addTask { [self] in
                for await signal in stopSignals {
                    logger.info("stopping on a signal", metadata: ["signal": "\(signal)"])
                    // Now: a signal before the group runs shuts it down before any service starts.
                    announceStopping()
                    await group.triggerGracefulShutdown()
                }
            }
            do {
                try await group.run()
            } catch {
                logger.error("stopped on an error", metadata: ["error": "\(error)"])
            }
            tasks.cancelAll()
        }
        announceStopping()
        simulations.continuation.finish()
        relayActions.continuation.finish()
        let counters = detector.withLock { $0.counters }
        logger.info(
            "stopped",
            metadata: [
                "samples": "\(counters.samples)", "invalid": "\(counters.invalid)",
                "discontinuities": "\(counters.discontinuities)", "began": "\(counters.began)",
                "ended": "\(counters.ended)", "cancelled": "\(counters.cancelled)",
            ])
        return sourceStatus.withLock { $0 }
    }

    /// The longest a graceful shutdown may take before the rest is cancelled: the server gives a client that
    /// does not read one second to take what it is owed.
    static let maximumShutdown = Duration.seconds(5)

    /// The source's thread: capture while somebody listens, or the replay; then a shake in progress is
    /// interrupted, and its event published while the server still runs.
    func runSource() {
        switch input {
        case .iio(let backend, let configuration):
            logger.info(
                "starting",
                metadata: [
                    "source": "\(backend.uri.map { "iio:\($0)" } ?? "iio (local)")",
                    "device": "\(configuration.request)", "rate": "\(DecimalText.format(configuration.rate)) Hz",
                ])
            let source = SensorSource(backend: backend, configuration: configuration, logger: logger)
            // The sensor in use stays in status while capture is off for lack of listeners; it is forgotten
            // only when it breaks (vanishes, fails) — see streamBroke.
            source.sensorChanged = { [self] selection in
                guard let (accelerometer, rate) = selection else { return }
                relayAct { $0.sensorChanged(accelerometer) }
                shared.withLock {
                    $0.sensor = SensorInfo(
                        source: "iio", name: accelerometer.name ?? accelerometer.label, id: accelerometer.id,
                        location: accelerometer.location?.rawValue, rate: rate, state: "capturing")
                }
                announceBusProperties()
                ready(
                    status:
                        "capturing from \(accelerometer.displayName) at \(DecimalText.format(rate)) Hz")
            }
            source.busy = { [self] accelerometer, advice in
                shared.withLock {
                    $0.sensor = SensorInfo(
                        source: "iio", name: accelerometer.name ?? accelerometer.label, id: accelerometer.id,
                        location: accelerometer.location?.rawValue, state: "busy", reason: advice)
                }
                ready(status: advice)
            }
            source.waiting = { [self] reason in
                relayAct { $0.sensorGone() }
                shared.withLock { $0.sensor = SensorInfo(source: "none", state: "waiting", reason: reason) }
                announceBusProperties()
                ready(status: reason)
            }
            captureWhileListened(source)
        case .replay(let path, let speed, let loop):
            let replay = TraceReplay(path: path, speed: speed, loop: loop, logger: logger)
            let status = replay.run(
                shutdown: shutdown,
                started: { [self] rate in
                    shared.withLock {
                        $0.sensor = SensorInfo(source: "replay", name: path, rate: rate, state: "replaying")
                    }
                    announceBusProperties()
                },
                onSample: process)
            sourceStatus.withLock { $0 = status }
        }
        if let event = detector.withLock({ $0.interrupt() }) { emit(event) }
    }

    /// Tells systemd STOPPING, the first time only.
    private func announceStopping() {
        let first = stoppingAnnounced.withLock { announced in
            defer { announced = true }
            return !announced
        }
        guard first else { return }
        logger.info("stopping")
        notifier.stopping(status: "stopping")
    }

    /// Stops the source's thread, wherever it waits.
    func stopSource() {
        shutdown.signal()
        captureControl.withLock { control in
            control.stop?.signal()
            control.idle?.signal()
        }
    }

    // MARK: - The server

    private func startServer() async -> ShakeServer? {
        guard let listener = runOptions.listener else { return nil }
        let shared = self.shared
        let server = ShakeServer(
            configuration: ServerConfiguration(started),
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
                            "config_reloads": state.reloads, "config_reloads_rejected": state.rejectedReloads,
                        ])
                },
                simulate: { [self] in requestSimulation() },
                listenersChanged: { [self] subscribers, streams in listenersChanged(subscribers, streams) }),
            logger: logger)
        do {
            try await server.start(listener)
            serverBox.withLock { $0 = server }
            return server
        } catch {
            logger.critical("cannot listen", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// Raises the soft limit on open descriptors so that the most clients allowed fit (a service starts with
    /// 1,024), as far as the hard limit lets it.
    private func raiseDescriptorLimit(for clients: Int) {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        let wanted = rlim_t(clients + 64)
        guard limit.rlim_cur < wanted else { return }
        let previous = limit.rlim_cur
        limit.rlim_cur = min(wanted, limit.rlim_max)
        if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) != 0 || limit.rlim_cur < wanted {
            logger.warning(
                "the descriptor limit allows fewer clients than clients.max_clients",
                metadata: ["limit": "\(limit.rlim_cur)", "max_clients": "\(clients)"])
        } else {
            logger.debug("raised the descriptor limit", metadata: ["from": "\(previous)", "to": "\(limit.rlim_cur)"])
        }
    }

    // MARK: - Power: capture only while somebody listens

    private var captureWanted: Bool {
        shared.withLock { $0.gate.wantsCapture }
    }

    private func listenersChanged(_ subscribers: [UInt32?], _ streams: Int) {
        perform(shared.withLock { $0.gate.listenersChanged(subscribers: subscribers, sampleStreams: streams) })
    }

    /// Starts or stops capture as the gate decided.
    func perform(_ action: CaptureGate.Action?) {
        captureControl.withLock { control in
            switch action {
            case .startCapture: control.idle?.signal()
            // The capture loop starts again at once, at the rate the gate now wants; once capture has stopped, it
            // says why (not here, where a replay, which the gate does not stop, would log every client that leaves).
            case .stopCapture, .changeRate: control.stop?.signal()
            case nil: break
            }
        }
    }

    private func captureWhileListened(_ source: SensorSource) {
        while !shutdown.isSignalled {
            if !captureWanted {
                let idle = Wakeup()
                captureControl.withLock { $0.idle = idle }
                if captureWanted { idle.signal() }
                // Clients are told which sensor there is and that it is idle; before the first capture, it is
                // looked up without being opened.
                let known = shared.withLock { $0.sensor.source == "iio" }
                let found =
                    known
                    ? nil
                    : source.peek().map {
                        SensorInfo(
                            source: "iio", name: $0.name ?? $0.label, id: $0.id, location: $0.location?.rawValue)
                    }
                shared.withLock { state in
                    if let found { state.sensor = found }
                    if state.sensor.source == "iio" {
                        state.sensor.state = "idle"
                        state.sensor.reason = nil
                    }
                }
                announceBusProperties()
                let why = shared.withLock { $0.gate.reason }
                if why == .sessionsAway {
                    logger.info("the listeners' sessions are locked or inactive: capture is off until one is back")
                } else {
                    logger.info("nobody is listening: capture is off until a client connects")
                }
                ready(status: "capture off: \(why.rawValue)")
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
            let lowRate = shared.withLock { $0.gate.wantsLowRate }
            if lowRate { logger.info("only the relay reads the sensor: capturing at its low rate") }
            source.run(
                wakeup: stop, lowestRate: lowRate ? AccelerometerRelay.minimumRate : nil, onSample: process,
                onBreak: streamBroke)
            captureControl.withLock { $0.stop = nil }
            // The stream ends with the capture: a shake in progress is interrupted.
            if let event = detector.withLock({ $0.interrupt() }) { emit(event) }
        }
    }

    // MARK: - Samples and events

    private func process(_ sample: Sample) {
        let (event, counters) = detector.withLock { detector in (detector.process(sample), detector.counters) }
        if let event { emit(event) }
        let (wantsSamples, newSettings) = shared.withLock { state in
            state.counters = counters
            defer { state.pendingSettings = nil }
            return (state.gate.sampleStreams > 0, state.pendingSettings)
        }
        // New settings from a reload: a shake in progress goes on and is decided under them.
        if let newSettings { detector.withLock { $0.update(settings: newSettings) } }
        if wantsSamples { server?.publish(sample: sample) }
        relayAct { $0.sample(sample) }
    }

    /// Runs a step of the relay (when it is on) and hands its action to the relay service.
    private func relayAct(_ step: (inout AccelerometerRelay) -> AccelerometerRelay.Action?) {
        let action = relay.withLock { relay -> AccelerometerRelay.Action? in
            guard relay != nil else { return nil }
            return step(&relay!)
        }
        if let action { relayActions.continuation.yield(action) }
    }

    /// The relay's device cannot be made: the relay stops, and with it capture for its sake.
    private func relayFailed() {
        relay.withLock { $0 = nil }
        perform(shared.withLock { $0.gate.relayChanged(false) })
    }

    private func emit(_ event: ShakeEvent) {
        let seq = server?.publish(event)
        let (shaking, counters) = detector.withLock { ($0.isShaking, $0.counters) }
        let (sensor, busSeq) = shared.withLock {
            $0.shaking = shaking
            $0.counters = counters
            $0.lastSeq = seq.map { UInt64(clamping: $0) } ?? $0.lastSeq + 1
            return ($0.sensor, $0.lastSeq)
        }
        sink.emit(event, seq: seq, sensor: sensor.id ?? sensor.name)
        if let bus {
            bus.emit(BusObject.Shake(event, seq: busSeq))
            announceBusProperties()
        }
    }

    private func streamBroke(_ reason: String) {
        logger.debug("the stream broke", metadata: ["reason": "\(reason)"])
        if case .iio = input { shared.withLock { $0.sensor = .none } }
        announceBusProperties()
        if let event = detector.withLock({ $0.interrupt() }) { emit(event) }
    }

    /// Asks the simulate service for a shake, unless one is under way.
    private func requestSimulation() {
        let alreadyRunning = shared.withLock { state in
            defer { state.simulating = true }
            return state.simulating
        }
        if !alreadyRunning { simulations.continuation.yield() }
    }

    /// Runs a synthesized shake through a detector of its own, in real time, and publishes its events marked
    /// `simulated`: like the iOS Simulator's Shake command, without disturbing the real stream. A shutdown stops
    /// it between events.
    private func runSimulation() async {
        defer { shared.withLock { $0.simulating = false } }
        let settings = shared.withLock { $0.settings }
        var options = SynthesisOptions()
        options.before = 0.8
        options.after = 0.6
        options.duration = 1.2
        options.background = .still
        options.seed = UInt64.random(in: 1...UInt64.max)
        let samples = TraceSynthesizer(options: options).samples()
        var detector = ShakeDetector(settings: settings)
        let clock = ContinuousClock()
        let start = clock.now
        for sample in samples {
            guard let event = detector.process(sample) else { continue }
            let due = start + .nanoseconds(Int64(sample.time * 1e9))
            if (try? await cancelWhenGracefulShutdown({ try await clock.sleep(until: due) })) == nil { return }
            let seq = server?.publish(event, simulated: true)
            sink.emit(event, seq: seq, simulated: true)
        }
    }

    // MARK: - Signals

    /// A parent may hand down blocked signals (a socket activator that execs us does): unblock the ones the
    /// daemon must hear, or SIGTERM would never arrive. SIGHUP is ignored until the reload service traps it, so
    /// that an early one does not kill the daemon; SIGPIPE always, as sockets report a closed peer themselves.
    private func prepareSignals() {
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for number in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&unblock, number) }
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        signal(SIGPIPE, SIG_IGN)
        signal(SIGHUP, SIG_IGN)
    }
}

// MARK: - systemd: readiness, watchdog, reload

extension Daemon {
    /// Tells systemd the daemon is up (the first time) and what it is doing (every time).
    private func ready(status: String) {
        let first = shared.withLock { state in
            defer { state.ready = true }
            return !state.ready
        }
        if first { notifier.ready(status: status) } else { notifier.status(status) }
    }

    /// SIGHUP: reads the configuration again. A file that does not validate changes nothing; one that does
    /// takes effect at once for the detector (a shake in progress is decided under the new settings), access,
    /// client limits, capture always-on and the log level. Sensor and socket changes need a restart.
    private func reloadConfiguration() async {
        notifier.reloading()
        let path = configPath()
        logger.info("reloading the configuration", metadata: ["file": "\(path ?? "none: built-in defaults")"])
        let new: ShakedConfiguration
        do {
            new = try reload()
        } catch {
            shared.withLock { $0.rejectedReloads += 1 }
            logger.error("configuration rejected; the running settings stay", metadata: ["error": "\(error)"])
            notifier.ready(status: "configuration rejected: \(error)")
            return
        }
        let old = shared.withLock { $0.configuration }
        let server = self.server
        let change = ConfigurationChange(
            from: old, to: new, started: started, oldServer: server.map { _ in ServerConfiguration(old) },
            newServer: server.map { _ in ServerConfiguration(new) })
        if let settings = change.detectorSettings {
            shared.withLock {
                $0.settings = settings
                $0.pendingSettings = settings
            }
        }
        if let server, let configuration = change.server { await server.update(configuration) }
        if let level = change.logLevel { logLevel.level = level }
        shared.withLock {
            $0.configuration = new
            $0.reloads += 1
            $0.access = ServerConfiguration(new).access
        }
        revokeBusClaims()
        announceBusProperties()
        if let alwaysOn = change.alwaysOn { perform(shared.withLock { $0.gate.alwaysOnChanged(alwaysOn) }) }
        if !change.needsRestart.isEmpty {
            logger.warning(
                "changed settings take effect when the daemon restarts",
                metadata: ["keys": "\(change.needsRestart.joined(separator: ", "))"])
        }
        logger.info(
            "configuration reloaded",
            metadata: [
                "changed": "\(change.applied.isEmpty ? "nothing" : change.applied.joined(separator: ", "))",
                "sensitivity": "\(new.detector.sensitivity.rawValue)",
            ])
        notifier.ready(status: "configuration reloaded")
    }
}
