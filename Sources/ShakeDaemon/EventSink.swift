// SPDX-License-Identifier: Apache-2.0
import Logging
import NumberFormat
import ShakeDetection
import ShakeProtocol

/// Where every event goes besides the clients: a JSON line on standard output (with `--print-events`, through
/// its own bounded queue and writer: a reader of that pipe who stops reading holds nobody up), and the log.
struct EventSink: Sendable {
    /// Standard output's writer, with `--print-events`.
    let output: StandardOutputWriter?
    let logger: Logger

    init(output: StandardOutputWriter?, logger: Logger) {
        self.output = output
        self.logger = logger
    }

    /// Prints and logs the event. Its number, the sensor it came from and whether it was simulated become log
    /// metadata, so the journal can be searched by them (SEQ=, SENSOR=, PHASE=).
    func emit(_ event: ShakeEvent, seq: Int, sensor: String? = nil, simulated: Bool = false) {
        if let output {
            var writer = JSONObjectWriter()
            event.write(to: &writer)
            if simulated { writer.add("simulated", true) }
            output.write(Array((writer.result + "\n").utf8))
        }
        var logger = self.logger
        logger[metadataKey: "phase"] = "\(event.phase.rawValue)"
        logger[metadataKey: "seq"] = "\(seq)"
        if let sensor { logger[metadataKey: "sensor"] = "\(sensor)" }
        if simulated { logger[metadataKey: "simulated"] = "true" }
        switch event {
        case .began(let time):
            logger.info("shake began", metadata: ["time": "\(DecimalText.format(time, decimals: 3))"])
        case .ended(let summary):
            logger.info(
                "shake ended",
                metadata: [
                    "time": "\(DecimalText.format(summary.time, decimals: 3))",
                    "duration": "\(DecimalText.format(summary.duration, decimals: 3))",
                    "axis": "\(summary.axis.rawValue)", "reversals": "\(summary.reversals)",
                ])
        case .cancelled(let time, _, let reason, _):
            logger.info(
                "shake cancelled",
                metadata: ["time": "\(DecimalText.format(time, decimals: 3))", "reason": "\(reason.rawValue)"])
        }
    }
}

/// Every event is printed and logged, a live one with its sensor, a simulated one marked so.
extension EventSink: EventConsumer {
    func consume(_ event: PublishedEvent) {
        switch event.origin {
        case .live(let live): emit(event.event, seq: event.seq, sensor: live.sensor)
        case .simulated: emit(event.event, seq: event.seq, simulated: true)
        }
    }
}
