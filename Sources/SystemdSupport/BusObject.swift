// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import CSystemd
public import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Why the bus object could not be set up.
public struct BusError: Error, Sendable, CustomStringConvertible {
    public var operation: String
    public var code: Int32

    public var description: String { "\(operation): \(String(cString: strerror(code)))" }
}

/// The shake object on a D-Bus bus, through libsystemd's sd-bus: the `Claim` and `Release` methods, the
/// `HasAccelerometer`, `Shaking`, `Sensor` and `Sensitivity` properties with change notices, the `Shake` signal,
/// and word of clients leaving the bus. Method calls and property reads are handed to the handlers with the
/// caller's credentials as the bus recorded them when the caller connected (never read from /proc); signals and
/// change notices go to everyone listening or to the clients named.
///
/// sd-bus is not thread-safe, so one thread owns the connection (a ``BlockingThread``, `shaked-bus`): it waits on
/// the bus and on a ``Wakeup``, processes messages (calling the handlers) and runs what other threads hand it
/// (signals, change notices, closing). Like the libiio thread, it is the one blocking thread of its service.
public final class BusObject: Sendable {
    /// Who called a method or reads a property, as the bus vouches for it: what dbus-daemon recorded of the
    /// caller's socket when it connected (`GetConnectionCredentials`), asked once per caller and kept until it
    /// leaves the bus. A process that changes its groups, or execs a set-gid program, after connecting is judged
    /// as it connected, as on the daemon's socket.
    public struct Caller: Sendable, Hashable {
        /// The caller's unique bus name (`:1.42`): it is what leaves the bus when the client does.
        public var name: String
        public var uid: UInt32
        /// Its primary and supplementary groups as one sorted set (the bus does not say which one is primary);
        /// empty when the bus names none, or more than ``maxGroups``.
        public var groups: [UInt32]

        public init(name: String, uid: UInt32, groups: [UInt32]) {
            self.name = name
            self.uid = uid
            self.groups = groups
        }
    }

    /// Who a signal or change notice goes to.
    public enum Recipients: Sendable, Equatable {
        /// Everyone listening (a broadcast).
        case everyone
        /// These clients (unique names) only, one message each.
        case only([String])
    }

    /// Most groups read of a caller; a caller with more counts as having none (refused rather than guessed),
    /// as on the socket.
    public static let maxGroups = 1024
    /// Most callers whose credentials are kept; past it, the bus is asked at every call.
    static let maxKnownCallers = 4096

    /// What the object answers; each runs on the bus thread and must not block.
    public struct Handlers: Sendable {
        /// Whether the caller may read the properties (`Get`, `GetAll`); refused reads get AccessDenied.
        public var mayRead: @Sendable (Caller) -> Bool
        /// A boolean property's value (nil: unknown property).
        public var bool: @Sendable (String) -> Bool?
        /// A string property's value (nil: unknown property).
        public var string: @Sendable (String) -> String?
        /// A method (`Claim`, `Release`): whether the caller may; refused calls get AccessDenied.
        public var call: @Sendable (_ method: String, _ caller: Caller) -> Bool
        /// A bus name lost its owner: a client left the bus.
        public var nameGone: @Sendable (String) -> Void
        /// The connection to the bus was lost (the bus went away): the object is gone from it, and its thread has
        /// ended. Called once, last, on the bus thread.
        public var lost: @Sendable (BusError) -> Void

        public init(
            mayRead: @escaping @Sendable (Caller) -> Bool, bool: @escaping @Sendable (String) -> Bool?,
            string: @escaping @Sendable (String) -> String?, call: @escaping @Sendable (String, Caller) -> Bool,
            nameGone: @escaping @Sendable (String) -> Void, lost: @escaping @Sendable (BusError) -> Void = { _ in }
        ) {
            self.mayRead = mayRead
            self.bool = bool
            self.string = string
            self.call = call
            self.nameGone = nameGone
            self.lost = lost
        }
    }

