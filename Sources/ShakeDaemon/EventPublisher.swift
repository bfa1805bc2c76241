import ShakeDetection
import ShakeServer

/// Where the detector's events and the samples go: the socket server (when there is one), standard output and
/// the log (``EventSink``), and the shake object on D-Bus (when there is one). The live stream's events are
/// numbered and counted in the status; a simulated shake's go to the socket and the sink only.
struct EventPublisher: Sendable {
    let server: ShakeServer?
    let sink: EventSink
    let bus: ShakeBus?
    let status: StatusBoard

    /// An event of the live stream (sensor or replay), with the detector's state after it.
    func publish(_ event: ShakeEvent, shaking: Bool, counters: ShakeDetector.Counters) {
        let seq = server?.publish(event)
        let (sensor, busSeq) = status.update { state in
            state.shaking = shaking
            state.counters = counters
            state.lastSeq = seq.map { UInt64(clamping: $0) } ?? state.lastSeq + 1
            return (state.sensor, state.lastSeq)
        }
        sink.emit(event, seq: seq, sensor: sensor.id ?? sensor.name)
        bus?.emit(event, seq: busSeq)
    }

    /// An event of a simulated shake: marked `simulated`, not counted, not signalled on the bus.
    func publishSimulated(_ event: ShakeEvent) {
        let seq = server?.publish(event, simulated: true)
        sink.emit(event, seq: seq, simulated: true)
    }

    /// A sample of the live stream, for the clients that stream samples.
    func publish(sample: Sample) {
        server?.publish(sample: sample)
    }
}
