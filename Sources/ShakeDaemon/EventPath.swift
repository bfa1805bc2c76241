// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import IIOSensor
import ShakeDetection

/// One event on its way to the consumers: the detector's event, the number the ``EventPath`` gave it, and where
/// it came from.
struct PublishedEvent: Sendable, Equatable {
    /// Where an event came from.
    enum Origin: Sendable, Equatable {
        /// The live stream (a sensor's capture or a replayed trace), with the detector's state after the event.
        case live(LiveState)
        /// A simulated shake asked for by this user (nil when the kernel did not say): marked `simulated`, not
        /// counted, not signalled on the bus; it presses the asker's own key chords only.
        case simulated(by: UInt32?)
    }

    /// The live stream's detector after an event, and the sensor it came from.
    struct LiveState: Sendable, Equatable {
        var shaking: Bool
        var counters: ShakeDetector.Counters
        /// The sensor as the log names it (its IIO id, or the trace file), if known.
        var sensor: String?
    }

    var event: ShakeEvent
    /// The event's number: one sequence for every event of the run, live or simulated, given by the path alone.
    var seq: Int
    var origin: Origin

    var isSimulated: Bool {
        if case .simulated = origin { return true }
        return false
    }
}

/// A part of the daemon that events reach: the socket server, the shake object on D-Bus, standard output and the
/// log, the status board, the key chords, the relay to iio-sensor-proxy. Each gets every event and every report
/// of the source, and keeps what concerns it.
///
/// Both are called with the path's order kept (events one at a time, in the order of their numbers), from the
/// thread that published: they must hand slow work on (to a loop, a queue, a thread of their own) and return,
/// never block, and never publish themselves.
protocol EventConsumer: Sendable {
    /// An event, numbered.
    func consume(_ event: PublishedEvent)
    /// What the live stream's source reported besides events: a sample, the sensor in use, waiting or gone.
    func consume(_ report: SourceEvent)
}

extension EventConsumer {
    func consume(_ report: SourceEvent) {}
}

/// The one way out of the daemon for events: numbers each event (captured, replayed or simulated) in one
/// sequence and hands it to every consumer, in the order they were registered (``Daemon`` builds the list), and
/// passes the source's reports (samples, sensor changes) on to them.
///
/// Numbering and handing over happen under one lock, so that every consumer sees the events in the order of
/// their numbers, whichever thread published them (the source's thread, the simulate service's task).
final class EventPath: Sendable {
    let consumers: [any EventConsumer]
    /// The number of the last event published; held while an event is numbered and handed over: the consumers'
    /// order.
    private let last = Locked(0)

    init(consumers: [any EventConsumer]) {
        self.consumers = consumers
    }

    /// Numbers `event` and hands it to every consumer.
    /// - Returns: the event as the consumers got it.
    @discardableResult
    func publish(_ event: ShakeEvent, origin: PublishedEvent.Origin) -> PublishedEvent {
        last.withLock { last in
            last += 1
            let published = PublishedEvent(event: event, seq: last, origin: origin)
            for consumer in consumers { consumer.consume(published) }
            return published
        }
    }

    /// Hands a report of the live stream's source to every consumer (only the source's thread reports).
    func report(_ report: SourceEvent) {
        for consumer in consumers { consumer.consume(report) }
    }
}
