import BlockingWork
// SPDX-License-Identifier: Apache-2.0
import IIOModel
import IIOSensor
import Logging
import ShakeDetection
import ShakeTestSupport
import Synchronization
import Testing

@testable import ShakeDaemon

/// The one event path: every event, captured, replayed or simulated, numbered in one sequence and handed to every
/// consumer; a consumer the daemon does not have is added with a type and a line in the list.
struct EventPathTests {
    /// A consumer the daemon does not have (a metrics exporter, say): records everything that reaches it.
    final class RecordingConsumer: EventConsumer {
        private let recorded = Mutex<(events: [PublishedEvent], samples: Int, sensors: [String])>(([], 0, []))

        func consume(_ event: PublishedEvent) {
            recorded.withLock { $0.events.append(event) }
        }

        func consume(_ report: SourceEvent) {
            recorded.withLock {
                switch report {
                case .sample: $0.samples += 1
                case .capturing(let accelerometer, _): $0.sensors.append(accelerometer.id)
                default: break
                }
            }
        }

        var events: [PublishedEvent] { recorded.withLock { $0.events } }
        var samples: Int { recorded.withLock { $0.samples } }
        var sensors: [String] { recorded.withLock { $0.sensors } }
    }

    /// A sensor that delivers a trace once, as `SensorSource` reports a capture, then ends the run.
    final class TraceCapture: SensorCapture, @unchecked Sendable {
        let samples: [Sample]
        let done: @Sendable () -> Void
        static let accelerometer = Accelerometer(id: "iio:device0", name: "accel_3d", location: .display)

        init(samples: [Sample], done: @escaping @Sendable () -> Void) {
            self.samples = samples
            self.done = done
        }

        func peek() -> Accelerometer? { Self.accelerometer }

        func run(
            wakeup: Wakeup, lowestRate: Double?, motionUnderWay: () -> Bool, beforeRead: () -> Void,
            relayTiming: (any RelayReadTiming)?, report: (SourceEvent) -> Void
        ) {
            report(.capturing(Self.accelerometer, rate: 100))
            for sample in samples { report(.sample(sample)) }
            report(.stopped)
            done()
        }
    }

    /// A sensor whose stream breaks at `breakAt` as `SensorSource` reports a sleep within a capture that goes on
    /// (`sensorKept`), then delivers the rest of the trace; `seen` is called with the status after the break.
    final class BreakingCapture: SensorCapture, @unchecked Sendable {
        let samples: [Sample]
        let breakAt: Double
        let status: StatusBoard
        let done: @Sendable () -> Void
        private(set) var sensorAfterBreak: SensorState?

        init(samples: [Sample], breakAt: Double, status: StatusBoard, done: @escaping @Sendable () -> Void) {
            self.samples = samples
            self.breakAt = breakAt
            self.status = status
            self.done = done
        }

        func peek() -> Accelerometer? { TraceCapture.accelerometer }

        func run(
            wakeup: Wakeup, lowestRate: Double?, motionUnderWay: () -> Bool, beforeRead: () -> Void,
            relayTiming: (any RelayReadTiming)?, report: (SourceEvent) -> Void
        ) {
            report(.capturing(TraceCapture.accelerometer, rate: 100))
            for sample in samples where sample.time < breakAt { report(.sample(sample)) }
            report(.broke(reason: "the system slept", sensorKept: true))
            sensorAfterBreak = status.current.sensor
            for sample in samples where sample.time >= breakAt { report(.sample(sample)) }
            report(.stopped)
            done()
        }
    }

    static let quiet: Logger = {
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        return logger
    }()

    static func loop(_ input: SourceLoop.Input, path: EventPath, capture: CaptureSwitch) -> SourceLoop {
        SourceLoop(
            input: input, settings: DetectorSettings(), capture: capture,
            status: StatusBoard(sensitivity: .medium), path: path, notices: SystemdNotices(logger: quiet),
            logger: quiet)
    }

