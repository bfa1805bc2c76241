// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import ShakeConfig
import ShakeDetection
import ShakeServer
import SystemdSupport

/// The shake object on the system bus (`docs/dbus.md`). It owns the bus connection (a ``BusObject`` on a thread of
/// its own), the claims made through it (``BusClaims``, handed on to the capture gate) and the property values
/// last announced; it answers property reads from the ``StatusBoard`` to whoever `access.subscribe` allows, and
/// announces what changed there, and the shakes, to those ``BusClaims/audience`` names.
final class ShakeBus: Sendable {
    /// The well-known name, the object path and the interface. The project has no domain of its own, so the
    /// names follow freedesktop's rule for that case, a reversed code-hosting name; `1` is the interface's
    /// version (a change that breaks clients gets `Shake2`, beside this one).
    static let name = "io.github.shaked.Shake1"
    static let path = "/io/github/shaked/Shake1"
    static let interface = "io.github.shaked.Shake1"

    private let object = Locked<BusObject?>(nil)
    private let claims: Locked<BusClaims>
    /// The property values last announced.
    private let announced = Locked(BusProperties())
    private let capture: CaptureSwitch
    private let status: StatusBoard
    private let logger: Logger
    /// The log lines any client can cause as often as it likes, at most one of each kind an interval, with a
    /// count of the others (the socket's ``LogLimiter``).
    private let lines = Locked(LogLimiter<Line>(interval: ShakeBus.lineInterval))
    static let lineInterval = TimeAmount.seconds(10)
    /// The report of the lines counted, on an event loop's timer, scheduled only while some are counted (nothing
    /// wakes an idle daemon for it).
    private let countReport = Locked<Scheduled<Void>?>(nil)
    private let timers: any EventLoop = MultiThreadedEventLoopGroup.singleton.any()
    /// Word from the bus thread that the connection was lost.
    private let losses = AsyncStream.makeStream(of: BusError.self, bufferingPolicy: .bufferingNewest(1))

    private init(rule: PeerRule, capture: CaptureSwitch, status: StatusBoard, logger: Logger) {
        claims = Locked(BusClaims(rule: rule))
        self.capture = capture
        self.status = status
        self.logger = logger
    }

    enum Start {
        /// `dbus.mode: off`, or `auto` without a bus.
        case none
        case offered(ShakeBus)
        /// `dbus.mode: on`, and the bus cannot be had: the daemon stops.
        case failed
    }

    /// Connects to the system bus (`DBUS_SYSTEM_BUS_ADDRESS` when set) and offers the object, as `dbus.mode`
    /// says. With `auto`, a bus that cannot be had is a log line; with `on`, it stops the daemon.
    /// - Parameter rule: who may claim the sensor (`access.subscribe`).
    static func start(
        mode: ShakedConfiguration.DBusSection.Mode, rule: PeerRule, capture: CaptureSwitch, status: StatusBoard,
        logger: Logger
    ) -> Start {
        guard mode != .off else { return .none }
        let bus = ShakeBus(rule: rule, capture: capture, status: status, logger: logger)
        do {
            try bus.connect()
        } catch {
            if mode == .on {
                logger.critical("cannot offer the shake object on the system bus", metadata: ["error": "\(error)"])
                return .failed
            }
            logger.notice("no D-Bus service: the system bus cannot be had", metadata: ["error": "\(error)"])
            return .none
        }
        logger.info("offering the shake object on the system bus", metadata: ["bus_name": "\(name)"])
        status.observe { [weak bus] in bus?.announce() }
        bus.announce()
        return .offered(bus)
    }

    private func connect() throws(BusError) {
        let made = try BusObject(
            address: nil, name: Self.name, path: Self.path, interface: Self.interface, handlers: handlers(),
            logger: logger)
        object.withLock { $0 = made }
    }

