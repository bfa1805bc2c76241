public import ShakeDetection

/// Changes a trace's sample rate, to see how detection holds up on sensors that sample slower or faster.
///
/// Down to a lower rate, it averages blocks of samples, as a sensor's own low-pass filter does at a lower
/// output rate; up to a higher rate, it interpolates linearly between samples.
public enum TraceResampler {
    public static func resample(_ samples: [Sample], to rate: Double) -> [Sample] {
        guard samples.count >= 2, rate > 0, let first = samples.first, let last = samples.last,
            last.time > first.time
        else { return samples }
        let nativeRate = Double(samples.count - 1) / (last.time - first.time)
        if rate < nativeRate {
            let block = max(1, Int((nativeRate / rate).rounded()))
            guard block > 1 else { return samples }
            return stride(from: 0, to: samples.count - block + 1, by: block).map { start in
                var sum = Vector3.zero
                for sample in samples[start..<(start + block)] { sum = sum + sample.acceleration }
                return Sample(time: samples[start].time, acceleration: sum * (1 / Double(block)))
            }
        }
        var result: [Sample] = []
        result.reserveCapacity(Int((last.time - first.time) * rate) + 1)
        var index = 0
        var time = first.time
        while time <= last.time {
            while index + 1 < samples.count - 1, samples[index + 1].time <= time { index += 1 }
            let a = samples[index]
            let b = samples[index + 1]
            let span = b.time - a.time
            let fraction = span > 0 ? min(1, max(0, (time - a.time) / span)) : 0
            result.append(
                Sample(time: time, acceleration: a.acceleration + (b.acceleration - a.acceleration) * fraction))
            time = first.time + Double(result.count) / rate
        }
        return result
    }
}
