// SPDX-License-Identifier: Apache-2.0
/// How long buffered capture sleeps between two reads of the kernel's buffer, decided without a clock or a
/// device. The kernel wakes a process that polls an IIO buffer at every scan it pushes, whatever the watermark,
/// so the capture sleeps instead and then takes, without blocking, what has arrived: each read is one wake-up,
/// and a sample waits in the kernel for up to one interval before the detector sees it.
///
/// - `still`: the device lies still or moves without a hand at work: five reads a second.
/// - `moving`: the detector follows a stroke or a shake (`ShakeDetector.isMotionUnderWay`):
///   short steps, so that `ended` (and a `began` decided at a reversal) reaches subscribers within a few
///   hundredths of a second of the sample that decides it. A shake lasts a second or two.
/// - `relay`: only the relay to iio-sensor-proxy reads the sensor, which iio-sensor-proxy itself reads every
///   700 ms: one read per iio-sensor-proxy read (one read a second let a turn lag up to 1.7 s; the first turn
///   after a claim came 1.94-2.10 s after its end in the VM, with the kernel buffer then dropping the newest
///   scans). About 1.4 wake-ups a second, within the relay's budget of 2. The daemon times these reads to just
///   before iio-sensor-proxy's polls (``PollPhase``); this interval is for when it cannot (no watch of the
///   relay's node).
///
/// An interval is never shorter than one scan: a read sooner would find nothing and wait on the buffer.
public struct ReadPacing: Sendable, Hashable {
    public enum Mode: Sendable, Hashable {
        case still
        case moving
        case relay
    }

    /// Seconds between reads in each mode.
    public var still: Double
    public var moving: Double
    public var relay: Double

    public init(still: Double = 0.2, moving: Double = 0.03, relay: Double = 0.7) {
        self.still = still
        self.moving = moving
        self.relay = relay
    }

    /// Seconds between two reads in `mode` for a sensor at `rate` Hz (0 or less: the mode's own interval).
    public func interval(_ mode: Mode, rate: Double) -> Double {
        let wanted =
            switch mode {
            case .still: still
            case .moving: moving
            case .relay: relay
            }
        guard rate > 0, rate.isFinite else { return wanted }
        return max(wanted, 1 / rate)
    }

    /// The scans a read takes at most, which is also the buffer's watermark: the longest interval's worth for
    /// the capture (`relay` when only the relay reads, `still` otherwise), at least one.
    public func scansPerRead(rate: Double, relayOnly: Bool) -> Int {
        guard rate > 0, rate.isFinite else { return 1 }
        let seconds = interval(relayOnly ? .relay : .still, rate: rate)
        return max(1, Int(min(rate * seconds, 1e6).rounded()))
    }

    /// The mode for the capture's next read.
    /// - Parameters:
    ///   - relayOnly: only the relay reads the sensor (capture at its low rate).
    ///   - motionUnderWay: the detector follows a stroke or a shake.
    public static func mode(relayOnly: Bool, motionUnderWay: Bool) -> Mode {
        if relayOnly { return .relay }
        return motionUnderWay ? .moving : .still
    }
}
