// SPDX-License-Identifier: Apache-2.0
public import ShakeDetection

extension ShakeEvent {
    /// Writes the event's fields: `{"event":"shake","phase":"ended","time":3.02,"began":2.31,...}`.
    ///
    /// Callers add their own fields after these (a trace's `source`, the server's `seq` and `timestamp`).
    public func write(to writer: inout JSONObjectWriter) {
        writer.add("event", "shake")
        writer.add("phase", phase.rawValue)
        writer.add("time", time)
        switch self {
        case .began:
            break
        case .ended(let summary):
            writer.add("began", summary.began)
            writer.add("duration", summary.duration)
            writer.add("peak", summary.peak, decimals: 2)
            writer.add("axis", summary.axis.rawValue)
            writer.add("reversals", summary.reversals)
        case .cancelled(_, let began, let reason, let detail):
            writer.add("began", began)
            writer.add("reason", reason.rawValue)
            if let detail { writer.add("detail", detail.rawValue) }
        }
    }

    /// The event as one JSON object.
    public var json: String {
        var writer = JSONObjectWriter()
        write(to: &writer)
        return writer.result
    }
}
