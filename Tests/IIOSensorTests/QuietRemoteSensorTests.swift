// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import IIOModel
import IIOSensor
import Logging
import ShakeDetection
import ShakeTestSupport
import Synchronization
import Testing

/// The log of a still sensor read through iiod that reports on change only: every read times out at the context's
/// timeout ("Connection timed out") and the capture connects again, every few seconds for as long as it lies
/// still. The lasting failure is said once, and once more when samples come back; the tries between are for the
/// debug log.
struct QuietRemoteSensorTests {
    /// The lines logged, with their level and metadata as text.
    final class Lines: Sendable {
        let lines = Mutex<[(level: Logger.Level, message: String, metadata: [String: String])]>([])

        func count(_ message: String, atLeast level: Logger.Level = .info) -> Int {
            lines.withLock { $0.filter { $0.message == message && $0.level >= level }.count }
        }

        func metadata(of message: String) -> [String: String]? {
            lines.withLock { $0.last { $0.message == message }?.metadata }
        }
    }

    struct Recording: LogHandler {
        let lines: Lines
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let values = (event.metadata ?? [:]).mapValues { "\($0)" }
            lines.lines.withLock { $0.append((event.level, "\(event.message)", values)) }
        }
    }

    @Test func aStillRemoteSensorTimingOutAgainAndAgainIsLoggedOnceAndOnceMoreWhenItDelivers() {
        let lines = Lines()
        let logger = Logger(label: "test") { _ in Recording(lines: lines) }
        let world = FakeWorld()
        var device = FakeWorld.Device.accelerometer(number: 0)
        device.remote = true
        let still = FakeScans.reads(
            synthesize {
                $0.motion = .none; $0.before = 0.5; $0.after = 0
            })
        device.reads = still
        world.add(device)
        world.add(.trigger(number: 0, name: "fake-accel-dev0"))
        let source = SensorSource(
            backend: FakeBackend(world: world),
            configuration: .init(
                rate: 100, rescanInterval: .milliseconds(1), retryInterval: .milliseconds(5), pacedReads: false),
            logger: logger, monotonic: world.clock)
        let wakeup = Wakeup()
        let failures = 8
        var breaks = 0
        var samplesAfter = 0
        source.run(wakeup: wakeup) { report in
            switch report {
            case .broke:
                breaks += 1
                // The sensor moves again after the eighth time out.
                if breaks == failures {
                    world.state.withLock { $0.devices[0].reads = still }
                }
            case .sample:
                if breaks == failures {
                    samplesAfter += 1
                    if samplesAfter == 10 { wakeup.signal() }
                }
            default:
                break
            }
        }
        #expect(breaks == failures)
        // The first time out in full, the others at debug level only.
        #expect(lines.count("the sensor failed or vanished; waiting for a sensor") == 1)
        #expect(lines.count("the sensor failed again the same way; waiting for a sensor", atLeast: .trace) == 7)
        // The first capture and the one after the first failure are said; those of the tries after the second
        // failure (and the one that delivers again: its own lines say so) are not.
        #expect(lines.count("capturing from the sensor") == 2)
        #expect(lines.count("using accelerometer") == 2)
        #expect(lines.count("the sensor's repeated failures are over") == 1)
        #expect(lines.metadata(of: "the sensor's repeated failures are over")?["failures"] == "\(failures)")
        #expect(
            lines.metadata(of: "the sensor failed or vanished; waiting for a sensor")?["error"]?
                .contains("Connection timed out") == true)
    }
}
