// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import ShakeConfig
import ShakeDetection
import ShakeProtocol
import ShakeTrace

#if canImport(Glibc)
    import Glibc
#endif

struct DetectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "detect",
        abstract: "Run the shake detector over trace files and print its events as JSON lines.",
        discussion: """
            Each file is run through a fresh detector, as if it were a separate recording. Every event is one \
            JSON object on one line, with "source" set to the path as given; the end of a file counts as the \
            sensor going away, so a shake still in progress there is cancelled with reason "interrupted".

            Exit status: 0 when every file was read, 1 when a file could not be read or is malformed (the \
            other files are still processed), 64 for bad options or configuration.
            """
    )

    @OptionGroup var detector: DetectorOptions

    @Argument(help: "Trace files (CSV time,x,y,z). '-' reads standard input.")
    var files: [String]

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("Name at least one trace file.") }
    }

    func run() throws {
        let settings = try detector.resolve().settings
        var failed = false
        for file in files {
            do {
                // Streamed: events are printed as they happen, and an endless input costs bounded memory.
                var detector = ShakeDetector(settings: settings)
                func emit(_ event: ShakeEvent) {
                    var writer = JSONObjectWriter()
                    event.write(to: &writer)
                    writer.add("source", file)
                    // Unbuffered, so that `record | detect -` shows each event when it happens.
                    _ = StandardStreams.write(writer.result + "\n", to: .standardOutput)
                }
                try TraceFile.forEachSample(path: file) { sample in
                    if let event = detector.process(sample) { emit(event) }
                }
                if let event = detector.interrupt() { emit(event) }
                let counters = detector.counters
                if counters.invalid > 0 {
                    StandardStreams.printError(
                        "\(file): note: dropped \(counters.invalid) invalid samples (not a number, or beyond ±10,000 m/s²)"
                    )
                }
                if counters.discontinuities > 0 {
                    StandardStreams.printError(
                        "\(file): note: the stream broke \(counters.discontinuities) times "
                            + "(a gap longer than max_gap, or time going backwards)")
                }
            } catch {
                StandardStreams.printError("\(error)")
                failed = true
            }
        }
        if failed { throw ExitCode.failure }
    }
}
