// SPDX-License-Identifier: Apache-2.0
import Benchmark
import ShakeDetection
import ShakeTrace

/// Detector throughput: samples through `ShakeDetector.process` on one core.
///
/// The stream is a synthesized recording at 100 Hz: a hand-held device with eight shakes, then a walk, so both
/// the quiet path and the shaking path are exercised. One scaled iteration is one sample (`scalingFactor`
/// mega: the throughput column reads in millions of samples per second). The stream is replayed end to end
/// with its clock moved forward each time round, so it never runs backwards.
let benchmarks: @Sendable () -> Void = {
    let stream: [Sample] = {
        var shakes = SynthesisOptions()
        shakes.repeatCount = 8
        shakes.pause = 3
        shakes.duration = 1.5
        var samples = TraceSynthesizer(options: shakes).samples()
        var walk = SynthesisOptions()
        walk.motion = .none
        walk.background = .walking
        walk.before = 20
        walk.start = (samples.last?.time ?? 0) + 0.01
        samples += TraceSynthesizer(options: walk).samples()
        return samples
    }()
    let period = (stream.last?.time ?? 0) - (stream.first?.time ?? 0) + 0.01

    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .instructions, .mallocCountTotal],
        timeUnits: .nanoseconds,
        maxDuration: .seconds(5),
        maxIterations: 50
    )

    Benchmark("ShakeDetector.process", configuration: .init(scalingFactor: .mega)) { benchmark in
        var detector = ShakeDetector()
        var events = 0
        var index = 0
        var offset = 0.0
        for _ in benchmark.scaledIterations {
            var sample = stream[index]
            sample.time += offset
            if detector.process(sample) != nil { events += 1 }
            index += 1
            if index == stream.count {
                index = 0
                offset += period
            }
        }
        blackHole(events)
    }
}
