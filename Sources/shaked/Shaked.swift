// SPDX-License-Identifier: Apache-2.0
public import ArgumentParser
import IIOModel
import IIOSensor
import ShakeConfig
import ShakeDaemon
public import ShakeDetection
import ShakeProtocol

/// The daemon's command line. Only option parsing lives here; `Shaked+build.swift` wires the parts.
@main
struct Shaked: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shaked",
        abstract: "Turn an accelerometer's motion into shake gestures (began, ended, cancelled).",
        discussion: """
            Sources:
              iio            the local accelerometer through Linux IIO (libiio's local context). Waits for one \
            if none is present yet, and follows sensors that appear, vanish and return.
              iio:URI        any libiio context URI (iio:ip:192.168.2.1, iio:xml:device.xml).
              replay:FILE    a trace file (CSV time,x,y,z), paced in real time; --speed and --loop change that.

            Accelerometer choice (--device): 'display' (or 'lid') and 'base' pick by location (the kernel's \
            label accel-display/accel-base, or udev's ACCEL_LOCATION); 'iio:deviceN' by id; anything else by \
            name or label. By default the display's accelerometer is preferred, then the only or first one. \
            Samples are scaled to m/s² ((raw + offset) * scale) and turned into the device's frame with the \
            mount matrix (udev's ACCEL_MOUNT_MATRIX, else the kernel's mount_matrix attributes).

            The sensor is read through its IIO buffer (with its own trigger when it has one, timestamps when \
            it offers them), or by polling its _raw attributes when it has no buffer or the buffer stays \
            silent. The rate is --rate, or the nearest rate at or above 50 Hz that the sensor lists.

            Subscribers connect to the Unix socket (--socket) and receive every event as a JSON line, with \
            "seq" and "timestamp" added (protocol v1, docs/protocol.md); shakectl listen is one. When systemd \
            passes a listening socket (socket activation), it is used instead. Capture from a sensor runs only \
            while somebody listens (a subscriber, --print-events, or --always-on).

            --print-events writes each event as one JSON line on standard output (the second is folded here):
              {"event":"shake","phase":"began","time":2.13}
              {"event":"shake","phase":"ended","time":3.62,"began":2.13,"duration":1.49,
               "peak":28.02,"axis":"x","reversals":11}
            Times are seconds on the sensor's clock. The log goes to standard error. A reader that stops \
            reading holds nothing else up: up to 1024 lines wait for it, older ones are dropped, and the log \
            says so once and then how many were not printed.

            Configuration: /etc/shaked/shaked.yaml when it exists, or --config FILE; options given on the \
            command line override the file. Every key is documented in the shipped file. shaked --check-config \
            [FILE] validates a file and exits. SIGHUP reloads the file: detector, access, client limits and log \
            level change at once, without dropping subscribers or the outcome of a shake in progress; a file \
            that does not validate is rejected and the running settings stay.

            Under systemd the daemon reports READY, RELOADING, STOPPING and watchdog pings (Type=notify, \
            WatchdogSec=) and logs to the journal with structured fields (SENSOR, SEQ, PHASE, CLIENT_PID...).

            SIGTERM or SIGINT ends the daemon: a shake in progress is cancelled (interrupted) first, and the \
            exit status is 0. Exit status 64: bad options or configuration; 1: a replayed trace cannot be read \
            or the socket cannot be opened.

            Examples:
              shaked --print-events
              shaked --check-config /etc/shaked/shaked.yaml
              shaked --device display --rate 100 --sensitivity hard
              shaked --source replay:demo/demo-trace.csv --speed 0 --print-events
            """,
        version: ShakedVersion.current
    )

    // Options that the configuration file also sets: nil (not given) leaves the file's value.

    @Option(
        help: "Where samples come from: iio, iio:URI or replay:FILE (default iio).",
        transform: { text throws(ValidationError) in
            guard let source = SourceSpec(parsing: text) else {
                throw ValidationError("--source must be iio, iio:URI or replay:FILE, not '\(text)'")
            }
            return source
        })
    var source: SourceSpec?

    @Option(
        help: "Which accelerometer: display, base, iio:deviceN, or a name or label.",
        transform: { DeviceRequest(parsing: $0) })
    var device: DeviceRequest?

    @Option(help: "Sampling rate to ask the sensor for, Hz (default 100).")
    var rate: Double?

    @Option(help: "Sensitivity preset: light, medium (default) or hard.")
    var sensitivity: DetectorSettings.Sensitivity?

    @Option(
        help: "Log level: trace, debug, info (default), notice, warning, error, critical.",
        transform: { text throws(ValidationError) in
            guard let level = LogLevel(parsing: text) else { throw ValidationError("unknown --log-level '\(text)'") }
            return level
        })
    var logLevel: LogLevel?

    @Option(
        help:
            "The Unix socket for subscribers (default: $SHAKED_SOCKET, else $RUNTIME_DIRECTORY/shaked.sock, else /run/shaked/shaked.sock)."
    )
    var socket: String?

    @Option(help: "The socket file's permissions, octal (default 0666).")
    var socketMode: String?

    @Option(help: "The socket file's group (with --socket-mode 0660, only its members and root can subscribe).")
    var socketGroup: String?

    @Option(help: "Group allowed to stream raw samples and simulate shakes, besides root (default shaked-admin).")
    var adminGroup: String?

    @Flag(help: "Capture from the sensor even while nobody listens.")
    var alwaysOn = false

    // Options of this run only.

    @Option(help: "Configuration file (default \(Shaked.defaultConfigPath), when it exists).")
    var config: String?

    @Flag(help: "Validate the configuration file (FILE, else --config, else the default) and exit.")
    var checkConfig = false

    @Option(
        name: .customLong("udev-handover"),
        help: ArgumentHelp(
            "For udev: print SHAKED_OWNS=1 when shaked, as configured, captures from this IIO device (iio:deviceN) and relays it to iio-sensor-proxy, and exit.",
            valueName: "device"))
    var udevHandover: String?

    @Argument(help: "With --check-config: the file to check.")
    var file: String?

    @Option(help: "Replay only: play N times faster (0: as fast as possible).")
    var speed = 1.0

    @Flag(help: "Replay only: start again at the end of the trace.")
    var loop = false

    @Flag(help: "Write the detector's events as JSON lines on standard output.")
    var printEvents = false

    @Flag(help: "Do not listen on a socket (events only with --print-events).")
    var noSocket = false

    /// Where the installed configuration lives.
    static let defaultConfigPath = "/etc/shaked/shaked.yaml"

    func validate() throws {
        if let rate {
            guard ShakedConfiguration.SensorSection.rates.contains(rate) else {
                throw ValidationError("--rate must be 1...10000 Hz")
            }
        }
        guard speed.isFinite, speed >= 0 else { throw ValidationError("--speed must be 0 or more") }
        if let socketMode, ShakedConfiguration.SocketSection.mode(parsing: socketMode) == nil {
            throw ValidationError("--socket-mode must be an octal mode such as 0660, not '\(socketMode)'")
        }
        if noSocket, socket != nil { throw ValidationError("--socket and --no-socket contradict each other") }
        if let socket, let problem = SocketPath.problem(with: socket) { throw ValidationError("--socket: \(problem)") }
        if let socketGroup, AccountResolver.system.resolve(.group(.name(socketGroup))) == nil {
            throw ValidationError("--socket-group: no group named '\(socketGroup)'")
        }
        if let adminGroup, AccountResolver.system.resolve(.group(.name(adminGroup))) == nil {
            throw ValidationError("--admin-group: no group named '\(adminGroup)'")
        }
        if file != nil, !checkConfig { throw ValidationError("a FILE argument goes with --check-config only") }
    }

    /// Synchronous, so that nothing runs on Swift's default executors before the daemon's tasks are put on event
    /// loops (``LoopExecutor``).
    func run() throws {
        if checkConfig { throw ExitCode(checkConfiguration()) }
        if let udevHandover {
            print(handoverProperties(device: udevHandover), terminator: "")
            return
        }
        let daemon = try build()
        let status = LoopExecutor.run { await daemon.run() }
        if status != 0 { throw ExitCode(status) }
    }
}

extension DetectorSettings.Sensitivity: ExpressibleByArgument {}
