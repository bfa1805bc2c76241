// SPDX-License-Identifier: Apache-2.0
import Foundation

/// A message bus of our own (a real `dbus-daemon`), on a socket in a temporary folder; stopped when released.
/// Its policy allows everything unless told otherwise: what the daemon allows is the daemon's to decide, and the
/// shipped policy file is checked on a bus with the system bus's own policy (``systemPolicy``).
public final class PrivateBus: Sendable {
    public let address: String
    private let process: Process

    /// Whether dbus-daemon and busctl are installed.
    public static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/busctl")
    }

    /// A policy that allows everything.
    public static let allowEverything = """
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
            <allow user="*"/>
          </policy>
        """

    /// The system bus's policy as Debian 12 ships it (`/usr/share/dbus-1/system.conf`): nobody may own a name or
    /// call a method until a service's policy file allows it; signals, replies and the bus's own methods pass;
    /// root may monitor. Then the service files `included` (each a path), as the system bus reads
    /// `system.d/*.conf`.
    public static func systemPolicy(including included: [String]) -> String {
        """
          <policy context="default">
            <allow user="*"/>
            <deny own="*"/>
            <deny send_type="method_call"/>
            <allow send_type="signal"/>
            <allow send_requested_reply="true" send_type="method_return"/>
            <allow send_requested_reply="true" send_type="error"/>
            <allow receive_type="method_call"/>
            <allow receive_type="method_return"/>
            <allow receive_type="error"/>
            <allow receive_type="signal"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
            <deny send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"
                  send_member="UpdateActivationEnvironment"/>
            <deny send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Debug.Stats"/>
          </policy>
          <policy user="root">
            <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Monitoring"/>
          </policy>
        """ + included.map { "\n  <include>\($0)</include>" }.joined()
    }

    /// - Parameter policy: the `<policy>` elements (and `<include>`s) of the bus's configuration.
    public init(policy: String = PrivateBus.allowEverything) throws {
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
        \(policy)
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

    /// Runs busctl on this bus without holding a thread of the pool while it runs.
    public func busctl(_ arguments: [String]) async throws -> Command.Result {
        try await Command.run("/usr/bin/busctl", ["--address=\(address)"] + arguments)
    }

    deinit {
        // dbus-daemon leaves SIGTERM to its session manager: end it outright.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