    private func handlers() -> BusObject.Handlers {
        BusObject.Handlers(
            mayRead: { [weak self] caller in self?.mayRead(caller) ?? false },
            bool: { [weak self] name in self?.status.current.busProperties.bool(name) },
            string: { [weak self] name in self?.status.current.busProperties.string(name) },
            call: { [weak self] method, caller in self?.call(method, caller) ?? false },
            nameGone: { [weak self] name in self?.left(name) },
            lost: { [weak self] error in self?.losses.continuation.yield(error) })
    }

    /// Until the group shuts down: when the bus is lost, the claims made through it are released, and the object
    /// is offered again as soon as the bus is back.
    func keepOffered() async {
        for await error in losses.stream.cancelOnGracefulShutdown() {
            object.withLock { $0 = nil }
            let dropped = claims.withLock { claims in
                let dropped = claims.busLost()
                for client in dropped { capture.update { $0.released(by: client) } }
                return dropped
            }
            logger.warning(
                "the system bus was lost: the shake object is off it, and its claims released, until it is back",
                metadata: ["error": "\(error)", "claims": "\(dropped.count)"])
            guard await BusRetry.reconnect(for: "dbus", logger: logger, { () throws(BusError) in try connect() })
            else { return }
            // Clients of the new connection read the properties afresh: what they see now is what was announced.
            let current = status.current.busProperties
            announced.withLock { $0 = current }
            logger.notice(
                "the system bus is back: offering the shake object again", metadata: ["bus_name": "\(Self.name)"])
        }
    }

    /// `Claim` and `Release`: allowed or refused by ``BusClaims``, and handed to the capture gate under the same
    /// lock, so that a reload's revocation cannot come between the two.
    private func call(_ method: String, _ caller: BusObject.Caller) -> Bool {
        let peer = BusClaims.peer(uid: caller.uid, groups: caller.groups)
        let outcome = claims.withLock { claims in
            let outcome = claims.call(method, client: caller.name, peer: peer)
            capture.update { gate in
                switch outcome {
                case .claimed(let client, let user): gate.claimed(by: client, user: user)
                case .released(let client): gate.released(by: client)
                case .refused: nil
                }
            }
            return outcome
        }
        var metadata = Self.metadata(caller)
        metadata["method"] = "\(method)"
        if outcome == .refused {
            log(.refusedCall, metadata)
            return false
        }
        log(.call, metadata)
        return true
    }

    /// `Get` and `GetAll`: whoever may subscribe may read.
    private func mayRead(_ caller: BusObject.Caller) -> Bool {
        let allowed = claims.withLock { $0.mayRead(BusClaims.peer(uid: caller.uid, groups: caller.groups)) }
        if !allowed { log(.refusedRead, Self.metadata(caller)) }
        return allowed
    }

    private static func metadata(_ caller: BusObject.Caller) -> Logger.Metadata {
        [
            "client": "\(caller.name)", "client_uid": "\(caller.uid)",
            "client_groups": "\(caller.groups.map(String.init).joined(separator: ","))",
        ]
    }

    /// A client left the bus: its claim, if any, is released.
    private func left(_ name: String) {
        let held = claims.withLock { claims in
            let held = claims.left(name)
            capture.update { $0.released(by: name) }
            return held
        }
        if held { log(.left, ["client": "\(name)"]) }
    }

    /// A reload changed `access.subscribe`: the claims of clients it no longer allows are dropped.
    func accessChanged(_ rule: PeerRule) {
        let revoked = claims.withLock { claims in
            let revoked = claims.ruleChanged(rule)
            for client in revoked { capture.update { $0.released(by: client) } }
            return revoked
        }
        for client in revoked {
            logger.notice("the access rules no longer allow a D-Bus client's claim", metadata: ["client": "\(client)"])
        }
    }

    /// Who hears the signals now: everyone, or the claimants alone (``BusClaims/audience``).
    private var recipients: BusObject.Recipients {
        switch claims.withLock({ $0.audience }) {
        case .everyone: .everyone
        case .claimants(let names): .only(names)
        }
    }

