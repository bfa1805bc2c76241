// SPDX-License-Identifier: Apache-2.0
/// A sensor's failure that comes back at every try, said once when it begins, at most once an interval as a
/// reminder with a count, and once when it ends. No I/O and no clock: the caller passes the time and logs what
/// it is told.
///
/// A still sensor read through iiod that reports on change only (a HID sensor hub) sends nothing: each read fails
/// at the context's timeout (``RemoteRead/timeout``), "Connection timed out", and the capture connects again,
/// every few seconds for as long as the sensor lies still. Each of those failures is the same news; logged every
/// time they filled the journal. A failure of another kind is news again and begins anew; data from the sensor
/// ends it. (The socket's refusals are limited the same way by `LogLimiter`, per kind and interval.)
public struct RepeatedFailure: Sendable {
    /// What to log of a failure.
    public enum Notice: Sendable, Hashable {
        /// The first of its kind: log it in full.
        case began
        /// The same again within the interval: log it at debug level only.
        case again
        /// The same again, the interval since the last line over: log a reminder, with the failures since the
        /// first and the seconds since it.
        case reminder(failures: Int, seconds: Double)
    }

    /// How the failures ended, for the line that says so: how many there were and over how long.
    public struct Ended: Sendable, Hashable {
        public var failures: Int
        public var seconds: Double

        public init(failures: Int, seconds: Double) {
            self.failures = failures
            self.seconds = seconds
        }
    }

    /// The least time between two lines of one lasting failure, seconds.
    public let interval: Double
    private var kind: String?
    private var began = 0.0
    private var lastLine = 0.0
    private var failures = 0

    /// The interval the capture uses: a line every 10 minutes at most while a sensor keeps failing alike.
    public static let reminderInterval = 600.0

    public init(interval: Double = RepeatedFailure.reminderInterval) {
        self.interval = interval
    }

    /// Whether the failure has come back at least once: the capture's own lines at each new try (the sensor
    /// chosen, capture started, the sensor left as found) are then the same news too, for debug level.
    public var isRepeating: Bool { failures > 1 }

    /// A failure of `kind` (what the log names: the operation and the error) at `now`, seconds.
    public mutating func failed(_ kind: String, now: Double) -> Notice {
        guard kind == self.kind else {
            self.kind = kind
            began = now
            lastLine = now
            failures = 1
            return .began
        }
        failures += 1
        guard now - lastLine >= interval else { return .again }
        lastLine = now
        return .reminder(failures: failures, seconds: now - began)
    }

    /// Data came from the sensor at `now`: the failures are over. - Returns: how they ended when some were held
    /// back (a failure that came back); nil when there were none or a single one, whose own line said it all.
    public mutating func recovered(now: Double) -> Ended? {
        defer {
            kind = nil
            failures = 0
        }
        guard failures > 1 else { return nil }
        return Ended(failures: failures, seconds: now - began)
    }
}
