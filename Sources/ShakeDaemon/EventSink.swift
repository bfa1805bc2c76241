import Foundation
import Logging
import NumberFormat
import ShakeDetection
import ShakeProtocol

/// Where the detector's events go: JSON lines on standard output (with `--print-events`), and the log.
struct EventSink: Sendable {
    let printEvents: Bool
    let logger: Logger

    /// Writes the event; `seq` is its number on the socket (when there is one), `sensor` where it came from.
    /// Both become log metadata, so the journal can be searched by them (SEQ=, SENSOR=, PHASE=).
    func emit(_ event: ShakeEvent, seq: Int? = nil, sensor: String? = nil, simulated: Bool = false) {
        if printEvents {
            var writer = JSONObjectWriter()
            event.write(to: &writer)
            if simulated { writer.add("simulated", true) }
            // One write per line: nothing is held back in a buffer. A closed standard output is not worth a
            // crash; the events still reach the log and the socket.
            try? FileHandle.standardOutput.write(contentsOf: Data((writer.result + "\n").utf8))
        }
        var logger = self.logger
        logger[metadataKey: "phase"] = "\(event.phase.rawValue)"
        if let seq { logger[metadataKey: "seq"] = "\(seq)" }
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
