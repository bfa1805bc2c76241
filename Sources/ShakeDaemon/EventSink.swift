// SPDX-License-Identifier: Apache-2.0
import Glibc
import Logging
import NumberFormat
import ShakeDetection
import ShakeProtocol
import Synchronization

/// Where the detector's events go: JSON lines on standard output (with `--print-events`), and the log.
struct EventSink: Sendable {
    let printEvents: Bool
    let logger: Logger
    /// Set once standard output failed (a reader that went away): events are no longer printed, which is said
    /// once in the log instead of failing at every event.
    private let output = OutputState()

    private final class OutputState: Sendable {
        let failed = Atomic<Bool>(false)
    }

    init(printEvents: Bool, logger: Logger) {
        self.printEvents = printEvents
        self.logger = logger
    }

    /// Writes the event; `seq` is its number on the socket (when there is one), `sensor` where it came from.
    /// Both become log metadata, so the journal can be searched by them (SEQ=, SENSOR=, PHASE=).
    func emit(_ event: ShakeEvent, seq: Int? = nil, sensor: String? = nil, simulated: Bool = false) {
        if printEvents && !output.failed.load(ordering: .relaxed) {
            var writer = JSONObjectWriter()
            event.write(to: &writer)
            if simulated { writer.add("simulated", true) }
            // One write per line: nothing is held back in a buffer. A closed standard output is not worth a
            // crash; the events still reach the log and the socket.
            do {
                try StandardOutput.write(Array((writer.result + "\n").utf8))
            } catch {
                if !output.failed.exchange(true, ordering: .relaxed) {
                    logger.warning(
                        "standard output failed: events are no longer printed", metadata: ["error": "\(error)"])
                }
            }
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

/// Standard output written straight with `write(2)`: every byte, or the error.
enum StandardOutput {
    struct Failure: Error, CustomStringConvertible {
        var errno: Int32
        var description: String { String(cString: strerror(errno)) }
    }

    static func write(_ bytes: [UInt8]) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes {
                Glibc.write(STDOUT_FILENO, $0.baseAddress! + offset, $0.count - offset)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(errno: errno)
            }
            offset += count
        }
    }
}
