// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeTestSupport
import Testing

/// shakectl's trace tools on input a person might hand them by mistake or on purpose: pipes and FIFOs, endless
/// or binary input, times that are not numbers or lie absurdly far apart, and text made to drive a terminal.
struct OddTraceTests {
    /// Process substitution hands detect a /dev/fd path, which is a pipe.
    @Test func detectReadsAPipeNamedLikeAFile() throws {
        let shake = Fixtures.path("shake-horizontal-100hz.csv")
        let result = try Command.run(
            "/bin/bash", ["-c", "\"$0\" detect <(cat \"$1\")", Command.productsDirectory.path + "/shakectl", shake])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(#""phase":"ended""#))
        #expect(result.stdout.contains(#""source":"/dev/fd/"#))
    }

    @Test func detectStopsAtInputThatIsNotATrace() throws {
        let result = try Command.run(
            "/bin/sh", ["-c", "exec \"$0\" detect - < /dev/zero", Command.productsDirectory.path + "/shakectl"])
        #expect(result.status == 1)
        #expect(result.stderr == "shakectl: -:1: longer than 4096 bytes: not a trace (CSV time,x,y,z)\n")
    }

    @Test func controlCharactersInFilesAndNamesAreEscaped() throws {
        let colour = try temporaryFile("colour.csv", "time,x,y,z\n0,\u{1B}[31mred,0,0\n")
        let result = try Command.run("shakectl", ["detect", colour, "/tmp/\u{1B}]0;title\u{07}"])
        #expect(result.status == 1)
        #expect(!result.stderr.contains("\u{1B}") && !result.stderr.contains("\u{07}"))
        #expect(result.stderr.contains(#"x is not a number: '\u{1B}[31mred'"#))
        #expect(result.stderr.contains(#"/tmp/\u{1B}]0;title\u{7}: no such file"#))
    }

    @Test func simulateDeviceRefusesTimesItCannotPlay() throws {
        let trace = try temporaryFile("inf.csv", "time,x,y,z\n0,0,0,9.8\ninf,0,0,9.8\n")
        let out = try Scratch.directory("odd-sim") + "/out"
        let result = try Command.run("shakectl", ["simulate-device", trace, "--out", out])
        #expect(result.status == 1)
        #expect(result.stderr.contains("a sample at time inf cannot be played: times must be finite"))
    }

    /// Resampling to 10 kHz across a gap of 1e13 s would ask for 1e17 samples; the gap stays a gap.
    @Test func evalResamplesAcrossAHugeGapInBoundedTime() throws {
        let directory = URL(fileURLWithPath: try Scratch.directory("odd-corpus"))
        try "time,x,y,z\n0,0,0,9.8\n0.01,0,0,9.8\n1e13,0,0,9.8\n1e13,1,0,9.8\n".write(
            to: directory.appendingPathComponent("gap.csv"), atomically: true, encoding: .utf8)
        try "file,dataset,kind,activity,label_start,label_end,rate\ngap.csv,odd,adl,still,,,100\n".write(
            to: directory.appendingPathComponent("manifest.csv"), atomically: true, encoding: .utf8)
        let result = try Command.run("shakectl", ["eval", "--resample", "10000", "--json", directory.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("\"corpus\":") && result.stdout.contains("\"false_shakes\":0"))
    }
}

/// plot on spans a double can barely hold: each is drawn, in bounded time, with no coordinate that is not a number.
struct PlotSpanTests {
    @Test(arguments: [
        "time,x,y,z\n1e300,0,0,9.8\n1e300,1,0,9.8\n",
        "time,x,y,z\n-1e308,0,0,9.8\n1e308,1,0,9.8\n",
        "time,x,y,z\n1e300,0,0,9.8\n1e308,1,0,9.8\n",
        "time,x,y,z\n0,0,0,9.8\n",
    ])
    func anAbsurdSpanIsStillDrawn(trace: String) throws {
        let result = try Command.run("shakectl", ["plot", "-"], input: trace)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("<svg ") && result.stdout.hasSuffix("</svg>\n"))
        #expect(!result.stdout.contains("nan") && !result.stdout.contains("NaN") && !result.stdout.contains("inf"))
    }
}

/// Where plot writes when the trace has no file name of its own, and where it finds its PNG converter.
struct PlotOutputTests {
    @Test func standardInputIsPlottedToStandardOutput() throws {
        let directory = URL(fileURLWithPath: try Scratch.directory("plot-stdin"))
        let trace = try String(contentsOfFile: Fixtures.path("shake-horizontal-100hz.csv"), encoding: .utf8)
        let shakectl = Command.productsDirectory.path + "/shakectl"
        let result = try Command.run(
            "/bin/sh", ["-c", "cd \"$1\" && exec \"$0\" plot -", shakectl, directory.path], input: trace)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("<svg "))
        #expect(result.stdout.contains("ended"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty, "a file was written")
        let piped = try Command.run(
            "/bin/bash", ["-c", "\"$0\" plot <(cat \"$1\")", shakectl, Fixtures.path("shake-horizontal-100hz.csv")])
        #expect(piped.status == 0 && piped.stdout.hasPrefix("<svg "), "\(piped.stderr)")
    }

    /// rsvg-convert is whichever PATH names first: here a stand-in that records how it was called.
    @Test func thePNGConverterIsFoundOnThePath() throws {
        let directory = URL(fileURLWithPath: try Scratch.directory("plot-path"))
        let converter = directory.appendingPathComponent("rsvg-convert").path
        try "#!/bin/sh\necho \"$@\" > \"$(dirname \"$0\")/called\"\ncat > \"$4\"\n".write(
            toFile: converter, atomically: true, encoding: .utf8)
        chmod(converter, 0o755)
        let output = directory.appendingPathComponent("plot.png").path
        let result = try Command.run(
            "shakectl", ["plot", Fixtures.path("tap.csv"), "--out", output],
            environment: ["PATH": "\(directory.path):/usr/bin:/bin"])
        #expect(result.status == 0, "\(result.stderr)")
        let called = try String(contentsOfFile: directory.appendingPathComponent("called").path, encoding: .utf8)
        #expect(called == "--format png --output \(output)\n")
        let missing = try Command.run(
            "shakectl", ["plot", Fixtures.path("tap.csv"), "--out", output], environment: ["PATH": "/nonexistent"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("PNG output needs rsvg-convert on PATH"))
    }
}
