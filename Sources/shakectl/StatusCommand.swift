// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import NumberFormat
import ShakeClient
import ShakeDetection
import ShakeProtocol

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show the daemon's state: sensor, rate, subscribers, counters, uptime.")

    @OptionGroup var connection: ClientOptions

    @Flag(help: "Print the daemon's JSON answer.")
    var json = false

    func run() async throws {
        let status: ServerMessage.Status
        do {
            status = try await connection.client.status()
        } catch {
            StandardStreams.printError("\(error)")
            throw ExitCode.failure
        }
        if json {
            print(ServerMessage.status(status).line)
            return
        }
        let sensor = status.sensor
        let rows: [(String, String)] = [
            ("sensor", sensor.summary),
            ("rate", sensor.rate.map { DecimalText.format($0, decimals: 1) + " Hz" } ?? "unknown"),
            ("subscribers", "\(status.subscribers) (besides this status request)"),
            ("shaking", status.shaking ? "yes" : "no"),
            ("last seq", "\(status.seq)"),
            ("uptime", "\(DecimalText.format(status.uptime, decimals: 0)) s"),
        ]
        // The counters in a block of their own, aligned among themselves however long the longest name; what
        // the daemon says of its sensor (a name from the device) cannot drive the terminal.
        let counters = status.counters.keys.sorted().map { key in
            (key.replacing("_", with: " "), "\(status.counters[key] ?? 0)")
        }
        var lines = Self.aligned(rows, width: 14)
        if !counters.isEmpty {
            lines.append("counters:")
            lines += Self.aligned(counters, width: counters.map { $0.0.count }.max()! + 2).map { "  " + $0 }
        }
        print(StandardStreams.printable(lines.joined(separator: "\n")))
    }

    /// `name: value` lines with every value starting `width` columns in.
    static func aligned(_ rows: [(String, String)], width: Int) -> [String] {
        rows.map { name, value in
            padded(name + ":", to: max(width, name.count + 2)) + value
        }
    }
}

struct SimulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Ask the daemon to run a synthetic shake through its detector (root or the admin group).",
        discussion:
            "Like the iOS Simulator's Shake command: subscribers receive began and ended marked \"simulated\":true.")

    @OptionGroup var connection: ClientOptions

    func run() async throws {
        do {
            try await connection.client.simulate()
            print("simulated shake started")
        } catch {
            StandardStreams.printError("\(error)")
            throw ExitCode.failure
        }
    }
}
