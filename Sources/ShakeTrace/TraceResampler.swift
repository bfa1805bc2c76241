// SPDX-License-Identifier: Apache-2.0
public import ShakeDetection

/// Changes a trace's sample rate, to see how detection holds up on sensors that sample slower or faster.
///
/// Down to a lower rate, it averages blocks of samples, as a sensor's own low-pass filter does at a lower
/// output rate; up to a higher rate, it interpolates linearly between samples. A gap longer than `maxGap`, time
/// going backwards and a time that is not finite split the trace into stretches resampled one by one: a gap
/// stays a gap (nothing is invented across it), so the cost is bounded by the samples there are, not by the
/// trace's span.
public enum TraceResampler {
    /// - Parameters:
    ///   - source: the trace's name, for the error.
    ///   - maxGap: seconds between two samples past which the stretch ends.
    ///   - limit: the most samples the result may hold.
    /// - Throws: ``TraceError`` when the result would hold more than `limit` samples.
    public static func resample(
        _ samples: [Sample], to rate: Double, source: String, maxGap: Double = 1,
        limit: Int = TraceFile.maxSamples
    ) throws(TraceError) -> [Sample] {
        guard rate.isFinite, rate > 0 else { return samples }
        var result: [Sample] = []
        var start = 0
        while start < samples.count {
            var end = start + 1
            while end < samples.count, samples[end - 1].time.isFinite, samples[end].time.isFinite,
                samples[end].time >= samples[end - 1].time, samples[end].time - samples[end - 1].time <= maxGap
            {
                end += 1
            }
            try resampleStretch(samples[start..<end], to: rate, into: &result, limit: limit, source: source)
            start = end
        }
        return result
    }

    /// One stretch with finite times, in order, no gap longer than `maxGap`.
    private static func resampleStretch(
        _ stretch: ArraySlice<Sample>, to rate: Double, into result: inout [Sample], limit: Int, source: String
    ) throws(TraceError) {
        func append(_ sample: Sample) throws(TraceError) {
            guard result.count < limit else {
                throw TraceError(
                    file: source, message: "resampled, it would hold more than \(limit) samples; split it")
            }
            result.append(sample)
        }
        guard stretch.count >= 2, let first = stretch.first, let last = stretch.last, last.time > first.time else {
            for sample in stretch { try append(sample) }
            return
        }
        let nativeRate = Double(stretch.count - 1) / (last.time - first.time)
        if rate < nativeRate {
            let block = Int(min((nativeRate / rate).rounded(), Double(stretch.count)))
            guard block > 1 else {
                for sample in stretch { try append(sample) }
                return
            }
            for blockStart in stride(from: stretch.startIndex, to: stretch.endIndex - block + 1, by: block) {
                var sum = Vector3.zero
                for sample in stretch[blockStart..<(blockStart + block)] { sum = sum + sample.acceleration }
                try append(Sample(time: stretch[blockStart].time, acceleration: sum * (1 / Double(block))))
            }
            return
        }
        var index = stretch.startIndex
        var produced = 0
        var time = first.time
        while time <= last.time {
            while index + 1 < stretch.endIndex - 1, stretch[index + 1].time <= time { index += 1 }
            let a = stretch[index]
            let b = stretch[index + 1]
            let span = b.time - a.time
            let fraction = span > 0 ? min(1, max(0, (time - a.time) / span)) : 0
            try append(Sample(time: time, acceleration: a.acceleration + (b.acceleration - a.acceleration) * fraction))
            produced += 1
            time = first.time + Double(produced) / rate
        }
    }
}
