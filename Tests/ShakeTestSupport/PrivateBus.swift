public import Foundation

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
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "bus-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Reachable by another user too (a test that calls as nobody).
        chmod(directory.path, 0o755)
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
        process.arguments = ["--config-file=\(configuration)", "--nofork", "--nopidfile"]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: socket), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.01)
        }
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
