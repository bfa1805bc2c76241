// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import ShakeClient
import ShakeProtocol

#if canImport(Glibc)
    import Glibc
#endif

struct ListenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "listen",
        abstract: "Print shake events from the daemon as they come.",
        discussion: """
            Readable lines on a terminal, or the daemon's JSON lines with --json. When the daemon restarts, \
            listen reconnects and asks it to replay what was missed, so no event its replay ring still holds is \
            lost or shown twice. Connection changes are reported on standard error.
            """
    )

    @OptionGroup var connection: ClientOptions

    @Flag(help: "Print each event as the daemon's JSON line.")
    var json = false

    @Option(help: "Only these phases, comma-separated: began, ended, cancelled.")
    var phases: PhaseList?

    @Option(help: "Exit after this many events.")
    var count: Int?

    @Option(help: "First replay the daemon's recent events after this seq.")
    var since: Int?

    @Flag(help: "Exit when the connection ends instead of reconnecting.")
    var noReconnect = false

    func run() async throws {
        var seen = 0
        do {
            // Scoped, so that the connection is closed before the command exits.
            try await connection.client.withUpdates(
                phases: phases?.phases ?? [], since: since, reconnect: !noReconnect
            ) { updates in
                for try await update in updates {
                    switch update {
                    case .shake(let notification):
                        let line = json ? ServerMessage.shake(notification).line : notification.readable
                        // The reader went away (a closed pipe): stop quietly.
                        guard StandardStreams.write(line + "\n", to: .standardOutput) else { return }
                        seen += 1
                        if let count, seen >= count { return }
                    case .dropped(let count):
                        StandardStreams.printError("the daemon dropped \(count) events: this listener read too slowly")
                    case .connected(let hello, let complete):
                        let sensor = hello.sensor.summary
                        StandardStreams.printError(
                            "connected (sensor: \(sensor), seq \(hello.seq))"
                                + (complete ? "" : "; some events were lost while away"))
                    case .disconnected:
                        StandardStreams.printError("the daemon went away; reconnecting")
                    case .waiting(let reason):
                        StandardStreams.printError("waiting for the daemon: \(reason)")
                    case .key:
                        break
                    }
                }
            }
        } catch {
            StandardStreams.printError("\(error)")
            throw ExitCode.failure
        }
    }
}
