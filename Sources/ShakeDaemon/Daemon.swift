// SPDX-License-Identifier: Apache-2.0
import IIOSensor
public import Logging
import NumberFormat
import ServiceLifecycle
public import ShakeConfig
import ShakeProtocol
public import ShakeServer
import SystemdSupport
import UnixSignals

#if canImport(Glibc)
    import Glibc
#endif

/// The running daemon: one source of samples, one detector, the event outputs (the socket server, the shake
/// object on D-Bus and, with `--print-events`, standard output); stopped by SIGTERM or SIGINT.
///
/// It builds the parts and runs them as services under one `ServiceGroup`, each in the file named for it: the
/// server (`ServerService`), the bus (`BusService`), logind's sessions (`SessionService`), the watchdog and the
/// STOPPING notice (`SystemdNotices`), the reload (`ReloadService`), simulated shakes (`SimulateService`), the
/// relay to iio-sensor-proxy (`RelayService`) and the source on the one blocking thread its service owns
/// (`SourceService`). What they share: the ``CaptureGate`` behind a `CaptureSwitch` (who listens → capture on or
/// off), the `StatusBoard` (what the daemon reports) and the `EventPath`, which numbers every event and hands it
/// to the consumers listed in `run`.
///
/// Capture from a sensor runs only while somebody listens (a subscriber, a D-Bus claim, a sample stream, the
/// relay, `--print-events` or `--always-on`); with nobody, the buffer is disabled and the daemon sleeps.
public final class Daemon: Sendable {
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

    private let runOptions: RunOptions
    private let logger: Logger
    private let logLevel: LogLevelControl
    /// The configuration the daemon started with: sensor and socket changes need a restart.
    private let started: ShakedConfiguration
    private let reload: @Sendable () throws -> ShakedConfiguration
    private let configPath: @Sendable () -> String?
    private let input: SourceLoop.Input
    /// The local sensor's backend and configuration (no URI given), looked up as the daemon starts.
    private let localSensor: (backend: LibIIOBackend, configuration: SensorSource.Configuration)?
    private let notices: SystemdNotices
    private let status: StatusBoard
    private let capture: CaptureSwitch
    /// The relay to iio-sensor-proxy, when it is on.
    private let relay: RelayLink?
    private let simulations = SimulationRequests()
    /// The key chords subscribers asked for, pressed through the daemon's own virtual keyboard.
    private let keys = KeyPresser()

    public init(
        configuration: ShakedConfiguration, run: RunOptions, logger: Logger, logLevel: LogLevelControl,
        reload: @escaping @Sendable () throws -> ShakedConfiguration,
        configPath: @escaping @Sendable () -> String?
    ) {
        let sensor = configuration.sensor
        var relays = false
        if case .iio = sensor.source {
            relays = IIOSensorProxy.relays(
                sensor.relay, installed: IIOSensorProxy.isInstalled(fileExists: { access($0, F_OK) == 0 }))
        }
        capture = CaptureSwitch(
            gate: CaptureGate(
                printEvents: run.printEvents, hasSocket: run.listener != nil, alwaysOn: sensor.alwaysOn,
                relay: relays, followSession: sensor.followSession))
        relay = relays ? RelayLink(capture: capture, logger: logger) : nil
        switch sensor.source {
        case .iio(let uri):
            let backend = LibIIOBackend(uri: uri)
            let sourceConfiguration = SensorSource.Configuration(
                request: sensor.device, rate: sensor.rate, range: sensor.range)
            // A local sensor is looked up before the socket serves (see `run`).
            if uri == nil { localSensor = (backend, sourceConfiguration) } else { localSensor = nil }
            input = .capture(
                open: { [logger] in SensorSource(backend: backend, configuration: sourceConfiguration, logger: logger)
                },
                describe: [
                    "source": "\(uri.map { "iio:\($0)" } ?? "iio (local)")",
                    "device": "\(sensor.device)", "rate": "\(DecimalText.format(sensor.rate)) Hz",
                ])
            status = StatusBoard(sensitivity: configuration.detector.sensitivity)
        case .replay(let path):
            localSensor = nil
            input = .replay(path: path, speed: run.speed, loop: run.loop)
            status = StatusBoard(
                sensitivity: configuration.detector.sensitivity,
                sensor: .replaying(path: path, rate: nil))
        }
        notices = SystemdNotices(logger: logger)
        runOptions = run
        self.logger = logger
        self.logLevel = logLevel
        self.reload = reload
        self.configPath = configPath
        started = configuration
    }

