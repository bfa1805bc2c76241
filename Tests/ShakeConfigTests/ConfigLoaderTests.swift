import ShakeConfig
import ShakeDetection
import ShakeTestSupport
import Testing

struct ConfigLoaderTests {
    func parse(_ text: String) throws(ConfigError) -> ShakedConfiguration {
        try ConfigLoader.parse(text, source: "test.yaml")
    }

    @Test func theShippedConfigIsValidAndMatchesTheDefaults() throws {
        let path = Fixtures.repository.appendingPathComponent("config/shaked.yaml").path
        let configuration = try ConfigLoader.load(path: path)
        #expect(configuration.detector.settings() == DetectorSettings())
    }

    @Test func everyCommentedKeyInTheShippedConfigIsValidAndShowsTheDefault() throws {
        let path = Fixtures.repository.appendingPathComponent("config/shaked.yaml").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        // Uncomment "  # key: value" lines.
        let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            guard line.hasPrefix("  # "), let colon = line.firstIndex(of: ":"),
                line[line.index(line.startIndex, offsetBy: 4)..<colon].allSatisfy({ $0.isLetter || $0 == "_" })
            else { return String(line) }
            return "  " + line.dropFirst(4)
        }.joined(separator: "\n")
        let configuration = try parse(uncommented)
        #expect(Set(configuration.detector.overrides.keys) == Set(DetectorSettings.Parameter.allCases))
        #expect(configuration.detector.settings() == DetectorSettings())
    }

    @Test func anEmptyFileKeepsEveryDefault() throws {
        #expect(try parse("") == ShakedConfiguration())
        #expect(try parse("# nothing\n") == ShakedConfiguration())
    }

    @Test func explicitParametersAdjustThePreset() throws {
        let configuration = try parse(
            """
            detector:
              sensitivity: hard
              threshold: 15.5
              too_long: 5
              reversals: 6
            """)
        let settings = configuration.detector.settings()
        var expected = DetectorSettings.preset(.hard)
        expected.threshold = 15.5
        expected.tooLong = 5
        expected.reversals = 6
        #expect(settings == expected)
        // A preset named on the command line is adjusted by the same explicit parameters.
        #expect(configuration.detector.settings(sensitivity: .light).threshold == 15.5)
        #expect(
            configuration.detector.settings(sensitivity: .light).refractory
                == DetectorSettings.preset(.light).refractory)
    }

    @Test(arguments: [
        ("detector:\n  treshold: 12\n", "test.yaml:2: detector.treshold: unknown key"),
        ("detektor:\n  threshold: 12\n", "test.yaml:2: detektor: unknown section"),
        ("detector:\n  threshold: high\n", "test.yaml:2: detector.threshold: expected a number, found 'high'"),
        ("detector:\n  threshold: \"12\"\n", "test.yaml:2: detector.threshold: expected a number"),
        (
            "detector:\n  threshold: 1000\n",
            "test.yaml:2: detector.threshold: 1000.0 is out of range; allowed: 2.0...200.0"
        ),
        ("detector:\n  reversals: 2.5\n", "test.yaml:2: detector.reversals: expected a whole number"),
        (
            "detector:\n  sensitivity: extreme\n",
            "detector.sensitivity: 'extreme' is not a sensitivity; allowed: light, medium, hard"
        ),
        ("detector:\n  too_long: 1\n  quiet_time: 2\n", "detector.quiet_time: must be shorter than too_long (1.0)"),
        ("detector:\n  threshold: 12\n  threshold: 13\n", "detector.threshold: appears twice"),
        ("detector: 12\n", "detector: expected a mapping"),
        ("- a\n- b\n", "expected a mapping"),
        ("detector:\n  threshold: [1, 2]\n", "detector.threshold: expected a number, found 'a collection'"),
        ("detector: {threshold: 12\n", "not valid YAML"),
    ])
    func badValuesNameTheKeyAndWhatIsAllowed(text: String, message: String) {
        do {
            let configuration = try parse(text)
            Issue.record("accepted: \(configuration)")
        } catch {
            #expect(error.description.contains(message), "\(error.description)")
            #expect(error.file == "test.yaml")
        }
    }

    @Test func aMissingFileSaysSo() {
        #expect(throws: ConfigError(file: "/nonexistent.yaml", message: "no such file")) {
            try ConfigLoader.load(path: "/nonexistent.yaml")
        }
    }
}
