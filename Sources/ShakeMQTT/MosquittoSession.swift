// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import CMosquitto

#if canImport(Glibc)
    import Glibc
#endif

/// One connection to a broker through libmosquitto, the only user of the library: a thread of its own connects,
/// runs the library's network loop (`mosquitto_loop`) and reconnects with ``ReconnectBackoff``; what happens is
/// reported through `onEvent`, from that thread, for Swift concurrency to pick up.
///
/// `mosquitto_threaded_set` tells the library that other threads call it, so ``publish(_:)`` may be called from
/// anywhere; connecting, the loop and the callbacks stay on the session's thread.
final class MosquittoSession: Sendable {
    struct Options: Sendable {
        var address: BrokerEndpoint
        var clientID: String
        var keepAlive: Int
        var username: String?
        /// Never logged, never on a command line: read from a file or a credential by the caller.
        var password: String?
        var tls: TLSFiles?
        /// The last will: sent by the broker when this connection dies without a clean disconnect.
        var will: OutgoingMessage?
    }

    struct TLSFiles: Sendable, Hashable {
        var caFile: String?
        var caPath: String?
        var certFile: String?
        var keyFile: String?
    }

    /// Where to connect, as libmosquitto takes it (a Unix socket is a path with port 0).
    struct BrokerEndpoint: Sendable, Hashable {
        var host: String
        var port: Int32
    }

    enum Event: Sendable, Hashable {
        /// CONNACK 0.
        case connected
        /// The connection ended, or could not be made; `refusal` when the broker answered no (or TLS failed);
        /// `connectedFor` how long the broker had accepted it (nil: it never did).
        case lost(reason: String, refusal: BrokerRefusal?, connectedFor: Double?, retryIn: Double)
        case acknowledged(mid: Int32)
    }

    enum Failure: Error, CustomStringConvertible {
        case library(String)
        var description: String {
            switch self {
            case .library(let message): message
            }
        }
    }

    /// libmosquitto's handle, created in `init` and destroyed in `deinit`; safe to share (threaded mode).
    private nonisolated(unsafe) let handle: OpaquePointer
    private let options: Options
    private let onEvent: @Sendable (Event) -> Void

    private struct Shared: ~Copyable {
        var stopping = false
        var connected = false
        /// Message ids a caller waits for (``publishAndWait(_:timeout:)``).
        var awaited: Set<Int32> = []
    }
    private let shared = Locked(Shared())
    /// Wakes the thread from a back-off wait: a stop signal.
    private let wakeup = Wakeup()
    /// Wakes callers waiting for a connection or acknowledgements: a doorbell, rung at each.
    private let progress = Wakeup()
    /// The session's thread, once started.
    private let thread = Locked<BlockingThread?>(nil)

    /// What the callbacks learn on the session's thread: the CONNACK code and the last error the library logged.
    private final class Loop: @unchecked Sendable {
        // Only the session's thread touches these (the callbacks run inside `mosquitto_loop` on it).
        var connack: Int32?
        var lastError: String?
        /// When the broker accepted the connection (monotonic seconds).
        var connectedAt: Double?
    }
    private let loop = Loop()

