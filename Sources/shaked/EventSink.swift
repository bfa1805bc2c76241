import Foundation
import Logging
import ShakeDetection

/// Where the detector's events go: JSON lines on standard output (with `--print-events`), and the log.
struct EventSink: Sendable {
    let printEvents: Bool
    let logger: Logger

    func emit(_ event: ShakeEvent, simulated: Bool = false) {
        if printEvents {
            var writer = JSONObjectWriter()
            event.write(to: &writer)
            if simulated { writer.add("simulated", true) }
            // One write per line: nothing is held back in a buffer. A closed standard output is not worth a
            // crash; the events still reach the log and the socket.
            try? FileHandle.standardOutput.write(contentsOf: Data((writer.result + "\n").utf8))
        }
        let logger: Logger = {
            guard simulated else { return self.logger }
            var logger = self.logger
            logger[metadataKey: "simulated"] = "true"
            return logger
        }()
        switch event {
        case .began(let time):
            logger.info("shake began", metadata: ["time": "\(JSONObjectWriter.format(time, decimals: 3))"])
        case .ended(let summary):
            logger.info(
                "shake ended",
                metadata: [
                    "time": "\(JSONObjectWriter.format(summary.time, decimals: 3))",
                    "duration": "\(JSONObjectWriter.format(summary.duration, decimals: 3))",
                    "axis": "\(summary.axis.rawValue)", "reversals": "\(summary.reversals)",
                ])
        case .cancelled(let time, _, let reason):
            logger.info(
                "shake cancelled",
                metadata: ["time": "\(JSONObjectWriter.format(time, decimals: 3))", "reason": "\(reason.rawValue)"])
        }
    }
}