    /// One `Shake` signal's arguments. A `began` has no duration, peak, axis or reversals (0, 0, "", 0); only
    /// a `cancelled` has a reason, and only a `not_a_shake` a detail.
    public struct Shake: Sendable, Hashable {
        public var phase: String
        public var seq: UInt64
        public var time: Double
        public var duration: Double
        public var peak: Double
        public var axis: String
        public var reversals: UInt32
        public var reason: String
        public var detail: String

        public init(
            phase: String, seq: UInt64, time: Double, duration: Double = 0, peak: Double = 0, axis: String = "",
            reversals: UInt32 = 0, reason: String = "", detail: String = ""
        ) {
            self.phase = phase
            self.seq = seq
            self.time = time
            self.duration = duration
            self.peak = peak
            self.axis = axis
            self.reversals = reversals
            self.reason = reason
            self.detail = detail
        }
    }

    public let name: String
    public let path: String
    public let interface: String
    private let connection: Connection
    private let work = Locked<[@Sendable (OpaquePointer) -> Void]>([])
    private let stopping = Atomic<Bool>(false)
    /// Rung when work is handed to the bus thread, or the object closes.
    private let wakeup = Wakeup()
    /// Whether the bus thread has given up the connection (then nothing more is handed to it).
    private let finished = Locked<Bool>(false)
    /// The bus thread, once started.
    private let thread = Locked<BlockingThread?>(nil)
    private let logger: Logger

    /// The sd-bus connection and the callback table it points into. Used on the bus thread only once the thread
    /// runs (before that, by `init` alone); freed by the thread as it ends, or by a failed `init`.
    private struct Connection: @unchecked Sendable {
        let bus: OpaquePointer
        let callbacks: UnsafeMutablePointer<shaked_bus_callbacks>
        let context: Unmanaged<Context>
    }

    private final class Context: Sendable {
        let handlers: Handlers
        /// The callers met so far, by unique name, as the bus recorded them; a name leaves with its client.
        let callers = Locked<[String: Caller]>([:])
        init(handlers: Handlers) { self.handlers = handlers }

        /// `name` as the bus recorded it: asked at its first call, then kept. Nil when the bus does not say (the
        /// caller has left). Unique names are never reused on a bus, so what is kept cannot name another client.
        func caller(_ name: String, bus: OpaquePointer?) -> Caller? {
            if let known = callers.withLock({ $0[name] }) { return known }
            guard let bus, let caller = BusObject.ask(bus, about: name) else { return nil }
            callers.withLock { callers in
                if callers.count < BusObject.maxKnownCallers { callers[name] = caller }
            }
            return caller
        }
    }

    /// What the bus recorded of `name` at connect; nil when it does not say.
    static func ask(_ bus: OpaquePointer, about name: String) -> Caller? {
        var uid: UInt32 = 0
        var count: Int32 = -1
        var groups = [UInt32](repeating: 0, count: maxGroups)
        let result = groups.withUnsafeMutableBufferPointer {
            shaked_bus_connection_credentials(bus, name, &uid, $0.baseAddress, Int32($0.count), &count)
        }
        if result == -E2BIG { return Caller(name: name, uid: uid, groups: []) }
        guard result >= 0 else { return nil }
        return Caller(name: name, uid: uid, groups: Array(groups.prefix(Int(max(0, count)))))
    }

    /// Connects, exports the object, takes the name and starts the bus thread. Whatever fails releases what was
    /// made before it, here: the connection, the callbacks, the wake-up descriptor.
    /// - Parameter address: a bus address (`unix:path=...`); nil for the system bus.
    /// - Throws: ``BusError`` when the bus cannot be reached, the object exported or the name taken.
    public init(
        address: String?, name: String, path: String, interface: String, handlers: Handlers, logger: Logger
    ) throws(BusError) {
        self.name = name
        self.path = path
        self.interface = interface
        self.logger = logger
        let bus = try Self.connect(address)
        let connection = Connection(
            bus: bus, callbacks: Self.callbacks(), context: Unmanaged.passRetained(Context(handlers: handlers)))
        connection.callbacks.pointee.context = connection.context.toOpaque()
        do throws(BusError) {
            try Self.check("exporting \(path)", shaked_bus_add_object(bus, path, interface, connection.callbacks))
            try Self.check("taking the name \(name)", sd_bus_request_name(bus, name, 0))
            if wakeup.fileDescriptor < 0 { throw BusError(operation: "eventfd", code: EMFILE) }
        } catch {
            Self.release(connection)
            throw error
        }
        self.connection = connection
        guard let thread = BlockingThread.start(name: "shaked-bus", { [self] in run() }) else {
            // No thread: nothing to stop.
            stopping.store(true, ordering: .releasing)
            finished.withLock { $0 = true }
            Self.release(connection)
            throw BusError(operation: "starting the bus thread", code: EAGAIN)
        }
        self.thread.withLock { $0 = thread }
    }

