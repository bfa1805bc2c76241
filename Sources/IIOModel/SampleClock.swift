// SPDX-License-Identifier: Apache-2.0
/// Times for buffered samples that carry no timestamp: spaced by the sampling interval, kept close to when the
/// batches arrive.
///
/// A buffer hands over several scans at once (up to its watermark), so the arrival time is the time of the last
/// of them at best. Samples continue from the previous one at the nominal interval; when that drifts more than
/// ``tolerance`` from the arrival time (a gap, or a sensor running faster or slower than it says), the batch is
/// re-anchored to end at its arrival, never going back before the previous sample.
public struct SampleClock: Sendable {
    public let interval: Double
    public let tolerance: Double
    private var last: Double?

    public init(rate: Double, tolerance: Double = 0.1) {
        self.interval = rate > 0 ? 1 / rate : 0.01
        self.tolerance = tolerance
    }

    /// Times for `count` samples that arrived together at `arrival` (seconds on a monotonic clock).
    public mutating func times(count: Int, arrival: Double) -> [Double] {
        guard count > 0 else { return [] }
        var times: [Double]
        let anchored = (0..<count).map { arrival - Double(count - 1 - $0) * interval }
        if let last {
            let continued = (1...count).map { last + Double($0) * interval }
            let drift = continued[count - 1] - arrival
            if abs(drift) <= tolerance {
                times = continued
            } else if drift < 0 {
                // Behind: a gap, or a faster sensor. Jump forward to the arrival.
                times = anchored.map { Swift.max($0, last + interval) }
                for index in times.indices.dropFirst() where times[index] <= times[index - 1] {
                    times[index] = times[index - 1] + interval
                }
            } else {
                // Ahead: a slower sensor. Spread the batch evenly up to the arrival.
                let step = Swift.max((arrival - last) / Double(count), interval / 10)
                times = (1...count).map { last + Double($0) * step }
            }
        } else {
            times = anchored
        }
        last = times[count - 1]
        return times
    }

    /// Forgets the previous sample (after the stream broke).
    public mutating func reset() {
        last = nil
    }
}
