import ArgumentParser

@main
struct Shakectl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shakectl",
        abstract: "Work with shake gestures: detect them in traces, synthesize traces, and (later) talk to shaked.",
        discussion: """
            A trace is a CSV file with the header 'time,x,y,z': seconds, and acceleration in m/s² on the \
            device's axes with gravity included. Lines starting with '#' are comments.
            """,
        subcommands: [DetectCommand.self, SynthCommand.self, EvalCommand.self, PlotCommand.self, SimulateDeviceCommand.self]
    )
}
