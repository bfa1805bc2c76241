// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeDetection
import ShakeTestSupport
import Testing

/// Replays every committed fixture through the detector and checks it against `expectations.txt`.
struct FixtureReplayTests {
    struct Expectation: CustomTestStringConvertible, Sendable {
        var file: String
        var expected: String
        var testDescription: String { "\(file): \(expected)" }
    }

    static let expectations: [Expectation] = {
        let path = Fixtures.path("expectations.txt")
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#"), let colon = line.firstIndex(of: ":") else { return nil }
            return Expectation(
                file: String(line[..<colon]),
                expected: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
    }()

    @Test func everyFixtureHasAnExpectation() throws {
        let traces = try FileManager.default.contentsOfDirectory(atPath: Fixtures.directory.path)
            .filter { $0.hasSuffix(".csv") }
        #expect(Set(traces) == Set(Self.expectations.map(\.file)))
        #expect(Self.expectations.count >= 30)
    }

    @Test(arguments: expectations)
    func fixture(_ expectation: Expectation) throws {
        let events = detect(try Fixtures.samples(expectation.file))
        let phases = outline(events)
        switch expectation.expected {
        case "none":
            #expect(phases.isEmpty)
        case "no-ended":
            #expect(phases.isEmpty || phases == ["began", "cancelled(not_a_shake)"])
        default:
            #expect(phases.joined(separator: " ") == expectation.expected)
        }
    }

    @Test(arguments: ["horizontal": Axis.x, "vertical": .y, "both": .x])
    func reportedAxisFollowsTheShake(direction: String, axis: Axis) throws {
        let events = detect(try Fixtures.samples("shake-\(direction)-100hz.csv"))
        guard case .ended(let summary) = events.last else {
            Issue.record("no ended event: \(events)")
            return
        }
        if direction == "both" {
            #expect(summary.axis != .z)
        } else {
            #expect(summary.axis == axis)
        }
        #expect(summary.peak > 15 && summary.peak < 60)
        #expect(summary.reversals >= DetectorSettings().reversals)
    }

    @Test func nonFiniteSamplesAreDroppedAndCounted() throws {
        let samples = try Fixtures.samples("nan-samples.csv")
        var detector = ShakeDetector()
        for sample in samples { _ = detector.process(sample) }
        #expect(detector.counters.invalid == samples.filter { !$0.isUsable }.count)
        #expect(detector.counters.invalid > 10)
        #expect(detector.counters.samples == samples.count - detector.counters.invalid)
    }

    @Test(arguments: ["gap-mid-shake.csv", "backwards-mid-shake.csv"])
    func aBrokenStreamInterruptsTheShakeAtTheLastGoodSample(file: String) throws {
        let samples = try Fixtures.samples(file)
        var detector = ShakeDetector()
        var events: [ShakeEvent] = []
        var previous: Sample?
        var breakAt: Double?
        for sample in samples {
            if let previous, breakAt == nil,
                sample.time < previous.time || sample.time - previous.time > DetectorSettings().maxGap
            {
                breakAt = previous.time
            }
            if let event = detector.process(sample) { events.append(event) }
            previous = sample
        }
        #expect(detector.counters.discontinuities == 1)
        guard case .cancelled(let time, _, .interrupted, _) = events.last else {
            Issue.record("expected an interruption, got \(events)")
            return
        }
        #expect(time == breakAt)
    }
}
