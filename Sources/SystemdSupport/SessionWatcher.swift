// SPDX-License-Identifier: Apache-2.0
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
/// One thread owns the connection, like ``BusObject``'s: it waits on the bus and a wake-up descriptor.
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
    /// The eventfd that wakes the thread; -1 once closed. Closed by `deinit` or a failed `init`, never by the
    /// thread, so that a wake-up never writes to a descriptor number reused since.
    private let wakeup: Mutex<Int32>
    private let stopping = Atomic<Bool>(false)
    private let finished = Mutex<Bool>(false)
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
        let descriptor = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        if descriptor < 0 {
            let code = errno
            connection.release()
            throw BusError(operation: "eventfd", code: code)
        }
        self.connection = connection
        wakeup = Mutex(descriptor)
        guard startThread(name: "shaked-sessions", { [self] in run(report, lost: lost) }) else {
            // No thread: nothing to stop, and nothing left for `deinit` to close.
            stopping.store(true, ordering: .releasing)
            finished.withLock { $0 = true }
            connection.release()
            closeWakeup()
            throw BusError(operation: "starting the sessions thread", code: EAGAIN)
        }
    }

    /// Stops following and waits for the thread to end (at once when the connection was lost and the thread
    /// has ended already).
    public func close() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wakeup.withLock { descriptor in
            guard descriptor >= 0 else { return }
            var one: UInt64 = 1
            _ = write(descriptor, &one, 8)
        }
        while !finished.withLock({ $0 }) { usleep(1000) }
    }

    deinit {
        close()
        closeWakeup()
    }

    private func closeWakeup() {
        wakeup.withLock { descriptor in
            if descriptor >= 0 { Glibc.close(descriptor) }
            descriptor = -1
        }
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
        let wakeup = self.wakeup.withLock { $0 }
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
            var timeout: UInt64 = 0
            _ = sd_bus_get_timeout(bus, &timeout)
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let current = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
            let milliseconds: Int32 =
                timeout == UInt64.max
                ? -1 : Int32(clamping: timeout <= current ? 0 : Int64((timeout - current + 999) / 1000))
            var descriptors = [
                pollfd(fd: sd_bus_get_fd(bus), events: Int16(truncatingIfNeeded: sd_bus_get_events(bus)), revents: 0),
                pollfd(fd: wakeup, events: Int16(POLLIN), revents: 0),
            ]
            if poll(&descriptors, 2, milliseconds) < 0, errno != EINTR {
                failure = BusError(operation: "waiting on the bus", code: errno)
                break
            }
            if descriptors[1].revents != 0 {
                var count: UInt64 = 0
                _ = Glibc.read(wakeup, &count, 8)
            }
        }
        connection.release()
        finished.withLock { $0 = true }
        if let failure {
            logger.warning(
                "the connection to the system bus was lost: capture no longer follows sessions",
                metadata: ["error": "\(failure)"])
            report(nil)
            lost(failure)
        }
    }
}
