// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeDetection
import ShakeProtocol
import ShakeTestSupport
import ShakeTrace
import Testing

/// Inputs on which the trace fuzzer (`Fuzz/`, docs/fuzzing.md) once failed, kept in `Fuzz/Regressions/trace`.
struct FuzzRegressionTests {
    static let directory = Fixtures.repository.appendingPathComponent("Fuzz/Regressions/trace")

    static let inputs: [String] =
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()

    @Test func theSavedInputsAreThere() {
        #expect(!Self.inputs.isEmpty, "no inputs in \(Self.directory.path)")
    }

    /// Each saved input parses, or is refused with a reason; what parses is written and read back with every
    /// finite value still finite (within the places the writer keeps), and `nan` and the infinities unchanged.
    @Test(arguments: inputs)
    func aSavedInputParsesAndSurvivesARoundTrip(name: String) throws {
        let bytes = Array(try Data(contentsOf: Self.directory.appendingPathComponent(name)))
        let parser = TraceParser(source: name)
        let samples: [Sample]
        do {
            samples = try parser.parse(bytes)
        } catch {
            #expect(!error.message.isEmpty)
            return
        }
        let again = try parser.parse(TraceFile.render(samples))
        try #require(again.count == samples.count)
        for (original, copy) in zip(samples, again) {
            for (one, other) in [
                (original.time, copy.time), (original.acceleration.x, copy.acceleration.x),
                (original.acceleration.y, copy.acceleration.y), (original.acceleration.z, copy.acceleration.z),
            ] {
                if one.isNaN {
                    #expect(other.isNaN)
                } else if one.isInfinite {
                    #expect(other == one)
                } else {
                    #expect(other.isFinite, "\(one) was written as \(other)")
                    #expect(abs(other - one) <= 0.000051 + abs(one) * 1e-12, "\(one) was read back as \(other)")
                }
            }
        }
    }

    /// `huge-finite-value-written-as-inf.csv`: 1e308 times 10^4 (the places kept) overflowed, so the writer
    /// wrote `inf` and a finite value came back infinite.
    @Test func aHugeFiniteValueIsWrittenAsItself() throws {
        let sample = Sample(time: 1e308, x: 1e308, y: -.greatestFiniteMagnitude, z: 1e305)
        let text = TraceFile.render([sample])
        #expect(!text.contains("inf"))
        #expect(try TraceParser(source: "t.csv").parse(text) == [sample])
    }

    /// The same in JSON, where `inf` is not a number at all: a huge value is written in exponent form.
    @Test func aHugeFiniteValueIsValidJSON() {
        #expect(JSONObjectWriter.format(1e308, decimals: 3) == "1e+308")
        #expect(JSONObjectWriter.format(-.greatestFiniteMagnitude, decimals: 6) == "-1.7976931348623157e+308")
        #expect(JSONObjectWriter.format(2.31, decimals: 3) == "2.31")
    }
}