    /// Runs until SIGTERM or SIGINT (or, for a replay without --loop, the end of the trace): the services under
    /// one group, shut down in reverse order within ``maximumShutdown``. Nothing of the daemon runs after it
    /// returns.
    /// - Returns: the exit status.
    public func run() async -> Int32 {
        let stopSignals = await StopSignals.trap()
        if case .capture = input {
            // Before the socket serves (a socket-activated start has its first client waiting already): a local
            // sensor is looked up without being opened (sysfs only), so that the first answer names it.
            let found = localSensor.flatMap {
                SensorSource(backend: $0.backend, configuration: $0.configuration, logger: logger).peek()
            }
            status.update { $0.sensor = .starting(found) }
        }
        let serverConfiguration = ServerConfiguration(started)
        var server: ShakeServer?
        if let listener = runOptions.listener {
            server = await ServerService.start(
                listener, configuration: serverConfiguration, hooks: serverHooks(), logger: logger)
            if server == nil { return 1 }
        }
        let sessions = SessionFollower.start(capture: capture, keys: server == nil ? nil : keys, logger: logger)
        let bus: ShakeBus?
        switch ShakeBus.start(
            mode: started.dbus.mode, rule: serverConfiguration.access.subscribe, capture: capture, status: status,
            logger: logger)
        {
        case .none: bus = nil
        case .offered(let offered): bus = offered
        case .failed:
            sessions?.close()
            await server?.shutdown()
            return 1
        }
        let hangUps = await UnixSignalsSequence(trapping: .sighup)
        if case .replay(let path, _, _) = input { notices.ready(status: "replaying \(path)") }

        // Every event and every report of the source goes to these, in this order (the status first: the bus
        // announces the properties the event changed). Adding a consumer is one line here.
        let output = runOptions.printEvents ? StandardOutputWriter(logger: logger) : nil
        let sink = EventSink(output: output, logger: logger)
        var consumers: [any EventConsumer] = [status]
        if let server { consumers += [server, keys] as [any EventConsumer] }
        consumers.append(sink)
        if let bus { consumers.append(bus) }
        if let relay { consumers.append(relay) }
        let path = EventPath(consumers: consumers)
        let source = SourceLoop(
            input: input, settings: started.detector.settings(), capture: capture, status: status, path: path,
            notices: notices, relay: relay, logger: logger)
        let reload = ConfigurationReload(
            started: started, read: self.reload, path: configPath,
            parts: .init(
                source: source, server: server, bus: bus, capture: capture, status: status, notices: notices,
                logLevel: logLevel),
            logger: logger)

        // Started in this order, shut down in reverse: the stopping notice, the source (a shake in progress is
        // interrupted and its event published), the relay (nothing is relayed once its device is destroyed),
        // the key chords' keyboard, simulations, reload, watchdog, the session watcher, the bus, standard
        // output's writer and the server last, so that whatever the source ends with still reaches the clients
        // (as signals too).
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        if let server { services.append(.init(service: ServerService(server: server))) }
        if let output {
            services.append(
                .init(
                    service: StandardOutputService(writer: output, logger: logger), successTerminationBehavior: .ignore)
            )
        }
        if let bus { services.append(.init(service: BusService(bus: bus))) }
        if let sessions { services.append(.init(service: SessionService(sessions: sessions))) }
        services += [
            .init(
                service: WatchdogService(notifier: notices.notifier, server: server, logger: logger),
                successTerminationBehavior: .ignore),
            .init(service: ReloadService(hangUps: hangUps, reload: reload)),
            .init(
                service: SimulateService(requests: simulations, settings: { reload.settings }, path: path)),
        ]
        if let server {
            services.append(
                .init(service: KeyService(presser: keys, server: server, uinputPath: "/dev/uinput", logger: logger)))
        }
        if let relay {
            services.append(
                .init(
                    service: RelayService(
                        link: relay, propertiesPath: RelayService.defaultPropertiesPath, uinputPath: "/dev/uinput",
                        logger: logger)))
        }
        services += [
            .init(service: SourceService(source: source), successTerminationBehavior: .gracefullyShutdownGroup),
            .init(service: StoppingNoticeService(notices: notices)),
        ]
        var configuration = ServiceGroupConfiguration(services: services, logger: logger)
        configuration.maximumGracefulShutdownDuration = Self.maximumShutdown
        await stopSignals.run(ServiceGroup(configuration: configuration), notices: notices, logger: logger)

        notices.stopping()
        simulations.finish()
        keys.finish()
        relay?.finish()
        let counters = source.counters
        logger.info(
            "stopped",
            metadata: [
                "samples": "\(counters.samples)", "invalid_samples": "\(counters.invalid)",
                "discontinuities": "\(counters.discontinuities)", "began": "\(counters.began)",
                "ended": "\(counters.ended)", "cancelled": "\(counters.cancelled)",
            ])
        return source.exitCode
    }

    /// The longest a graceful shutdown may take before the rest is cancelled: the server gives a client that
    /// does not read one second to take what it is owed.
    static let maximumShutdown = Duration.seconds(5)

    /// What the server asks of the daemon: its status, a simulated shake, word of who listens, and key chords.
    private func serverHooks() -> ShakeServer.Hooks {
        let (status, simulations, capture, keys) = (self.status, self.simulations, self.capture, self.keys)
        return ShakeServer.Hooks(
            status: {
                var answer = status.serverStatus
                answer.counters.merge(keys.counters) { _, keys in keys }
                return answer
            },
            simulate: { requester in simulations.request(by: requester) },
            listenersChanged: { subscribers, streams in
                capture.update { $0.listenersChanged(subscribers: subscribers, sampleStreams: streams) }
            },
            key: { connection, user, chord, phases in
                keys.subscribe(connection: connection, user: user, chord: chord, phases: phases)
            },
            keyEnded: { connection in keys.ended(connection: connection) })
    }
}
