// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import ShakeProtocol

/// The command (its entry point is ``ShakectlMain``).
struct Shakectl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shakectl",
        abstract:
            "Talk to shaked (listen, exec, status, simulate, record) and work with traces (detect, synth, eval, plot).",
        discussion: """
            A trace is a CSV file with the header 'time,x,y,z': seconds, and acceleration in m/s² on the \
            device's axes with gravity included. Lines starting with '#' are comments.
            """,
        version: ShakedVersion.current,
        subcommands: [
            ListenCommand.self, ExecCommand.self, KeyCommand.self, StatusCommand.self, SimulateCommand.self,
            RecordCommand.self, DetectCommand.self, SynthCommand.self, EvalCommand.self, PlotCommand.self,
            SimulateDeviceCommand.self,
        ]
    )
}
