import Foundation

/// A message bus of our own (a real `dbus-daemon`), on a socket in a temporary folder; stopped when released.
/// Its policy allows everything: what the daemon allows is the daemon's to decide, and the shipped policy file
/// is checked apart.
public final class PrivateBus: Sendable {
    public let address: String
    private let process: Process

    /// Whether dbus-daemon and busctl are installed.
    public static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/busctl")
    }

    public init() throws {
        // Reachable by another user too (a test that calls as nobody).
        let directory = URL(fileURLWithPath: try Scratch.directory("bus"))
        let socket = directory.appendingPathComponent("bus").path
        let configuration = directory.appendingPathComponent("bus.conf").path
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:path=\(socket)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
            <allow user="*"/>
          </policy>
        </busconfig>
        """.write(toFile: configuration, atomically: true, encoding: .utf8)
        address = "unix:path=\(socket)"
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        // dbus-daemon prints its address once it accepts connections; the socket file appears earlier, at bind,
        // and a connection between the two is refused.
        process.arguments = ["--config-file=\(configuration)", "--nofork", "--nopidfile", "--print-address"]
        let printed = Pipe()
        process.standardOutput = printed
        try process.run()
        var output = Data()
        while !output.contains(UInt8(ascii: "\n")) {
            let more = printed.fileHandleForReading.availableData
            if more.isEmpty { break }  // It ended without listening.
            output.append(more)
        }
        guard output.contains(UInt8(ascii: "\n")) else {
            process.waitUntilExit()
            throw StartFailure(status: process.terminationStatus)
        }
    }

    /// dbus-daemon ended before it listened.
    public struct StartFailure: Error, CustomStringConvertible {
        public let status: Int32
        public var description: String { "dbus-daemon ended before it listened (status \(status))" }
    }

    /// Runs busctl on this bus.
    public func busctl(_ arguments: [String]) throws -> Command.Result {
        try Command.run("/usr/bin/busctl", ["--address=\(address)"] + arguments)
    }

    deinit {
        // dbus-daemon leaves SIGTERM to its session manager: end it outright.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
