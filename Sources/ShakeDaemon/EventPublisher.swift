// SPDX-License-Identifier: Apache-2.0
import ShakeDetection
import ShakeServer

/// Where the detector's events and the samples go: the socket server (when there is one), standard output and
/// the log (``EventSink``), the shake object on D-Bus (when there is one) and the key chords subscribers asked for
/// (``KeyPresser``, with a server). The live stream's events are numbered and counted in the status; a simulated
/// shake's go to the socket, the sink and the key chords of the user who asked for it only.
struct EventPublisher: Sendable {
    let server: ShakeServer?
    let sink: EventSink
    let bus: ShakeBus?
    let status: StatusBoard
    let keys: KeyPresser?

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
        if let seq { keys?.published(event.phase, seq: seq, origin: .live) }
    }

    /// An event of a simulated shake asked for by `requester`: marked `simulated`, not counted, not signalled on
    /// the bus; it presses the requester's own key chords only.
    func publishSimulated(_ event: ShakeEvent, requester: UInt32?) {
        let seq = server?.publish(event, simulated: true)
        sink.emit(event, seq: seq, simulated: true)
        if let seq { keys?.published(event.phase, seq: seq, origin: .simulated(by: requester)) }
    }

    /// A sample of the live stream, for the clients that stream samples.
    func publish(sample: Sample) {
        server?.publish(sample: sample)
    }
}
