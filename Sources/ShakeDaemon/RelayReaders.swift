// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import IIOModel
import IIOSensor
import Logging
import NumberFormat
import UInput

#if canImport(Glibc)
    import Glibc
#endif

/// Whether anything reads the relay's input device, followed from the opens of its evdev node (``RelayDemand``
/// decides, ``InputNodeWatch`` counts), and the capture told: while nothing reads it, the relay does not keep the
/// sensor on. The watch is drained at most once a second from the source's thread while it captures (no wake-up
/// of its own), and before each read while only the relay reads; it is waited on by that thread while capture is
/// off for this reason alone, and by a read planned at the next open. The opens seen as they happen time
/// iio-sensor-proxy's polls, just before which those reads come (``PollPhase``, as ``RelayReadTiming``).
final class RelayReaders: Sendable {
    private struct State: Sendable {
        /// The relay's input device (`input7`) while it exists.
        var systemName: String?
        var watch: InputNodeWatch?
        var demand: RelayDemand?
        var nextCheck = -Double.infinity
        /// When the device was made, and why it could not be watched yet.
        var madeAt = 0.0
        var unwatchable: String?
        var unwatchableNoted = false
        /// When capture reads for the relay alone: the phase of iio-sensor-proxy's opens.
        var phase = PollPhase()
        /// Opens and closes drained for the phase, not yet seen by ``RelayDemand``.
        var opens = 0
        var closes = 0
        /// Opens drained since the last one timed: the polls between two timed opens.
        var opensSinceTimed = 0
        /// Opens drained since the phase was last told of them (``PollPhase/countedBeforeRead(opens:)``).
        var opensUntold = 0
    }

    /// Seconds after the device was made past which a node that still cannot be watched is logged (udev gives
    /// the daemon the node a moment after it appears).
    static let watchGrace = 5.0

    private let state = Locked(State())
    private let capture: CaptureSwitch
    private let logger: Logger
    private let monotonic: @Sendable () -> Double

    /// Seconds between two looks at the watch while capturing.
    static let checkInterval = 1.0

    init(
        capture: CaptureSwitch, logger: Logger,
        monotonic: @escaping @Sendable () -> Double = SensorSource.monotonicSeconds
    ) {
        self.capture = capture
        self.logger = logger
        self.monotonic = monotonic
    }

    /// The relay's device was made: read until ``RelayDemand/timeout`` passes without an open.
    func deviceMade(systemName: String?) {
        let now = monotonic()
        state.withLock { state in
            state.systemName = systemName
            state.watch = nil
            state.demand = RelayDemand(createdAt: now)
            state.madeAt = now
            state.unwatchable = nil
            state.unwatchableNoted = false
            state.nextCheck = -Double.infinity
            state.phase.forget()
            state.opensSinceTimed = 0
            state.opensUntold = 0
            Self.watch(&state)
        }
        capture.update { $0.relayReadChanged(true) }
    }

    /// The relay's device is gone: nothing to follow.
    func deviceRemoved() {
        state.withLock { state in
            state.systemName = nil
            state.watch = nil
            state.demand = nil
            state.phase.forget()
        }
        capture.update { $0.relayReadChanged(true) }
    }

    /// Looks at the opens since the last look, at most once a ``checkInterval`` unless `now` is asked for.
    func check(now force: Bool = false) {
        let now = monotonic()
        let outcome: (change: RelayDemand.Change?, unwatchable: String?, path: String?) = state.withLock { state in
            guard state.demand != nil, force || now >= state.nextCheck else { return (nil, nil, nil) }
            state.nextCheck = now + Self.checkInterval
            if state.watch == nil {
                // udev gives the daemon the node a moment after it appears.
                Self.watch(&state)
                if state.watch == nil {
                    guard !state.unwatchableNoted, now - state.madeAt >= Self.watchGrace else { return (nil, nil, nil) }
                    state.unwatchableNoted = true
                    return (nil, state.unwatchable ?? "no input device", nil)
                }
                // Watched from now: what came before is not known, so the device counts as just made.
                state.demand = RelayDemand(createdAt: now)
                return (nil, nil, state.watch?.path)
            }
            guard state.watch != nil else { return (nil, nil, nil) }
            Self.drain(&state)
            defer { (state.opens, state.closes) = (0, 0) }
            let change = state.demand?.observed(opens: state.opens, closes: state.closes, at: now)
            if change == .unread { state.phase.forget() }
            return (change, nil, nil)
        }
        if let why = outcome.unwatchable {
            logger.warning(
                "cannot follow the opens of the relay's input device; the relay keeps the sensor on while it exists",
                metadata: ["error": "\(why)"])
        }
        if let path = outcome.path {
            logger.info("following the opens of the relay's input device", metadata: ["node": "\(path)"])
        }
        switch outcome.change {
        case .unread:
            logger.info(
                "nothing has read the relay for 3 s (no client claims the accelerometer from iio-sensor-proxy): the sensor is off for it until something does"
            )
            capture.update { $0.relayReadChanged(false) }
        case .read:
            logger.info("the relay is read again: the sensor is on for it")
            capture.update { $0.relayReadChanged(true) }
        case nil:
            break
        }
    }