    /// Sends the `Shake` signal, then `PropertiesChanged` for what the event changed.
    func emit(_ event: ShakeEvent, seq: UInt64) {
        object.withLock { $0 }?.emit(BusObject.Shake(event, seq: seq), to: recipients)
        announce()
    }

    /// Sends `PropertiesChanged` for whatever changed since the last notice.
    func announce() {
        guard let object = object.withLock({ $0 }) else { return }
        let current = status.current.busProperties
        let changed = announced.withLock { announced in
            defer { announced = current }
            return current.changes(from: announced)
        }
        object.propertiesChanged(changed, to: recipients)
    }

    /// The log lines a client can cause as often as it likes.
    enum Line: String, Hashable {
        case call = "dbus_call"
        case refusedCall = "dbus_call_refused"
        case refusedRead = "dbus_read_refused"
        case left = "dbus_client_left"
    }

    /// Logs `line`, unless one of its kind was logged within the interval (then it is counted, and the count
    /// logged when the interval is over).
    private func log(_ line: Line, _ metadata: Logger.Metadata) {
        let now = NIODeadline.now()
        // The intervals that are over are counted out first, so that their counts are not lost to the new one.
        let (due, logNow) = lines.withLock { ($0.due(now: now), $0.shouldLog(line, now: now)) }
        report(due)
        guard logNow else {
            scheduleCountReport()
            return
        }
        switch line {
        case .call: logger.info("a D-Bus client called a method", metadata: metadata)
        case .refusedCall: logger.notice("a D-Bus call was refused by the access rules", metadata: metadata)
        case .refusedRead: logger.notice("a D-Bus property read was refused by the access rules", metadata: metadata)
        case .left: logger.info("a D-Bus client left the bus: its claim is released", metadata: metadata)
        }
    }

    private func report(_ due: [(kind: Line, suppressed: Int)]) {
        for (line, count) in due {
            logger.notice(
                "more of the same D-Bus log line, not logged one by one",
                metadata: [
                    "line": "\(line.rawValue)", "count": "\(count)",
                    "interval_s": "\(Self.lineInterval.nanoseconds / 1_000_000_000)",
                ])
        }
    }

    /// Logs the counts of the intervals that are over; with `all`, of every interval (the daemon stops).
    func reportCountedLines(all: Bool = false) {
        let now = NIODeadline.now() + (all ? Self.lineInterval : .zero)
        report(lines.withLock { $0.due(now: now) })
    }

    /// Logs the counts when the first interval with some ends, then schedules the next report if more are
    /// counted.
    private func scheduleCountReport() {
        countReport.withLock { scheduled in
            guard scheduled == nil, let due = lines.withLock({ $0.nextReport }) else { return }
            scheduled = timers.scheduleTask(deadline: due) { [self] in
                countReport.withLock { $0 = nil }
                reportCountedLines()
                scheduleCountReport()
            }
        }
    }

    /// Gives up the name and closes the connection; the log lines still counted are logged.
    func close() {
        object.withLock { $0 }?.close()
        countReport.withLock { scheduled in
            scheduled?.cancel()
            scheduled = nil
        }
        reportCountedLines(all: true)
    }
}

/// The shake object on the system bus: offered before the group starts (like the socket), offered again when the
/// bus comes back after it was lost, closed after the source ended, so that the last events still go out as
/// signals.
struct BusService: Service {
    let bus: ShakeBus

    func run() async {
        await bus.keepOffered()
        bus.close()
    }
}

/// The live stream's events become the `Shake` signal; simulated ones are not signalled.
extension ShakeBus: EventConsumer {
    func consume(_ event: PublishedEvent) {
        guard !event.isSimulated else { return }
        emit(event.event, seq: UInt64(clamping: event.seq))
    }
}
