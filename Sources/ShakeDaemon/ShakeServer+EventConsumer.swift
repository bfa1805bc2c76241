// SPDX-License-Identifier: Apache-2.0
import IIOSensor
import ShakeServer

/// The socket's subscribers get every event, a simulated one marked so, with the path's number; the sample
/// streams get the live stream's samples.
extension ShakeServer: EventConsumer {
    func consume(_ event: PublishedEvent) {
        publish(event.event, seq: event.seq, simulated: event.isSimulated)
    }

    func consume(_ report: SourceEvent) {
        if case .sample(let sample) = report { publish(sample: sample) }
    }
}
