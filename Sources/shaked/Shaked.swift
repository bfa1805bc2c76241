public import ArgumentParser
import Foundation
import IIOSensor
public import ShakeDetection

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

            --print-events writes each event as one JSON line on standard output:
              {"event":"shake","phase":"began","time":2.13}
              {"event":"shake","phase":"ended","time":3.62,"began":2.13,"duration":1.49,"peak":28.02,"axis":"x","reversals":11}
            Times are seconds on the sensor's clock. The log goes to standard error.

            SIGTERM or SIGINT ends the daemon: a shake in progress is cancelled (interrupted) first, and the \
            exit status is 0. Exit status 64: bad options or configuration; 1: a replayed trace cannot be read.

            Examples:
              shaked --print-events
              shaked --device display --rate 100 --sensitivity hard
              shaked --source replay:demo/demo-trace.csv --speed 0 --print-events
            """
    )

    @Option(help: "Where samples come from: iio, iio:URI or replay:FILE.")
    var source = "iio"

    @Option(help: "Which accelerometer: display, base, iio:deviceN, or a name or label.")
    var device: String?

    @Option(help: "Sampling rate to ask the sensor for, Hz.")
    var rate = 100.0

    @Option(help: "Replay only: play N times faster (0: as fast as possible).")
    var speed = 1.0

    @Flag(help: "Replay only: start again at the end of the trace.")
    var loop = false

    @Flag(help: "Write the detector's events as JSON lines on standard output.")
    var printEvents = false

    @Option(help: "Sensitivity preset: light, medium (default) or hard.")
    var sensitivity: DetectorSettings.Sensitivity?

    @Option(help: "Configuration file whose 'detector' section adjusts the settings.")
    var config: String?

    @Option(help: "Log level: trace, debug, info (default), notice, warning, error, critical.")
    var logLevel = "info"

    @Option(
        help:
            "The Unix socket for subscribers (default: $SHAKED_SOCKET, else $RUNTIME_DIRECTORY/shaked.sock, else /run/shaked/shaked.sock)."
    )
    var socket: String?

    @Flag(help: "Do not listen on a socket (events only with --print-events).")
    var noSocket = false

    @Option(help: "The socket file's permissions, octal.")
    var socketMode = "0666"

    @Option(help: "The socket file's group (with --socket-mode 0660, only its members and root can subscribe).")
    var socketGroup: String?

    @Option(help: "Group allowed to stream raw samples and simulate shakes (besides root).")
    var adminGroup = "shaked-admin"

    @Flag(help: "Capture from the sensor even while nobody listens.")
    var alwaysOn = false

    func validate() throws {
        guard rate.isFinite, rate >= 1, rate <= 10_000 else { throw ValidationError("--rate must be 1...10000 Hz") }
        guard speed.isFinite, speed >= 0 else { throw ValidationError("--speed must be 0 or more") }
        guard SourceSpec(parsing: source) != nil else {
            throw ValidationError("--source must be iio, iio:URI or replay:FILE, not '\(source)'")
        }
        guard LogLevelName.parse(logLevel) != nil else { throw ValidationError("unknown --log-level '\(logLevel)'") }
        guard let mode = UInt32(socketMode, radix: 8), mode <= 0o777 else {
            throw ValidationError("--socket-mode must be an octal mode such as 0660, not '\(socketMode)'")
        }
        _ = mode
        if noSocket, socket != nil { throw ValidationError("--socket and --no-socket contradict each other") }
        if let socketGroup, getgrnam(socketGroup) == nil {
            throw ValidationError("--socket-group: no group named '\(socketGroup)'")
        }
    }

    func run() throws {
        let status = try build().run()
        if status != 0 { throw ExitCode(status) }
    }
}

extension DetectorSettings.Sensitivity: ExpressibleByArgument {}