    @Test func aNewConsumerGetsLiveReplayedAndSimulatedEventsInOneNumberedSequence() async throws {
        let recorder = RecordingConsumer()
        let path = EventPath(consumers: [recorder])
        let trace = Fixtures.path("shake-horizontal-100hz.csv")
        let samples = try Fixtures.samples("shake-horizontal-100hz.csv")

        // Captured: a sensor's samples through the source's loop, as on the source's thread.
        let capturing = CaptureSwitch(gate: CaptureGate(printEvents: true, hasSocket: false, alwaysOn: false))
        Self.loop(
            .capture(
                open: { TraceCapture(samples: samples, done: { capturing.stopForGood() }) }, describe: [:]),
            path: path, capture: capturing
        ).run()
        let captured = recorder.events.count
        #expect(captured == 2)

        // Replayed: the same trace as a file.
        let replaying = CaptureSwitch(gate: CaptureGate(printEvents: true, hasSocket: false, alwaysOn: false))
        Self.loop(.replay(path: trace, speed: 0, loop: false), path: path, capture: replaying).run()
        let replayed = recorder.events.count - captured
        #expect(replayed == 2)

        // Simulated, for user 1000.
        let simulate = SimulateService(
            requests: SimulationRequests(), settings: { DetectorSettings() }, path: path, realTime: false)
        await simulate.simulate(for: 1000)

        let events = recorder.events
        #expect(events.count > captured + replayed)
        // One sequence, in order, none twice or missing, whatever made the event.
        #expect(events.map(\.seq) == Array(1...events.count))
        #expect(events.prefix(captured).map(\.event.phase) == [.began, .ended])
        #expect(events.prefix(captured).allSatisfy { $0.origin.sensor == "iio:device0" })
        #expect(events.dropFirst(captured).prefix(replayed).map(\.event.phase) == [.began, .ended])
        #expect(events.dropFirst(captured).prefix(replayed).allSatisfy { $0.origin.sensor == trace })
        #expect(events.dropFirst(captured + replayed).allSatisfy { $0.origin == .simulated(by: 1000) })
        // The source's reports reach it too: every sample of the capture and the replay, and the sensor.
        #expect(recorder.samples == 2 * samples.count)
        #expect(recorder.sensors == ["iio:device0"])
    }

    /// A sleep mid-shake within a capture that goes on: the shake is cancelled `interrupted`, and the sensor stays
    /// the one in use (status, hello and the bus's HasAccelerometer and Sensor name it), as do the events after.
    @Test func aBreakWithinACaptureKeepsTheSensor() throws {
        let recorder = RecordingConsumer()
        let path = EventPath(consumers: [recorder])
        let shake = try Fixtures.samples("shake-horizontal-100hz.csv")
        let end = (shake.last?.time ?? 0) + 0.01
        // The shake, then the same shake again after the break (moved past the first).
        let samples = shake + shake.map { Sample(time: $0.time + end, acceleration: $0.acceleration) }
        // Mid-shake: halfway between the first and the last strong sample.
        let strong = shake.filter { abs($0.acceleration.x) > 15 }.map(\.time)
        let middle = try (#require(strong.first) + #require(strong.last)) / 2
        let status = StatusBoard(sensitivity: .medium)
        let capturing = CaptureSwitch(gate: CaptureGate(printEvents: true, hasSocket: false, alwaysOn: false))
        let capture = BreakingCapture(
            samples: samples, breakAt: middle, status: status, done: { capturing.stopForGood() })
        SourceLoop(
            input: .capture(open: { capture }, describe: [:]), settings: DetectorSettings(), capture: capturing,
            status: status, path: path, notices: SystemdNotices(logger: Self.quiet), logger: Self.quiet
        ).run()
        #expect(capture.sensorAfterBreak == .capturing(TraceCapture.accelerometer, rate: 100))
        let events = recorder.events
        #expect(events.first.map { $0.event.phase } == .began)
        #expect(events.dropFirst().first.map { $0.event.phase } == .cancelled)
        #expect(events.dropFirst(2).map(\.event.phase) == [.began, .ended])
        #expect(events.allSatisfy { $0.origin.sensor == "iio:device0" }, "\(events.map(\.origin))")
    }

    @Test func consumersSeeEventsInTheOrderOfTheirNumbersWhicheverThreadPublishes() async {
        let recorder = RecordingConsumer()
        let path = EventPath(consumers: [recorder])
        await withTaskGroup(of: Void.self) { group in
            for publisher in 0..<4 {
                group.addTask {
                    for index in 0..<250 {
                        path.publish(
                            .began(time: Double(index)),
                            origin: publisher == 0
                                ? .simulated(by: nil) : .live(.init(shaking: true, counters: .init())))
                    }
                }
            }
        }
        #expect(recorder.events.map(\.seq) == Array(1...1000))
    }
}

extension PublishedEvent.Origin {
    /// The sensor a live event came from.
    fileprivate var sensor: String? {
        if case .live(let live) = self { return live.sensor }
        return nil
    }
}
