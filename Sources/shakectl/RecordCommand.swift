// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import ShakeClient
import ShakeDetection
import ShakeTrace
import UnixSignals

#if canImport(Glibc)
    import Glibc
#endif

struct RecordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record the daemon's raw samples as a trace file (root or the admin group).",
        discussion: """
            Writes the trace format (time,x,y,z) that detect, plot and shaked --source replay: read back. \
            Stops after --seconds, or on Ctrl-C with the file complete.

              shakectl record --seconds 30 > trace.csv
            """
    )

    @OptionGroup var connection: ClientOptions

    @Option(help: "Stop after this many seconds (default: until interrupted).")
    var seconds: Double?

    @Option(name: .shortAndLong, help: "Write to this file instead of standard output.")
    var out = "-"

    func validate() throws {
        if let seconds, !(seconds > 0 && seconds.isFinite) { throw ValidationError("--seconds must be positive") }
    }

    func run() async throws {
        let descriptor = out == "-" ? STDOUT_FILENO : open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            StandardStreams.printError("\(out): cannot be written")
            throw ExitCode.failure
        }
        let handle = StandardStreams.Output(descriptor: descriptor)
        // The header goes out with the first sample (or at a clean end without any), so that a refusal leaves
        // nothing behind that looks like a trace.
        let header = "# recorded by shakectl record\n\(TraceParser.header)\n"
        let stop = Task {
            if let seconds {
                try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            } else {
                await Self.interrupted()
            }
        }
        do {
            // Scoped, so that the connection is closed before the command exits.
            let written = try await connection.client.withSamples { samples in
                let recording = Task {
                    var written = 0
                    for try await sample in samples {
                        // The reader went away (a closed pipe): stop quietly.
                        let row = TraceFile.row(sample) + "\n"
                        guard StandardStreams.write(written == 0 ? header + row : row, to: handle) else { break }
                        written += 1
                    }
                    return written
                }
                let watcher = Task {
                    await stop.value
                    recording.cancel()
                }
                defer { watcher.cancel() }
                return try await recording.value
            }
            if written == 0 { _ = StandardStreams.write(header, to: handle) }
            StandardStreams.printError("recorded \(written) samples")
        } catch is CancellationError {
            StandardStreams.printError("recording stopped")
        } catch ClientError.refused(let code, let message) where code == "forbidden" {
            StandardStreams.printError(
                "the daemon refused: \(message). Raw samples are for root and the users and groups that "
                    + "access.samples in the daemon's configuration names (by default the group shaked-admin: "
                    + "usermod -aG shaked-admin USER, then log in again)")
            if out != "-" { unlink(out) }
            throw ExitCode.failure
        } catch {
            StandardStreams.printError("\(error)")
            throw ExitCode.failure
        }
    }

    /// Returns when SIGINT or SIGTERM arrives (as the daemon, through swift-service-lifecycle's signal sequence).
    static func interrupted() async {
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        for await _ in signals { return }
    }
}
