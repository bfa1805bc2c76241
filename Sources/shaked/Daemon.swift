import Dispatch
import Foundation
import IIOSensor
import Logging
import ShakeDetection
import ShakeTrace

/// The running daemon: one source of samples, one detector, one output; stopped by SIGTERM or SIGINT.
final class Daemon {
    enum Input {
        case iio(backend: LibIIOBackend, configuration: SensorSource.Configuration)
        case replay(path: String, speed: Double, loop: Bool)
    }

    private var detector: ShakeDetector
    private let sink: EventSink
    private let logger: Logger
    private let input: Input
    private let wakeup = Wakeup()
    private var signalSources: [any DispatchSourceSignal] = []

    init(settings: DetectorSettings, sink: EventSink, logger: Logger, input: Input) {
        detector = ShakeDetector(settings: settings)
        self.sink = sink
        self.logger = logger
        self.input = input
    }

    /// Runs until a signal (or, for a replay without --loop, the end of the trace).
    /// - Returns: the exit status.
    func run() -> Int32 {
        installSignalHandlers()
        var status: Int32 = 0
        switch input {
        case .iio(let backend, let configuration):
            logger.info(
                "starting",
                metadata: [
                    "source": "\(backend.uri.map { "iio:\($0)" } ?? "iio (local)")",
                    "device": "\(configuration.request)", "rate": "\(SamplingFrequency.format(configuration.rate)) Hz",
                ])
            let source = SensorSource(backend: backend, configuration: configuration, logger: logger)
            source.run(wakeup: wakeup, onSample: process, onBreak: streamBroke)
        case .replay(let path, let speed, let loop):
            status = replay(path: path, speed: speed, loop: loop)
        }
        if let event = detector.interrupt() { sink.emit(event) }
        let counters = detector.counters
        logger.info(
            "stopped",
            metadata: [
                "samples": "\(counters.samples)", "invalid": "\(counters.invalid)",
                "discontinuities": "\(counters.discontinuities)", "began": "\(counters.began)",
                "ended": "\(counters.ended)", "cancelled": "\(counters.cancelled)",
            ])
        return status
    }

    private func process(_ sample: Sample) {
        if let event = detector.process(sample) { sink.emit(event) }
    }

    private func streamBroke(_ reason: String) {
        logger.debug("the stream broke", metadata: ["reason": "\(reason)"])
        if let event = detector.interrupt() { sink.emit(event) }
    }

    private func installSignalHandlers() {
        signal(SIGPIPE, SIG_IGN)
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            let wakeup = self.wakeup
            let logger = self.logger
            source.setEventHandler {
                logger.info("stopping on signal \(number == SIGTERM ? "SIGTERM" : "SIGINT")")
                wakeup.signal()
            }
            source.resume()
            signalSources.append(source)
        }
    }

    /// Plays a trace at its own pace (or `speed` times faster; 0: at once), again and again with `loop`.
    private func replay(path: String, speed: Double, loop: Bool) -> Int32 {
        let samples: [Sample]
        do {
            samples = try TraceFile.read(path: path)
        } catch {
            logger.error("\(error)")
            return 1
        }
        guard let first = samples.first, let last = samples.last else {
            logger.warning("\(path) holds no samples")
            return 0
        }
        let interval = samples.count > 1 ? (last.time - first.time) / Double(samples.count - 1) : 0.01
        let period = last.time - first.time + interval
        logger.info(
            "replaying \(path)",
            metadata: [
                "samples": "\(samples.count)", "seconds": "\(JSONObjectWriter.format(period, decimals: 3))",
                "speed": "\(speed == 0 ? "as fast as possible" : "\(speed)x")", "loop": "\(loop)",
            ])
        let start = SensorSource.monotonicSeconds()
        var pass = 0
        repeat {
            let offset = Double(pass) * period
            for sample in samples {
                let time = sample.time + offset
                if speed > 0 {
                    let due = start + (time - first.time) / speed
                    let wait = due - SensorSource.monotonicSeconds()
                    if wait > 0, wakeup.sleep(for: .microseconds(Int64(wait * 1e6))) { return 0 }
                } else if wakeup.isSignalled {
                    return 0
                }
                process(Sample(time: time, acceleration: sample.acceleration))
            }
            pass += 1
        } while loop && !wakeup.isSignalled
        return 0
    }
}
