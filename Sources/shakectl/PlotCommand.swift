import ArgumentParser
import Foundation
import ShakeConfig
import ShakeDetection
import ShakeEvaluation
import ShakeTrace

struct PlotCommand: ParsableCommand {
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

            PNG output needs rsvg-convert (Debian package librsvg2-bin).
            """
    )

    @Argument(help: "The trace file.")
    var file: String

    @Option(name: .shortAndLong, help: "Output file, .svg, .png or .csv (default: the trace's name with .svg).")
    var out: String?

    @OptionGroup var detector: DetectorOptions

    @Option(help: "A labelled interval to shade, START:END in seconds (e.g. 2.0:3.5).")
    var label: String?

    func run() throws {
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
        let output = out ?? ((file as NSString).deletingPathExtension + ".svg")
        let isPNG = output.lowercased().hasSuffix(".png")
        let isCSV = output.lowercased().hasSuffix(".csv")
        guard isPNG || isCSV || output.lowercased().hasSuffix(".svg") else {
            StandardStreams.printError("--out must end in .svg, .png or .csv")
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
        if isPNG {
            try writePNG(svg, to: output)
        } else if !FileManager.default.createFile(atPath: output, contents: Data(svg.utf8)) {
            StandardStreams.printError("\(output): cannot be written")
            throw ExitCode.failure
        }
        print(output)
    }

    private func writePNG(_ svg: String, to output: String) throws {
        let converter = ["/usr/bin/rsvg-convert", "/usr/local/bin/rsvg-convert"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        guard let converter else {
            StandardStreams.printError("PNG output needs rsvg-convert: apt-get install librsvg2-bin (or use .svg)")
            throw ExitCode.failure
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: converter)
        process.arguments = ["--format", "png", "--output", output]
        let input = Pipe()
        process.standardInput = input
        try process.run()
        _ = StandardStreams.write(svg, to: input.fileHandleForWriting)
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            StandardStreams.printError("\(output): rsvg-convert failed (status \(process.terminationStatus))")
            throw ExitCode.failure
        }
    }
}
