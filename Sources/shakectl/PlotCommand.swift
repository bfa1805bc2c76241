// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import ShakeConfig
import ShakeDetection
import ShakeEvaluation
import ShakeTrace
import Subprocess
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

struct PlotCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plot",
        abstract:
            "Draw a trace as the detector sees it, with its events marked (SVG or PNG), or write its signals (CSV).",
        discussion: """
            Upper panel: the gravity-free acceleration magnitude (a wide grey band) and the part that counts \
            towards strokes (blue), against the threshold (dashed purple) and half of it (dotted). Reversals \
            are marked on the stroke: filled circle, counted (the next stroke swung back); hollow, waiting for \
            that; brown cross, rejected, with the test that failed. Lower panel: the gravity-free x, y and z. \
            Green line: began; blue: ended (the shake shaded blue); orange: cancelled, with its reason and \
            detail. --label shades the labelled interval (yellow).

            With --out FILE.csv, the detector's signals instead, one row a sample: \
            time,linear_x,linear_y,linear_z,linear,stroke,threshold,reversal,event.

            Without --out, the plot of a file goes beside it (NAME.svg); the plot of standard input ('-') or a \
            pipe goes to standard output as SVG, as it does with --out -. PNG output needs rsvg-convert on PATH \
            (Debian package librsvg2-bin).
            """
    )

    @Argument(help: "The trace file; '-' reads standard input.")
    var file: String

    @Option(
        name: .shortAndLong,
        help:
            "Output file, .svg, .png or .csv, or - for SVG on standard output (default: the trace's name with .svg).")
    var out: String?

    @OptionGroup var detector: DetectorOptions

    @Option(help: "A labelled interval to shade, START:END in seconds (e.g. 2.0:3.5).")
    var label: String?

    func run() async throws {
        let (settings, name) = try detector.resolve()
        var interval: (start: Double, end: Double)?
        if let label {
            let parts = label.split(separator: ":").compactMap { Double($0) }
            guard parts.count == 2, parts[0] <= parts[1] else {
                StandardStreams.printError("--label takes START:END in seconds, e.g. 2.0:3.5")
                throw ExitCode(64)
            }
            interval = (parts[0], parts[1])
        }
        let output = out ?? Self.defaultOutput(for: file)
        let toStandardOutput = output == "-"
        let isPNG = output.lowercased().hasSuffix(".png")
        let isCSV = output.lowercased().hasSuffix(".csv")
        guard toStandardOutput || isPNG || isCSV || output.lowercased().hasSuffix(".svg") else {
            StandardStreams.printError("--out must end in .svg, .png or .csv, or be - for standard output")
            throw ExitCode(64)
        }
        let samples: [Sample]
        do {
            samples = try TraceFile.read(path: file)
        } catch {
            StandardStreams.printError("\(error)")
            throw ExitCode.failure
        }
        let plot = TracePlot(title: "\(file) (\(name))", settings: settings, label: interval)
        if isCSV {
            guard FileManager.default.createFile(atPath: output, contents: Data(plot.csv(samples).utf8)) else {
                StandardStreams.printError("\(output): cannot be written")
                throw ExitCode.failure
            }
            print(output)
            return
        }
        let svg = plot.svg(samples)
        if toStandardOutput {
            _ = StandardStreams.write(svg, to: .standardOutput)
            return
        }
        if isPNG {
            try await writePNG(svg, to: output)
        } else if !FileManager.default.createFile(atPath: output, contents: Data(svg.utf8)) {
            StandardStreams.printError("\(output): cannot be written")
            throw ExitCode.failure
        }
        print(output)
    }

    /// Beside a regular file, NAME.svg; standard output for standard input and pipes, which have no name to
    /// put a file beside.
    static func defaultOutput(for file: String) -> String {
        var status = stat()
        guard file != "-", stat(file, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return "-" }
        // Without the extension of its last component (`a.b/c.csv` -> `a.b/c`; `.hidden` keeps its name).
        let name = file.lastIndex(of: "/").map { file.index(after: $0) } ?? file.startIndex
        if let dot = file[name...].lastIndex(of: "."), dot > name { return String(file[..<dot]) + ".svg" }
        return file + ".svg"
    }

    /// The first executable `name` in the directories of PATH.
    static func onPath(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    private func writePNG(_ svg: String, to output: String) async throws {
        guard let converter = Self.onPath("rsvg-convert") else {
            StandardStreams.printError(
                "PNG output needs rsvg-convert on PATH: apt-get install librsvg2-bin (or use .svg)")
            throw ExitCode.failure
        }
        let status: TerminationStatus
        do {
            status = try await Subprocess.run(
                .path(FilePath(converter)), arguments: ["--format", "png", "--output", output],
                input: .array(Array(svg.utf8)), output: .currentStandardOutput, error: .currentStandardError
            ).terminationStatus
        } catch {
            StandardStreams.printError("\(output): cannot run rsvg-convert: \(error)")
            throw ExitCode.failure
        }
        guard status == .exited(0) else {
            StandardStreams.printError("\(output): rsvg-convert failed (\(status))")
            throw ExitCode.failure
        }
    }
}
