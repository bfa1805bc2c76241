// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import CSystemd
public import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Follows logind's sessions on the system bus (org.freedesktop.login1, through sd-bus) and reports the users
/// who have an active, unlocked session: `Active` and not `LockedHint`, which screen lockers set. Sessions are read
/// again whenever one comes or goes, a session's properties change, or logind appears or leaves.
///
/// One thread owns the connection (a ``BlockingThread``, `shaked-sessions`), like ``BusObject``'s: it waits on the
/// bus and a ``Wakeup``.
public final class SessionWatcher: Sendable {
    /// The users with an active, unlocked session; nil while logind cannot be asked.
    public typealias Report = @Sendable (Set<UInt32>?) -> Void

    /// Who is there, as logind says.
    public struct Presence: Sendable, Hashable {
        /// The users with an active, unlocked session anywhere: logind calls every session without a seat (an
        /// ssh login, a `machinectl shell`) active.
        public var users: Set<UInt32>
        /// The user with the active, unlocked session of seat0, the seat that input devices without a seat of
        /// their own (a uinput keyboard) belong to: the one a virtual keyboard types to. At most one user,
        /// except while logind switches.
        public var atSeat0: Set<UInt32>

        public init(users: Set<UInt32>, atSeat0: Set<UInt32>) {
            self.users = users
            self.atSeat0 = atSeat0
        }
    }

    private let connection: Connection
    /// Rung to stop the thread.
    private let wakeup = Wakeup()
    private let stopping = Atomic<Bool>(false)
    /// The watcher's thread, once started.
    private let thread = Locked<BlockingThread?>(nil)
    private let logger: Logger

    /// The connection and the flag the match callback raises. Used by the watcher's thread only once it runs;
    /// freed by the thread as it ends, or by a failed `init`.
    private struct Connection: @unchecked Sendable {
        let bus: OpaquePointer
        let changed: UnsafeMutablePointer<Int32>

        func release() {
            sd_bus_flush_close_unref(bus)
            changed.deallocate()
        }
    }

    /// Connects and starts following; `report` is called on the watcher's thread with the first reading and
    /// every change. Whatever fails releases what was made before it, here.
    /// - Parameters:
    ///   - address: a bus address; nil for the system bus (`DBUS_SYSTEM_BUS_ADDRESS` when set).
    ///   - lost: called once, last, on the watcher's thread, when the connection to the bus is lost (after a
    ///     last `report(nil)`); the thread has ended.
    /// - Throws: ``BusError`` when the bus cannot be reached.
    public convenience init(
        address: String? = nil, logger: Logger, report: @escaping Report,
        lost: @escaping @Sendable (BusError) -> Void = { _ in }
    ) throws(BusError) {
        try self.init(address: address, logger: logger, presence: { report($0?.users) }, lost: lost)
    }

    /// Connects and starts following; `presence` is called on the watcher's thread with the first reading and
    /// every change (nil while logind cannot be asked). As ``init(address:logger:report:lost:)`` otherwise.
    public init(
        address: String? = nil, logger: Logger, presence report: @escaping @Sendable (Presence?) -> Void,
        lost: @escaping @Sendable (BusError) -> Void = { _ in }
    ) throws(BusError) {
        self.logger = logger
        let bus = try BusObject.connect(address)
        let changed = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        changed.initialize(to: 1)
        let connection = Connection(bus: bus, changed: changed)
        let result = shaked_login_watch(
            bus,
            { _, context, _ in
                context?.assumingMemoryBound(to: Int32.self).pointee = 1
                return 0
            }, changed)
        if result < 0 {
            connection.release()
            throw BusError(operation: "watching logind's sessions", code: -result)
        }
        if wakeup.fileDescriptor < 0 {
            connection.release()
            throw BusError(operation: "eventfd", code: EMFILE)
        }
        self.connection = connection
        guard let thread = BlockingThread.start(name: "shaked-sessions", { [self] in run(report, lost: lost) }) else {
            // No thread: nothing to stop.
            stopping.store(true, ordering: .releasing)
            connection.release()
            throw BusError(operation: "starting the sessions thread", code: EAGAIN)
        }
        self.thread.withLock { $0 = thread }
    }

    /// Stops following and waits for the thread to end (at once when the connection was lost and the thread
    /// has ended already, or when called on the watcher's thread, by a handler).
    public func close() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wakeup.signal()
        thread.withLock { $0 }?.join()
    }

    deinit {
        close()
    }

    /// The users with an active, unlocked session, or nil when logind does not answer.
    private static func read(_ bus: OpaquePointer) -> Presence? {
        final class Sessions {
            var present = Presence(users: [], atSeat0: [])
        }
        let sessions = Sessions()
        let result = withExtendedLifetime(sessions) {
            shaked_login_sessions(
                bus,
                { context, uid, active, locked, seat0 in
                    guard let context, active != 0 && locked == 0 else { return }
                    let sessions = Unmanaged<Sessions>.fromOpaque(context).takeUnretainedValue()
                    sessions.present.users.insert(uid)
                    if seat0 != 0 { sessions.present.atSeat0.insert(uid) }
                }, Unmanaged.passUnretained(sessions).toOpaque())
        }
        return result < 0 ? nil : sessions.present
    }

    private func run(_ report: @Sendable (Presence?) -> Void, lost: @Sendable (BusError) -> Void) {
        let bus = connection.bus
        var last: Presence?? = .none
        var failure: BusError?
        while !stopping.load(ordering: .acquiring) {
            var processed: Int32
            repeat { processed = sd_bus_process(bus, nil) } while processed > 0
            if processed < 0 || sd_bus_is_open(bus) <= 0 {
                failure = BusError(
                    operation: "the connection to the bus", code: processed < 0 ? -processed : ECONNRESET)
                break
            }
            if connection.changed.pointee != 0 {
                connection.changed.pointee = 0
                let present = Self.read(bus)
                if last != .some(present) {
                    if present == nil {
                        logger.notice("logind does not answer: capture does not follow sessions until it does")
                    }
                    last = .some(present)
                    report(present)
                }
                continue
            }
            var descriptors = [
                pollfd(fd: sd_bus_get_fd(bus), events: Int16(truncatingIfNeeded: sd_bus_get_events(bus)), revents: 0),
                pollfd(fd: wakeup.fileDescriptor, events: Int16(POLLIN), revents: 0),
            ]
            if case .failure(let error) = Readiness.wait(&descriptors, timeout: BusObject.timeout(bus)) {
                failure = BusError(operation: "waiting on the bus", code: error.rawValue)
                break
            }
        }
        connection.release()
        if let failure {
            logger.warning(
                "the connection to the system bus was lost: capture no longer follows sessions",
                metadata: ["error": "\(failure)"])
            report(nil)
            lost(failure)
        }
    }
}
