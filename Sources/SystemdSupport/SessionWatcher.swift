import CSystemd
import Foundation
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

    private let connection: Connection
    private let wakeup: Int32
    private let stopping = Atomic<Bool>(false)
    private let finished = Mutex<Bool>(false)
    private let logger: Logger

    /// The connection and the flag the match callback raises. Used by the watcher's thread only once it runs.
    private struct Connection: @unchecked Sendable {
        let bus: OpaquePointer
        let changed: UnsafeMutablePointer<Int32>
    }

    /// Connects and starts following; `report` is called on the watcher's thread with the first reading and
    /// every change.
    /// - Parameter address: a bus address; nil for the system bus (`DBUS_SYSTEM_BUS_ADDRESS` when set).
    /// - Throws: ``BusError`` when the bus cannot be reached.
    public init(address: String? = nil, logger: Logger, report: @escaping Report) throws(BusError) {
        self.logger = logger
        var bus: OpaquePointer?
        if let address {
            if let result = Optional(sd_bus_new(&bus)), result < 0 {
                throw BusError(operation: "sd_bus_new", code: -result)
            }
            _ = sd_bus_set_address(bus, address)
            _ = sd_bus_set_bus_client(bus, 1)
            if let result = Optional(sd_bus_start(bus)), result < 0 {
                sd_bus_unref(bus)
                throw BusError(operation: "connecting to \(address)", code: -result)
            }
        } else if let result = Optional(sd_bus_open_system(&bus)), result < 0 {
            throw BusError(operation: "connecting to the system bus", code: -result)
        }
        guard let bus else { throw BusError(operation: "sd_bus", code: ENOMEM) }
        let changed = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        changed.initialize(to: 1)
        let result = shaked_login_watch(
            bus,
            { _, context, _ in
                context?.assumingMemoryBound(to: Int32.self).pointee = 1
                return 0
            }, changed)
        if result < 0 {
            sd_bus_flush_close_unref(bus)
            changed.deallocate()
            throw BusError(operation: "watching logind's sessions", code: -result)
        }
        connection = Connection(bus: bus, changed: changed)
        wakeup = eventfd(0, Int32(EFD_CLOEXEC) | Int32(EFD_NONBLOCK))
        let thread = Thread { [self] in run(report) }
        thread.name = "shaked-sessions"
        thread.start()
    }

    /// Stops following and waits for the thread to end.
    public func close() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var one: UInt64 = 1
        _ = write(wakeup, &one, 8)
        while !finished.withLock({ $0 }) { usleep(1000) }
    }

    deinit { close() }

    /// The users with an active, unlocked session, or nil when logind does not answer.
    private static func read(_ bus: OpaquePointer) -> Set<UInt32>? {
        final class Sessions {
            var present = Set<UInt32>()
        }
        let sessions = Sessions()
        let result = withExtendedLifetime(sessions) {
            shaked_login_sessions(
                bus,
                { context, uid, active, locked in
                    guard let context else { return }
                    let sessions = Unmanaged<Sessions>.fromOpaque(context).takeUnretainedValue()
                    if active != 0 && locked == 0 { sessions.present.insert(uid) }
                }, Unmanaged.passUnretained(sessions).toOpaque())
        }
        return result < 0 ? nil : sessions.present
    }

    private func run(_ report: Report) {
        let bus = connection.bus
        var last: Set<UInt32>?? = .none
        while !stopping.load(ordering: .acquiring) {
            while sd_bus_process(bus, nil) > 0 {}
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
                logger.error("the bus connection failed", metadata: ["errno": "\(errno)"])
                break
            }
            if descriptors[0].revents & Int16(POLLHUP) != 0 {
                logger.warning("the system bus closed the connection: capture no longer follows sessions")
                report(nil)
                break
            }
        }
        sd_bus_flush_close_unref(bus)
        connection.changed.deallocate()
        Glibc.close(wakeup)
        finished.withLock { $0 = true }
    }
}
