// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import IIOSensor
import Logging
import NumberFormat
import ShakeDetection
import ShakeTrace

/// A trace file as a source of samples: played at its own pace (or `speed` times faster; 0: at once), again and
/// again with `loop`, on the source's thread like a sensor's capture.
struct TraceReplay {
    let path: String
    let speed: Double
    let loop: Bool
    let logger: Logger

    /// Plays the trace until its end (without `loop`) or until `shutdown` is signalled.
    /// - Parameters:
    ///   - started: called with the trace's sample rate once it is read.
    ///   - onSample: each sample, its time moved on by the trace's length on each pass.
    /// - Returns: the exit status: 1 when the trace cannot be read.
    func run(shutdown: Wakeup, started: (Double) -> Void, onSample: (Sample) -> Void) -> Int32 {
        let samples: [Sample]
        do {
            samples = try TraceFile.read(path: path)
        } catch {
            logger.error("cannot read the trace", metadata: ["file": "\(path)", "error": "\(error)"])
            return 1
        }
        guard let first = samples.first, let last = samples.last else {
            logger.warning("the trace holds no samples", metadata: ["file": "\(path)"])
            return 0
        }
        // Times that are not numbers cannot be paced, and a trace whose times do not advance cannot be played in
        // real time (again and again, it would spin): both are refused with what to do instead.
        if let bad = samples.firstIndex(where: { !$0.time.isFinite }) {
            logger.error(
                "cannot replay the trace: a sample's time is not a number",
                metadata: ["file": "\(path)", "sample": "\(bad + 1)", "time": "\(samples[bad].time)"])
            return 1
        }
        let span = last.time - first.time
        guard span.isFinite, span > 0 || samples.count == 1 || (speed == 0 && !loop) else {
            logger.error(
                "cannot replay the trace: its times do not advance from the first sample to the last",
                metadata: ["file": "\(path)", "first": "\(first.time)", "last": "\(last.time)"])
            return 1
        }
        let interval = samples.count > 1 && span > 0 ? span / Double(samples.count - 1) : 0.01
        let period = max(span, 0) + interval
        started(1 / interval)
        logger.info(
            "replaying",
            metadata: [
                "file": "\(path)",
                "samples": "\(samples.count)", "seconds": "\(DecimalText.format(period, decimals: 3))",
                "speed": "\(speed == 0 ? "as fast as possible" : "\(speed)x")", "loop": "\(loop)",
            ])
        let start = SensorSource.monotonicSeconds()
        var pass = 0
        repeat {
            let offset = Double(pass) * period
            for sample in samples {
                let time = sample.time + offset
                if speed > 0 {
                    // However far ahead (a gap of years, --speed 1e-15), in waits of an hour at most: no
                    // conversion of a huge wait to whole microseconds.
                    let due = start + (time - first.time) / speed
                    while true {
                        let wait = due - SensorSource.monotonicSeconds()
                        guard wait > 0 else { break }
                        if shutdown.sleep(for: .microseconds(Int64(min(wait, 3600) * 1e6))) { return 0 }
                    }
                } else if shutdown.isSignalled {
                    return 0
                }
                onSample(Sample(time: time, acceleration: sample.acceleration))
            }
            pass += 1
        } while loop && !shutdown.isSignalled
        return 0
    }
}