    /// For the source's thread while capture is off: waits until `idle` is signalled, or the relay's node is
    /// opened or closed (then looks at it). Without a watch, waits on `idle` alone.
    /// - Returns: true when `idle` was signalled.
    func wait(idle: Wakeup) -> Bool {
        guard let watch = state.withLock({ $0.demand?.isRead == false ? $0.watch : nil }) else {
            return idle.sleep(for: .seconds(3600))
        }
        var fds = [
            pollfd(fd: idle.fileDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: watch.fileDescriptor, events: Int16(POLLIN), revents: 0),
        ]
        let result = Readiness.wait(&fds, timeout: .seconds(3600))
        if idle.isSignalled { return true }
        if case .success(let ready) = result, ready > 0, fds[1].revents != 0 {
            // The claim's first open, timed as it happened: the phase of the polls to come.
            _ = watchReady(at: monotonic())
            check(now: true)
        }
        return idle.isSignalled
    }

    /// Adds what the watch holds to the opens and closes not yet seen by ``RelayDemand``.
    /// - Returns: the opens drained.
    @discardableResult
    private static func drain(_ state: inout State) -> Int {
        guard let watch = state.watch else { return 0 }
        let (opens, closes) = watch.drain()
        state.opens += opens
        state.closes += closes
        state.opensSinceTimed += opens
        state.opensUntold += opens
        return opens
    }

    private static func watch(_ state: inout State) {
        guard let name = state.systemName else {
            state.unwatchable = "the kernel did not name the relay's input device"
            return
        }
        do {
            state.watch = try InputNodeWatch(watching: name)
        } catch {
            state.unwatchable = "\(error)"
        }
    }
}

/// The relay's reads just before iio-sensor-proxy's polls (``PollPhase``), while the relay's node is watched and
/// read.
extension RelayReaders: RelayReadTiming {
    func nextRead(now: Double) -> (plan: PollPhase.Plan, watch: Int32?)? {
        let planned: (plan: PollPhase.Plan, watch: Int32, opens: Int, phase: PollPhase)? = state.withLock { state in
            guard state.demand?.isRead == true, let watch = state.watch else { return nil }
            // What came before the wait is not the open it waits for; it tells whether the last read's poll came
            // before its reading was written.
            Self.drain(&state)
            let opens = state.opensUntold
            state.opensUntold = 0
            return (state.phase.plan(now: now, opens: opens), watch.fileDescriptor, opens, state.phase)
        }
        guard let planned else { return nil }
        logger.debug(
            "relay read planned",
            metadata: [
                "now": "\(DecimalText.format(now, decimals: 3))", "plan": "\(Self.describe(planned.plan))",
                "opens": "\(planned.opens)", "period": "\(DecimalText.format(planned.phase.period, decimals: 3))",
                "lead": "\(DecimalText.format(planned.phase.lead, decimals: 3))", "lost": "\(planned.phase.lost)",
                "last_open": "\(planned.phase.lastOpen.map { DecimalText.format($0, decimals: 3) } ?? "none")",
            ])
        return (planned.plan, planned.watch)
    }

    func watchReady(at time: Double) -> Bool {
        let timed: (polls: Int?, period: Double)? = state.withLock { state in
            guard Self.drain(&state) > 0 else { return nil }
            let polls = state.phase.lastOpen == nil ? nil : state.opensSinceTimed
            state.phase.opened(at: time, polls: polls)
            state.opensSinceTimed = 0
            state.opensUntold = 0
            return (polls, state.phase.period)
        }
        guard let timed else { return false }
        logger.debug(
            "relay node opened",
            metadata: [
                "at": "\(DecimalText.format(time, decimals: 3))", "polls": "\(timed.polls.map { "\($0)" } ?? "none")",
                "period": "\(DecimalText.format(timed.period, decimals: 3))",
            ])
        return true
    }

    func willRead() {
        let lost: Bool = state.withLock { state in
            Self.drain(&state)
            let wasLost = state.phase.lost
            state.phase.countedBeforeRead(opens: state.opensUntold)
            state.opensUntold = 0
            return state.phase.lost && !wasLost
        }
        if lost { logger.debug("relay read after its poll: the next read at the open") }
    }

    /// A plan as the debug log shows it.
    private static func describe(_ plan: PollPhase.Plan) -> String {
        switch plan {
        case .read(let at): "read at \(DecimalText.format(at, decimals: 3))"
        case .readAtOpen(let until): "read at the open, until \(DecimalText.format(until, decimals: 3))"
        }
    }
}
