// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeTestSupport
import Testing

/// A file with `contents` in this test run's temporary folder, for the shakectl tests.
func temporaryFile(_ name: String, _ contents: String) throws -> String {
    let path = try Scratch.directory("shakectl") + "/" + name
    try contents.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

struct DetectCommandTests {

    @Test func printsOneJSONLinePerEventWithTheSource() throws {
        let shake = Fixtures.path("shake-horizontal-100hz.csv")
        let walk = Fixtures.path("walking.csv")
        let result = try Command.run("shakectl", ["detect", shake, walk])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        let objects = try lines.map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects.map { $0["phase"] as? String } == ["began", "ended"])
        #expect(objects.allSatisfy { $0["source"] as? String == shake && $0["event"] as? String == "shake" })
        #expect(lines[0].hasPrefix(#"{"event":"shake","phase":"began","time":"#))
        #expect(objects[1]["axis"] as? String == "x")
        #expect((objects[1]["reversals"] as? Int ?? 0) >= 4)
    }

    @Test func aMalformedFileNamesTheLineAndTheOthersAreStillRead() throws {
        let bad = try temporaryFile("bad.csv", "time,x,y,z\n0,1,2,3\n0.01,1,2\n")
        let good = Fixtures.path("shake-vertical-50hz.csv")
        let result = try Command.run("shakectl", ["detect", bad, good])
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(bad):3: expected 4 fields (time,x,y,z), found 3"))
        #expect(result.stdout.contains(#""phase":"ended""#))
    }

    @Test func aMissingFileIsAnError() throws {
        let result = try Command.run("shakectl", ["detect", "/nonexistent/trace.csv"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("/nonexistent/trace.csv: no such file"))
    }

    @Test func standardInputIsATrace() throws {
        let trace = try String(contentsOfFile: Fixtures.path("shake-rotate-100hz.csv"), encoding: .utf8)
        let result = try Command.run("shakectl", ["detect", "-"], input: trace)
        #expect(result.status == 0)
        #expect(result.stdout.contains(#""phase":"ended""#) && result.stdout.contains(#""source":"-""#))
    }

    @Test func sensitivityAndConfigChangeTheOutcome() throws {
        let gentle = try Command.run("shakectl", ["synth", "--force", "0.3", "--seed", "21"]).stdout
        let path = try temporaryFile("gentle.csv", gentle)
        let light = try Command.run("shakectl", ["detect", "--sensitivity", "light", path])
        #expect(light.stdout.contains(#""phase":"ended""#))
        let hard = try Command.run("shakectl", ["detect", "--sensitivity", "hard", path])
        #expect(!hard.stdout.contains(#""phase":"ended""#))
        let lightFile = try temporaryFile("light.yaml", "detector:\n  sensitivity: light\n")
        let configured = try Command.run("shakectl", ["detect", "--config", lightFile, path])
        #expect(configured.stdout.contains(#""phase":"ended""#))
        // An explicit parameter in the file overrides its preset.
        let strict = try temporaryFile("strict.yaml", "detector:\n  sensitivity: light\n  threshold: 40\n")
        let overridden = try Command.run("shakectl", ["detect", "--config", strict, path])
        #expect(overridden.status == 0 && !overridden.stdout.contains(#""phase":"ended""#))
    }

    @Test func aBadConfigIsAUsageError() throws {
        let config = try temporaryFile("bad.yaml", "detector:\n  treshold: 6\n")
        let result = try Command.run("shakectl", ["detect", "--config", config, Fixtures.path("tap.csv")])
        #expect(result.status == 64)
        #expect(result.stderr.contains("detector.treshold: unknown key"))
        #expect(result.stdout.isEmpty)
    }

    @Test func droppedSamplesAreMentioned() throws {
        let result = try Command.run("shakectl", ["detect", Fixtures.path("nan-samples.csv")])
        #expect(result.status == 0)
        #expect(result.stderr.contains("dropped 17 invalid samples"))
    }
}

struct SynthCommandTests {
    @Test func writesATraceThatDetectReadsBack() throws {
        let result = try Command.run("shakectl", ["synth", "--direction", "vertical", "--rate", "50", "--seed", "5"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("\ntime,x,y,z\n"))
        #expect(result.stdout.hasPrefix("# shakectl synth --direction vertical --rate 50 --seed 5\n"))
        let again = try Command.run("shakectl", ["synth", "--direction", "vertical", "--rate", "50", "--seed", "5"])
        #expect(again.stdout == result.stdout)
        let detected = try Command.run("shakectl", ["detect", "-"], input: result.stdout)
        #expect(detected.stdout.contains(#""axis":"y""#))
    }

    @Test(arguments: [
        (["--force", "2"], "--force: must be in 0...1"),
        (["--direction", "sideways"], "sideways"),
        (["--rate", "0"], "--rate"),
        (["--interpolation", "cubic"], "cubic"),
    ])
    func badOptionsAreRefusedWithAMessage(arguments: [String], message: String) throws {
        let result = try Command.run("shakectl", ["synth"] + arguments)
        #expect(result.status != 0)
        #expect(result.stderr.contains(message))
        #expect(result.stdout.isEmpty)
    }

    @Test func helpExplainsTheVocabulary() throws {
        let result = try Command.run("shakectl", ["synth", "--help"])
        for word in [
            "--direction", "--force", "--iteration", "--interpolation", "--autoreverse", "--repeat",
            "--background", "--orientation", "--seed", "exp-down", "walking",
        ] {
            #expect(result.stdout.contains(word), "help lacks \(word)")
        }
    }
}

struct EvalCommandTests {
    /// A small corpus made with synth: two shakes, a walk, a fling (as a gesture) and a drop (as a fall).
    func makeCorpus() throws -> String {
        let directory = URL(fileURLWithPath: try Scratch.directory("eval-corpus"))
        let traces: [(String, [String], String)] = [
            ("s1.csv", ["--seed", "1"], "s1.csv,synth,shake,shake,2.0,3.5,100"),
            (
                "s2.csv", ["--seed", "2", "--direction", "rotate", "--rate", "50"],
                "s2.csv,synth,shake,shake,2.0,3.5,50"
            ),
            (
                "walk.csv", ["--motion", "none", "--background", "walking", "--before", "60"],
                "walk.csv,synth,adl,walk,,,100"
            ),
            ("fling.csv", ["--motion", "fling"], "fling.csv,synth,gesture,fling,2.0,2.4,100"),
            ("drop.csv", ["--motion", "drop", "--background", "still"], "drop.csv,synth,fall,drop,,,100"),
        ]
        var manifest = "file,dataset,kind,activity,label_start,label_end,rate\n"
        for (name, options, row) in traces {
            let path = directory.appendingPathComponent(name).path
            let result = try Command.run("shakectl", ["synth", "--out", path] + options)
            #expect(result.status == 0)
            manifest += row + "\n"
        }
        try manifest.write(to: directory.appendingPathComponent("manifest.csv"), atomically: true, encoding: .utf8)
        return directory.path
    }

    @Test func scoresACorpusAsATableAndAsJSON() throws {
        let corpus = try makeCorpus()
        let table = try Command.run("shakectl", ["eval", corpus])
        #expect(table.status == 0)
        #expect(table.stdout.contains("shake recall            100.0% (2/2)"))
        #expect(table.stdout.contains("gestures firing         0.0% (0/1)"))
        #expect(table.stdout.contains("falls firing            0.0% (0/1)"))
        let json = try Command.run("shakectl", ["eval", "--json", "--sensitivity", "hard", corpus])
        let object = try #require(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["sensitivity"] as? String == "hard")
        #expect(object["shakes"] as? Int == 2)
        #expect(object["false_shakes"] as? Int == 0)
        let resampled = try Command.run("shakectl", ["eval", "--resample", "25", corpus])
        #expect(resampled.stdout.contains("resampled to 25 Hz"))
    }

    @Test func comparesTwoSettingsSideBySide() throws {
        let corpus = try makeCorpus()
        let compared = try Command.run("shakectl", ["eval", corpus, "--compare", "light", "hard"])
        #expect(compared.status == 0)
        #expect(compared.stdout.contains("light against hard"))
        #expect(compared.stdout.contains("| shake recall"))
        let one = try Command.run("shakectl", ["eval", corpus, "--compare", "light"])
        #expect(one.status == 64 && one.stderr.contains("--compare takes two settings"))
        let missing = try Command.run("shakectl", ["eval", corpus, "--compare", "light", "/nonexistent.yaml"])
        #expect(missing.status == 64)
    }

    @Test func aMissingCorpusIsAnError() throws {
        let result = try Command.run("shakectl", ["eval", "/nonexistent"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("/nonexistent/manifest.csv: no such file"))
    }
}

struct PlotCommandTests {
    @Test func writesAnSVGAndRefusesOtherFormats() throws {
        let directory = URL(fileURLWithPath: try Scratch.directory("plot"))
        let out = directory.appendingPathComponent("shake.svg").path
        let result = try Command.run(
            "shakectl", ["plot", Fixtures.path("shake-rotate-100hz.csv"), "--label", "1.5:2.7", "--out", out])
        #expect(result.status == 0)
        let svg = try String(contentsOfFile: out, encoding: .utf8)
        #expect(svg.contains(">ended</text>"))
        let bad = try Command.run("shakectl", ["plot", Fixtures.path("tap.csv"), "--out", "x.jpg"])
        #expect(bad.status == 64 && bad.stderr.contains("--out must end in .svg, .png or .csv"))
        let csv = directory.appendingPathComponent("shake.csv").path
        #expect(
            try Command.run("shakectl", ["plot", Fixtures.path("shake-rotate-100hz.csv"), "--out", csv]).status == 0)
        let rows = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n")
        #expect(rows.first == "time,linear_x,linear_y,linear_z,linear,stroke,threshold,reversal,event")
        #expect(rows.contains { $0.hasSuffix(",ended") })
        let badLabel = try Command.run("shakectl", ["plot", Fixtures.path("tap.csv"), "--label", "3:1"])
        #expect(badLabel.status == 64 && badLabel.stderr.contains("--label takes START:END"))
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/rsvg-convert")))
    func writesAPNG() throws {
        let out = try Scratch.directory("plot-png") + "/fling.png"
        let result = try Command.run("shakectl", ["plot", Fixtures.path("fling.csv"), "--out", out])
        #expect(result.status == 0)
        let data = try #require(FileManager.default.contents(atPath: out))
        #expect(data.starts(with: [0x89, 0x50, 0x4E, 0x47]))
    }
}