    init(options: Options, onEvent: @escaping @Sendable (Event) -> Void) throws(Failure) {
        MosquittoLibrary.initialize()
        self.options = options
        self.onEvent = onEvent
        guard let handle = mosquitto_new(options.clientID, true, nil) else {
            throw .library("cannot create an MQTT client (out of memory?)")
        }
        self.handle = handle
        mosquitto_threaded_set(handle, true)
        _ = mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, Int32(MQTT_PROTOCOL_V311))
        if let username = options.username {
            let result = mosquitto_username_pw_set(handle, username, options.password)
            guard result == MOSQ_ERR_SUCCESS.rawValue else { throw .library(Self.describe(result)) }
        }
        if let tls = options.tls {
            let result = mosquitto_tls_set(handle, tls.caFile, tls.caPath, tls.certFile, tls.keyFile, nil)
            guard result == MOSQ_ERR_SUCCESS.rawValue else {
                throw .library("TLS files refused by libmosquitto: \(Self.describe(result))")
            }
        }
        if let will = options.will {
            let result = Array(will.payload.utf8).withUnsafeBytes { bytes in
                mosquitto_will_set(
                    handle, will.topic, Int32(bytes.count), bytes.baseAddress, Int32(will.qos), will.retain)
            }
            guard result == MOSQ_ERR_SUCCESS.rawValue else { throw .library(Self.describe(result)) }
        }
    }

    deinit {
        mosquitto_destroy(handle)
    }

    /// Starts the session's thread, which connects and keeps reconnecting until ``stop()``.
    func start() -> Bool {
        let context = Unmanaged.passUnretained(self).toOpaque()
        mosquitto_user_data_set(handle, context)
        mosquitto_connect_callback_set(handle) { _, context, code in
            guard let context else { return }
            Unmanaged<MosquittoSession>.fromOpaque(context).takeUnretainedValue().connectCallback(code)
        }
        mosquitto_publish_callback_set(handle) { _, context, mid in
            guard let context else { return }
            Unmanaged<MosquittoSession>.fromOpaque(context).takeUnretainedValue().publishCallback(mid)
        }
        mosquitto_log_callback_set(handle) { _, context, level, message in
            guard let context, let message, level & (MOSQ_LOG_ERR | MOSQ_LOG_WARNING) != 0 else { return }
            Unmanaged<MosquittoSession>.fromOpaque(context).takeUnretainedValue().loop.lastError = String(
                cString: message)
        }
        // The thread holds the session until it ends.
        let session = self
        guard let thread = BlockingThread.start(name: "mqtt", { session.run() }) else { return false }
        self.thread.withLock { $0 = thread }
        return true
    }

    var isConnected: Bool { shared.withLock { $0.connected } }

    /// Hands a message to the library. - Returns: its message id, or why it was not taken.
    func publish(_ message: OutgoingMessage) -> Result<Int32, Failure> {
        var mid: Int32 = 0
        let result = Array(message.payload.utf8).withUnsafeBytes { bytes in
            mosquitto_publish(
                handle, &mid, message.topic, Int32(bytes.count), bytes.baseAddress, Int32(message.qos), message.retain)
        }
        guard result == MOSQ_ERR_SUCCESS.rawValue else { return .failure(.library(Self.describe(result))) }
        return .success(mid)
    }

    /// Publishes `messages` and waits until the broker has acknowledged them all, or `timeout` seconds pass.
    /// - Returns: whether all were acknowledged.
    func publishAndWait(_ messages: [OutgoingMessage], timeout: Double) -> Bool {
        var mids: Set<Int32> = []
        // Registered under the lock before the acknowledgement can arrive on the session's thread.
        let ok = shared.withLock { state -> Bool in
            for message in messages {
                guard case .success(let mid) = publish(message) else { return false }
                mids.insert(mid)
                state.awaited.insert(mid)
            }
            return true
        }
        guard ok else { return false }
        let deadline = Self.now() + timeout
        while shared.withLock({ !$0.awaited.isDisjoint(with: mids) }) {
            let left = deadline - Self.now()
            if left <= 0 { return false }
            progress.sleep(for: .seconds(min(left, 0.1)))
            progress.consume()
        }
        return true
    }

    /// Waits until the broker has accepted the connection, or `timeout` seconds pass.
    func waitConnected(timeout: Double) -> Bool {
        let deadline = Self.now() + timeout
        while !isConnected {
            let left = deadline - Self.now()
            if left <= 0 { return false }
            progress.sleep(for: .seconds(min(left, 0.1)))
            progress.consume()
        }
        return true
    }

    /// Disconnects cleanly (the broker then does not send the last will) and ends the thread; waits for it.
    func stop() {
        let wasStopping = shared.withLock { state in
            defer { state.stopping = true }
            return state.stopping
        }
        guard !wasStopping else { return }
        mosquitto_disconnect(handle)
        wakeup.signal()
        // Bounded: a connect that hangs in the library (a name to resolve, a host that does not answer) must not
        // hold the caller's shutdown.
        thread.withLock { $0 }?.join(timeout: .seconds(5))
    }

    private var isStopping: Bool { shared.withLock { $0.stopping } }

    // MARK: The session's thread

    private func run() {
        var backoff = ReconnectBackoff()
        while !isStopping {
            loop.connack = nil
            loop.lastError = nil
            loop.connectedAt = nil
            var result = mosquitto_connect(handle, options.address.host, options.address.port, Int32(options.keepAlive))
            if result == MOSQ_ERR_SUCCESS.rawValue {
                while !isStopping {
                    result = mosquitto_loop(handle, 250, 1)
                    if result != MOSQ_ERR_SUCCESS.rawValue { break }
                }
            }
            let wasConnected = shared.withLock { state in
                defer { state.connected = false }
                return state.connected
            }
            if isStopping { break }
            let connectedFor = wasConnected ? loop.connectedAt.map { Self.now() - $0 } : nil
            // Only a connection that held starts the back-off again: a broker that accepts and drops at once
            // (or sends garbage) is retried ever more slowly.
            if let connectedFor, connectedFor >= Self.stableAfter { backoff.reset() }
            let refusal = BrokerRefusal.classify(
                connack: loop.connack, result: result, tls: options.tls != nil, logged: loop.lastError)
            let wait = backoff.next(refused: refusal != nil, jitter: Double.random(in: 0..<1))
            let reason = loop.lastError.map { "\(Self.describe(result)): \($0)" } ?? Self.describe(result)
            onEvent(.lost(reason: reason, refusal: refusal, connectedFor: connectedFor, retryIn: wait))
            wakeup.sleep(for: .seconds(wait))
        }
        shared.withLock { $0.connected = false }
    }

    /// Seconds a connection must hold to count as working again.
    static let stableAfter = 10.0

    private func connectCallback(_ code: Int32) {
        loop.connack = code
        guard code == 0 else { return }
        loop.connectedAt = Self.now()
        shared.withLock { $0.connected = true }
        onEvent(.connected)
        progress.signal()
    }

    private func publishCallback(_ mid: Int32) {
        let awaited = shared.withLock { $0.awaited.remove(mid) != nil }
        if awaited {
            progress.signal()
        } else {
            onEvent(.acknowledged(mid: mid))
        }
    }

    static func describe(_ result: Int32) -> String {
        if result == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
        return String(cString: mosquitto_strerror(result))
    }
}

/// `mosquitto_lib_init`, once per process.
enum MosquittoLibrary {
    private static let initialized: Bool = {
        mosquitto_lib_init()
        return true
    }()

    static func initialize() {
        _ = initialized
    }

    /// The library's version, `2.0.11`.
    static var version: String {
        var major: Int32 = 0
        var minor: Int32 = 0
        var revision: Int32 = 0
        mosquitto_lib_version(&major, &minor, &revision)
        return "\(major).\(minor).\(revision)"
    }
}

extension MosquittoSession {
    /// Monotonic seconds.
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
