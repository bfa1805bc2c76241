// SPDX-License-Identifier: Apache-2.0
import Logging
import NIOCore

// Warnings a client can cause as often as it likes, logged at most once an interval of each kind.
extension ShakeServer {
    /// How often a refusal or limit of one kind is logged at most (the others counted).
    static let warningInterval = TimeAmount.seconds(10)

    /// The refusals and limits that a client can cause as often as it likes: logged at most once an interval
    /// each (``LogLimiter``).
    enum Warning: String, Hashable {
        case tooManyClients = "too_many_clients"
        case tooManyForUser = "too_many_clients_of_one_user"
        case notAllowedToSubscribe = "not_allowed_to_subscribe"
        case refusedRequest = "refused_request"
        case badLines = "too_many_bad_lines"
        case notReading = "not_reading"
        case overBudget = "total_buffer"
    }

    /// Logs a refusal or a limit reached, unless one of its kind was logged within the interval (then it is
    /// counted, and the count logged at the interval's end).
    func warn(_ warning: Warning, metadata: Logger.Metadata) {
        guard loop.value.warnings.shouldLog(warning, now: .now()) else {
            scheduleWarningsReport()
            return
        }
        switch warning {
        case .tooManyClients: logger.warning("refused a client: too many clients", metadata: metadata)
        case .tooManyForUser: logger.warning("refused a client: too many clients of one user", metadata: metadata)
        case .notAllowedToSubscribe: logger.warning("refused a client: not allowed to subscribe", metadata: metadata)
        case .refusedRequest: logger.warning("refused a request", metadata: metadata)
        case .badLines: logger.warning("disconnected a client that kept sending bad lines", metadata: metadata)
        case .notReading: logger.warning("disconnected a client that does not read", metadata: metadata)
        case .overBudget: logger.warning("over the buffer budget for all clients", metadata: metadata)
        }
    }

    /// Logs the counts when the first interval with some ends, then schedules the next report if more are
    /// counted: a timer only while there is something to count out.
    private func scheduleWarningsReport() {
        guard loop.value.warningsTask == nil, let due = loop.value.warnings.nextReport else { return }
        loop.value.warningsTask = eventLoop.scheduleTask(deadline: due) { [self] in
            loop.value.warningsTask = nil
            logSuppressedWarnings()
            scheduleWarningsReport()
        }
    }

    func logSuppressedWarnings(all: Bool = false) {
        let now: NIODeadline = .now() + (all ? Self.warningInterval : .zero)
        for (kind, count) in loop.value.warnings.due(now: now) {
            logger.warning(
                "more of the same warning, not logged one by one",
                metadata: [
                    "warning": "\(kind.rawValue)", "count": "\(count)",
                    "interval_s": "\(Self.warningInterval.nanoseconds / 1_000_000_000)",
                ])
        }
    }
}