    /// A started connection to the bus at `address`, or the system bus; released here when it cannot start.
    static func connect(_ address: String?) throws(BusError) -> OpaquePointer {
        var bus: OpaquePointer?
        if let address {
            try check("sd_bus_new", sd_bus_new(&bus))
            _ = sd_bus_set_address(bus, address)
            _ = sd_bus_set_bus_client(bus, 1)
            if let result = Optional(sd_bus_start(bus)), result < 0 {
                sd_bus_unref(bus)
                throw BusError(operation: "connecting to \(address)", code: -result)
            }
        } else {
            try check("connecting to the system bus", sd_bus_open_system(&bus))
        }
        guard let bus else { throw BusError(operation: "sd_bus", code: ENOMEM) }
        return bus
    }

    /// The table the C side calls the handlers through; its context is set by `init`.
    private static func callbacks() -> UnsafeMutablePointer<shaked_bus_callbacks> {
        let callbacks = UnsafeMutablePointer<shaked_bus_callbacks>.allocate(capacity: 1)
        callbacks.initialize(
            to: shaked_bus_callbacks(
                context: nil,
                may_read: { context, bus, sender in
                    guard let context, let sender else { return -EINVAL }
                    let object = Unmanaged<Context>.fromOpaque(context).takeUnretainedValue()
                    guard let caller = object.caller(String(cString: sender), bus: bus) else { return -EACCES }
                    return object.handlers.mayRead(caller) ? 0 : -EACCES
                },
                get_bool: { context, property in
                    guard let context, let property else { return -EINVAL }
                    let handlers = Unmanaged<Context>.fromOpaque(context).takeUnretainedValue().handlers
                    guard let value = handlers.bool(String(cString: property)) else { return -ENOENT }
                    return value ? 1 : 0
                },
                get_string: { context, property in
                    guard let context, let property else { return nil }
                    let handlers = Unmanaged<Context>.fromOpaque(context).takeUnretainedValue().handlers
                    return handlers.string(String(cString: property)).flatMap { strdup($0) }
                },
                call: { context, bus, member, sender in
                    guard let context, let member, let sender else { return -EINVAL }
                    let object = Unmanaged<Context>.fromOpaque(context).takeUnretainedValue()
                    guard let caller = object.caller(String(cString: sender), bus: bus) else { return -EACCES }
                    return object.handlers.call(String(cString: member), caller) ? 0 : -EACCES
                },
                name_gone: { context, name in
                    guard let context, let name else { return }
                    let object = Unmanaged<Context>.fromOpaque(context).takeUnretainedValue()
                    let gone = String(cString: name)
                    object.callers.withLock { _ = $0.removeValue(forKey: gone) }
                    object.handlers.nameGone(gone)
                }))
        return callbacks
    }

    /// Sends the `Shake` signal to `recipients`.
    public func emit(_ shake: Shake, to recipients: Recipients) {
        post { [path, interface] bus in
            Self.each(recipients) { destination in
                _ = shaked_bus_emit_shake(
                    bus, destination, path, interface, shake.phase, shake.seq, shake.time, shake.duration, shake.peak,
                    shake.axis, shake.reversals, shake.reason, shake.detail)
            }
        }
    }

