// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import NumberFormat
import ShakeClient
import ShakeDetection
import ShakeProtocol

/// Options shared by the commands that talk to the daemon.
struct ClientOptions: ParsableArguments {
    @Option(help: "The daemon's socket (default: $SHAKED_SOCKET, else /run/shaked/shaked.sock).")
    var socket: String?

    var client: ShakeClient { ShakeClient(socketPath: socket) }
}

/// Phase lists on the command line: `ended` or `began,ended`.
struct PhaseList: ExpressibleByArgument {
    var phases: Set<ShakeEvent.Phase>

    init?(argument: String) {
        var phases = Set<ShakeEvent.Phase>()
        for name in argument.split(separator: ",") {
            guard let phase = ShakeEvent.Phase(rawValue: String(name)) else { return nil }
            phases.insert(phase)
        }
        guard !phases.isEmpty else { return nil }
        self.phases = phases
    }

    static var allValueStrings: [String] { ShakeEvent.Phase.allCases.map(\.rawValue) }

    /// As it is written on the command line (`ended`, `began,ended`), for --help's default.
    var defaultValueDescription: String {
        ShakeEvent.Phase.allCases.filter(phases.contains).map(\.rawValue).joined(separator: ",")
    }
}

extension ServerMessage.Notification {
    /// One readable line: `2026-11-22T03:04:05.123Z  #7 ended      1.41 s, peak 28.6 m/s² along x, 10 reversals`.
    var readable: String {
        let marker = simulated ? " (simulated)" : ""
        let phase = padded(event.phase.rawValue, to: 9)
        let detail: String
        switch event {
        case .began:
            detail = "shaking"
        case .ended(let summary):
            detail =
                "\(DecimalText.format(summary.duration, decimals: 2)) s, peak \(DecimalText.format(summary.peak, decimals: 1)) m/s² along \(summary.axis.rawValue), \(summary.reversals) reversals"
        case .cancelled(_, _, let reason, let rejection):
            detail =
                reason.rawValue.replacing("_", with: " ")
                + (rejection.map { " (\($0.rawValue.replacing("_", with: " ")))" } ?? "")
        }
        return "\(timestamp)  #\(seq) \(phase) \(detail)\(marker)"
    }
}
