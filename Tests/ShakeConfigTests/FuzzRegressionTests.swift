// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeConfig
import ShakeTestSupport
import Testing

/// Inputs that once crashed the configuration parser (found while fuzzing, Fuzz/Regressions/config): each must
/// now be a clear error.
struct ConfigFuzzRegressionTests {
    @Test func deepFlowNestingIsAnErrorNotAStackOverflow() throws {
        let path = Fixtures.repository.appendingPathComponent(
            "Fuzz/Regressions/config/deep-flow-nesting-stack-overflow.yaml"
        ).path
        #expect(throws: ConfigError.self) { try ConfigLoader.load(path: path) }
        do {
            _ = try ConfigLoader.load(path: path)
        } catch {
            #expect(error.description.contains("nested more than 64 levels deep"), "\(error)")
        }
    }

    /// Nesting by indentation has the same limit as the rest (64 levels), however narrow the indentation.
    @Test func deepBlockNestingHasTheSameLimit() {
        func nested(_ levels: Int) -> String {
            (0..<levels).map { String(repeating: " ", count: $0 * 2) + "a:\n" }.joined()
                + String(
                    repeating: " ", count: levels * 2) + "b: 1\n"
        }
        do {
            _ = try ConfigLoader.parse(nested(70), source: "deep.yaml")
            Issue.record("accepted")
        } catch {
            #expect(error.description.contains("nested too deeply"), "\(error)")
        }
        do {
            _ = try ConfigLoader.parse(nested(60), source: "deep.yaml")
            Issue.record("accepted")
        } catch {
            #expect(error.description.contains("a: unknown section"), "\(error)")
        }
    }

    @Test(arguments: [
        (String(repeating: "[", count: 20_000) + String(repeating: "]", count: 20_000), "nested more than 64"),
        (String(repeating: "{a: ", count: 5_000) + "1" + String(repeating: "}", count: 5_000), "nested more than 64"),
        (String(repeating: "- ", count: 10_000) + "x\n", "nested more than 64"),
        ("detector:\n" + String(repeating: " ", count: 300) + "threshold: 12\n", "indented more than 256 columns"),
    ])
    func pathologicalShapesAreRefusedBeforeParsing(text: String, message: String) {
        do {
            _ = try ConfigLoader.parse(text, source: "deep.yaml")
            Issue.record("accepted")
        } catch {
            #expect(error.description.contains(message), "\(error)")
        }
    }

    @Test func quotedAndCommentedBracketsDoNotCount() throws {
        let brackets = String(repeating: "[", count: 100)
        let text = "# \(brackets)\nsensor:\n  device: \"\(brackets)\"  # \(brackets)\n  source: 'iio'\n"
        let configuration = try ConfigLoader.parse(text, source: "quoted.yaml")
        #expect(configuration.sensor.device == .name(brackets))
    }
}