    /// Sends `PropertiesChanged` for these properties, with their new values, to `recipients`.
    public func propertiesChanged(_ names: [String], to recipients: Recipients) {
        guard !names.isEmpty else { return }
        post { [path, interface, connection] bus in
            let strings = names.map { strdup($0) }
            defer { for pointer in strings { Glibc.free(pointer) } }
            var arguments = strings.map { UnsafePointer($0) }
            Self.each(recipients) { destination in
                _ = arguments.withUnsafeMutableBufferPointer {
                    shaked_bus_emit_changed(
                        bus, destination, path, interface, connection.callbacks, $0.baseAddress, Int32($0.count))
                }
            }
        }
    }

    /// Runs `send` once with no destination (a broadcast), or once for each recipient.
    private static func each(_ recipients: Recipients, _ send: (UnsafePointer<CChar>?) -> Void) {
        switch recipients {
        case .everyone: send(nil)
        case .only(let names): for name in names { name.withCString { send($0) } }
        }
    }

    /// Gives up the name, closes the connection and waits for the bus thread to end (at once when the
    /// connection was lost and the thread has ended already, or when called on the bus thread, by a handler).
    public func close() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wakeup.signal()
        thread.withLock { $0 }?.join()
    }

    deinit {
        close()
    }

    private func post(_ job: @escaping @Sendable (OpaquePointer) -> Void) {
        guard !stopping.load(ordering: .acquiring), !finished.withLock({ $0 }) else { return }
        work.withLock { $0.append(job) }
        wakeup.signal()
    }

    private func run() {
        let bus = connection.bus
        var lost: BusError?
        while true {
            // Everything sd-bus has to do now (reading, dispatching, writing), then what others handed over.
            var processed: Int32
            repeat { processed = sd_bus_process(bus, nil) } while processed > 0
            if processed < 0 || sd_bus_is_open(bus) <= 0 {
                // The bus went away (dbus-daemon stopped or restarted): the connection is dead for good.
                lost = BusError(operation: "the connection to the bus", code: processed < 0 ? -processed : ECONNRESET)
                break
            }
            let jobs = work.withLock { jobs in
                defer { jobs.removeAll() }
                return jobs
            }
            for job in jobs { job(bus) }
            if !jobs.isEmpty { continue }
            if stopping.load(ordering: .acquiring) { break }
            var descriptors = [
                pollfd(fd: sd_bus_get_fd(bus), events: Int16(truncatingIfNeeded: sd_bus_get_events(bus)), revents: 0),
                pollfd(fd: wakeup.fileDescriptor, events: Int16(POLLIN), revents: 0),
            ]
            if case .failure(let error) = Readiness.wait(&descriptors, timeout: Self.timeout(bus)) {
                lost = BusError(operation: "waiting on the bus", code: error.rawValue)
                break
            }
            // Rung for work or for closing: both are looked at before the next wait.
            if descriptors[1].revents != 0 { wakeup.consume() }
        }
        if lost == nil {
            _ = sd_bus_flush(bus)
            _ = sd_bus_release_name(bus, name)
        }
        let handlers = connection.context.takeUnretainedValue().handlers
        Self.release(connection)
        work.withLock { $0.removeAll() }
        finished.withLock { $0 = true }
        if let lost {
            logger.debug("the bus thread ends: the connection was lost", metadata: ["error": "\(lost)"])
            handlers.lost(lost)
        }
    }

    /// How long sd-bus may wait before it has something to do (a method call's timeout): nil for as long as it
    /// takes. sd-bus gives a deadline on the monotonic clock, in microseconds.
    static func timeout(_ bus: OpaquePointer) -> Duration? {
        var deadline: UInt64 = 0
        guard sd_bus_get_timeout(bus, &deadline) >= 0, deadline != UInt64.max else { return nil }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let current = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        return deadline <= current ? .zero : .microseconds(Int64(clamping: deadline - current))
    }

    private static func release(_ connection: Connection) {
        sd_bus_flush_close_unref(connection.bus)
        connection.callbacks.deinitialize(count: 1)
        connection.callbacks.deallocate()
        connection.context.release()
    }

    private static func check(_ operation: String, _ result: Int32) throws(BusError) {
        if result < 0 { throw BusError(operation: operation, code: -result) }
    }
}
