// SPDX-License-Identifier: Apache-2.0
public import NIOCore

/// Warnings that a client can cause as often as it likes (refusals, limits reached), logged at most once per
/// interval for each kind, with a count of the others. No I/O: the server logs what it returns.
///
/// The first warning of a kind is logged at once; the ones that follow within the interval are only counted, and
/// when the interval is over ``due(now:)`` returns the count, to be logged as one line. A flood of refusals thus
/// writes two lines an interval, not one a request, and journald's rate limit is left for the daemon's other
/// messages. The socket server and the D-Bus object both use it.
public struct LogLimiter<Kind: Hashable & Sendable>: Sendable {
    public let interval: TimeAmount
    private var windows: [Kind: (start: NIODeadline, suppressed: Int)] = [:]

    public init(interval: TimeAmount) {
        self.interval = interval
    }

    /// Records a warning of `kind`. - Returns: whether to log it (false: it is counted instead).
    public mutating func shouldLog(_ kind: Kind, now: NIODeadline) -> Bool {
        if var window = windows[kind], now - window.start < interval {
            window.suppressed += 1
            windows[kind] = window
            return false
        }
        windows[kind] = (now, 0)
        return true
    }

    /// When the first interval that has warnings counted ends: the time ``due(now:)`` has a count to give. Nil
    /// while nothing is counted, so that a timer for the counts runs only while there are some (a warning logged
    /// at once leaves nothing to report; its interval simply lapses).
    public var nextReport: NIODeadline? {
        windows.values.lazy.filter { $0.suppressed > 0 }.map { $0.start + interval }.min()
    }

    /// The kinds whose interval is over, with how many warnings of each were counted instead of logged (those
    /// with none are left out). Their intervals end: the next warning of the kind is logged at once.
    public mutating func due(now: NIODeadline) -> [(kind: Kind, suppressed: Int)] {
        var result: [(kind: Kind, suppressed: Int)] = []
        for (kind, window) in windows where now - window.start >= interval {
            windows[kind] = nil
            if window.suppressed > 0 { result.append((kind, window.suppressed)) }
        }
        return result
    }
}
