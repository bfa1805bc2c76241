// SPDX-License-Identifier: Apache-2.0
import CLibIIO
import IIOModel
public import Logging

#if canImport(Glibc)
    import Glibc
#endif

// The only file that calls libiio (and the few system calls that go with it). Everything else uses the
// protocols of IIOBackend.swift, which the tests implement with fakes.

/// The real backend: libiio's local context (the kernel's sysfs), or any URI libiio accepts.
public struct LibIIOBackend: IIOBackend {
    /// A libiio context URI (`local:`, `ip:host`, `xml:file`); nil for the local context.
    public var uri: String?
    /// Where libiio's own messages go (it prints them on standard error): see ``LibraryOutput``.
    public var logger: Logger?

    public init(uri: String? = nil, logger: Logger? = nil) {
        self.uri = uri
        self.logger = logger
    }

    public func logging(to logger: Logger) -> any IIOBackend {
        var backend = self
        if backend.logger == nil { backend.logger = logger }
        return backend
    }

    /// Where the kernel lists IIO devices.
    static let sysfsDevices = "/sys/bus/iio/devices"

    private var isLocal: Bool { uri == nil || uri == "local:" }

    public func makeContext() throws(IIOError) -> any IIOContextHandle {
        let output = LibraryOutput(logger: logger)
        // (a failure is the source's to report, once: a remote context that cannot be had is tried every second)
        let (context, code): (OpaquePointer?, Int32) = output.capture(
            during: "creating the IIO context", errorsAreExpected: true
        ) {
            errno = 0
            let context: OpaquePointer?
            if let uri, uri != "local:" {
                context = iio_create_context_from_uri(uri)
            } else {
                context = iio_create_local_context()
            }
            return (context, errno)
        }
        guard let context else {
            throw IIOError(
                code: code, operation: "creating the IIO context \(uri ?? "local:")", reason: Self.describe(code))
        }
        iio_context_set_timeout(context, 2000)
        return LibIIOContext(context, isLocal: isLocal, output: output)
    }

    public func devicesFingerprint() -> String? {
        guard isLocal else { return nil }
        guard let names = SystemFiles.list(Self.sysfsDevices) else { return "" }
        return names.sorted().joined(separator: " ")
    }

    static func describe(_ code: Int32) -> String {
        guard code > 0 else { return "failed" }
        var buffer = [CChar](repeating: 0, count: 256)
        iio_strerror(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A libiio context and the map from sysfs names to libiio's attributes.
final class LibIIOContext: IIOContextHandle {
    private enum Attribute {
        case device(String)
        case channel(OpaquePointer, String)
    }

    private let context: OpaquePointer
    private let isLocal: Bool
    let output: LibraryOutput
    let devices: [IIODeviceInfo]
    private var pointers: [String: OpaquePointer] = [:]
    private var attributes: [String: [String: Attribute]] = [:]

    init(_ context: OpaquePointer, isLocal: Bool, output: LibraryOutput) {
        self.context = context
        self.isLocal = isLocal
        self.output = output
        var devices: [IIODeviceInfo] = []
        for index in 0..<iio_context_get_devices_count(context) {
            guard let device = iio_context_get_device(context, index) else { continue }
            let id = Self.string(iio_device_get_id(device)) ?? "device\(index)"
            var info = IIODeviceInfo(
                id: id, name: Self.string(iio_device_get_name(device)),
                label: Self.string(iio_device_get_label(device)),
                isTrigger: iio_device_is_trigger(device))
            var map: [String: Attribute] = [:]
            for attr in 0..<iio_device_get_attrs_count(device) {
                guard let name = Self.string(iio_device_get_attr(device, attr)) else { continue }
                map[name] = .device(name)
            }
            for number in 0..<iio_device_get_channels_count(device) {
                guard let channel = iio_device_get_channel(device, number) else { continue }
                let channelID = Self.string(iio_channel_get_id(channel)) ?? ""
                for attr in 0..<iio_channel_get_attrs_count(channel) {
                    guard let name = Self.string(iio_channel_get_attr(channel, attr)) else { continue }
                    let file = Self.string(iio_channel_attr_get_filename(channel, name)) ?? "in_\(channelID)_\(name)"
                    if map[file] == nil { map[file] = .channel(channel, name) }
                }
                if iio_channel_is_scan_element(channel), !iio_channel_is_output(channel),
                    let format = iio_channel_get_data_format(channel)?.pointee, format.length % 8 == 0,
                    [8, 16, 32, 64].contains(Int(format.length)), format.bits >= 1, format.bits <= format.length
                {
                    let type = ScanType(
                        isBigEndian: format.is_be, isSigned: format.is_signed, bits: Int(format.bits),
                        storageBits: Int(format.length), shift: Int(format.shift),
                        repeatCount: max(1, Int(format.repeat)))
                    info.scanElements.append(
                        IIOScanElement(channel: channelID, index: Int(iio_channel_get_index(channel)), type: type))
                }
            }
            for attr in 0..<iio_device_get_buffer_attrs_count(device) {
                if let name = Self.string(iio_device_get_buffer_attr(device, attr)) {
                    info.bufferAttributes.insert(name)
                }
            }
            info.attributes = Set(map.keys)
            pointers[id] = device
            attributes[id] = map
            devices.append(info)
        }
        self.devices = devices
    }

    deinit {
        iio_context_destroy(context)
    }

    private static func string(_ pointer: UnsafePointer<CChar>?) -> String? {
        pointer.map { String(cString: $0) }
    }

    private func device(_ id: String, _ operation: @autoclosure () -> String) throws(IIOError) -> OpaquePointer {
        guard let device = pointers[id] else {
            throw IIOError(code: ENODEV, operation: operation(), reason: "no such device in the context")
        }
        return device
    }

    private func check(_ result: Int, _ operation: @autoclosure () -> String) throws(IIOError) {
        if result < 0 {
            let code = Int32(-result)
            throw IIOError(code: code, operation: operation(), reason: LibIIOBackend.describe(code))
        }
    }

    func read(device id: String, attribute: String) throws(IIOError) -> String {
        let operation = "reading \(attribute) of \(id)"
        let device = try device(id, operation)
        var buffer = [CChar](repeating: 0, count: 4096)
        let result: Int
        switch attributes[id]?[attribute] ?? .device(attribute) {
        case .device(let name): result = iio_device_attr_read(device, name, &buffer, buffer.count)
        case .channel(let channel, let name): result = iio_channel_attr_read(channel, name, &buffer, buffer.count)
        }
        try check(result, operation)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            .trimmingWhitespace()
    }

    func write(device id: String, attribute: String, value: String) throws(IIOError) {
        let operation = "writing \(value) to \(attribute) of \(id)"
        let device = try device(id, operation)
        let result: Int
        switch attributes[id]?[attribute] ?? .device(attribute) {
        case .device(let name): result = iio_device_attr_write(device, name, value)
        case .channel(let channel, let name): result = iio_channel_attr_write(channel, name, value)
        }
        try check(result, operation)
    }

    func writeBuffer(device id: String, attribute: String, value: String) throws(IIOError) {
        let operation = "writing \(value) to buffer/\(attribute) of \(id)"
        let device = try device(id, operation)
        try check(iio_device_buffer_attr_write(device, attribute, value), operation)
    }

    func setTrigger(device id: String, trigger: String?) throws(IIOError) {
        let operation = "setting the trigger of \(id) to \(trigger ?? "none")"
        let device = try device(id, operation)
        var triggerDevice: OpaquePointer?
        if let trigger { triggerDevice = try self.device(trigger, operation) }
        try check(Int(iio_device_set_trigger(device, triggerDevice)), operation)
    }

    func openBuffer(device id: String, channels: [String], samples: Int) throws(IIOError) -> any IIOBufferHandle {
        let operation = "starting a buffer of \(samples) scans on \(id)"
        let device = try device(id, operation)
        for number in 0..<iio_device_get_channels_count(device) {
            guard let channel = iio_device_get_channel(device, number) else { continue }
            let channelID = Self.string(iio_channel_get_id(channel)) ?? ""
            if channels.contains(channelID), iio_channel_is_scan_element(channel) {
                iio_channel_enable(channel)
            } else {
                iio_channel_disable(channel)
            }
        }
        // libiio prints "High-speed mode not enabled" here on every kernel without its mmap interface.
        let (created, code): (OpaquePointer?, Int32) = output.capture(during: operation) {
            errno = 0
            let buffer = iio_device_create_buffer(device, samples, false)
            return (buffer, errno)
        }
        guard let buffer = created else {
            throw IIOError(code: code, operation: operation, reason: LibIIOBackend.describe(code))
        }
        let handle = LibIIOBuffer(buffer, context: self, device: id)
        let mode = iio_buffer_set_blocking_mode(buffer, false)
        if mode == -ENOSYS {
            // The network backend (iiod) has neither a non-blocking mode nor a descriptor to poll: its refill
            // blocks until a read's worth of scans has come, bounded by the context's timeout.
            handle.readsBlock = true
        } else {
            try check(Int(mode), operation)
        }
        return handle
    }

    func udevProperties(device id: String) -> [String: String] {
        guard isLocal else { return [:] }
        let directory = "\(LibIIOBackend.sysfsDevices)/\(id)"
        var properties = SystemFiles.read("\(directory)/uevent").map(UdevProperties.parse) ?? [:]
        if let dev = SystemFiles.read("\(directory)/dev"), let (major, minor) = UdevProperties.deviceNumber(dev),
            let database = SystemFiles.read("/run/udev/data/c\(major):\(minor)")
        {
            properties.merge(UdevProperties.parse(database)) { $1 }
        }
        return properties
    }
}

extension LibIIOContext {
    /// Read from sysfs directly: libiio 0.24 cannot read a device's current trigger by name, nor its scan
    /// elements' enables before a buffer exists.
    func deviceState(device id: String) -> DeviceState? {
        let directory = "\(LibIIOBackend.sysfsDevices)/\(id)"
        // A device that went away has nothing to put back.
        guard isLocal, SystemFiles.read("\(directory)/name") != nil else { return nil }
        func value(_ file: String) -> String? { SystemFiles.read("\(directory)/\(file)")?.trimmingWhitespace() }
        var state = DeviceState()
        state.trigger = value("trigger/current_trigger")
        state.bufferEnabled = value("buffer/enable").map { $0 == "1" }
        state.length = value("buffer/length")
        state.watermark = value("buffer/watermark")
        for file in SystemFiles.list("\(directory)/scan_elements") ?? [] where file.hasSuffix("_en") {
            if let enabled = value("scan_elements/\(file)") { state.scanEnables[file] = enabled == "1" }
        }
        for attribute in ["sampling_frequency", "in_accel_sampling_frequency"] {
            if let rate = value(attribute) {
                state.samplingFrequency = (attribute, rate)
                break
            }
        }
        return state
    }

    func apply(device id: String, writes: [DeviceState.Write]) -> [(DeviceState.Write, IIOError)] {
        let directory = "\(LibIIOBackend.sysfsDevices)/\(id)"
        var failed: [(DeviceState.Write, IIOError)] = []
        for write in writes {
            let code = SystemFiles.write("\(directory)/\(write.file)", write.value)
            if code != 0 {
                failed.append(
                    (
                        write,
                        IIOError(
                            code: code, operation: "writing \(write.value) to \(write.file) of \(id)",
                            reason: LibIIOBackend.describe(code))
                    ))
            }
        }
        return failed
    }
}

/// A started libiio buffer, read in non-blocking mode after polling its file descriptor.
final class LibIIOBuffer: IIOBufferHandle {
    private var buffer: OpaquePointer?
    private let context: LibIIOContext  // keeps the context alive while the buffer exists
    private let device: String
    var readsBlock = false

    init(_ buffer: OpaquePointer, context: LibIIOContext, device: String) {
        self.buffer = buffer
        self.context = context
        self.device = device
    }

    deinit {
        close()
    }

    func wait(timeout: Duration, wakeup: Wakeup) -> WaitOutcome {
        guard let buffer else { return .failed }
        let fd = iio_buffer_get_poll_fd(buffer)
        guard fd >= 0 else { return .failed }
        var fds = [
            pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeup.fileDescriptor, events: Int16(POLLIN), revents: 0),
        ]
        let deadline = ContinuousClock.now + timeout
        while true {
            if wakeup.isSignalled { return .stopped }
            let remaining = ContinuousClock.now.duration(to: deadline)
            let result = poll(&fds, 2, Wakeup.milliseconds(max(.zero, remaining)))
            if result < 0 {
                if errno == EINTR { continue }
                return .failed
            }
            if fds[1].revents != 0 || wakeup.isSignalled { return .stopped }
            if fds[0].revents & Int16(POLLIN) != 0 { return .ready }
            if fds[0].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { return .failed }
            if result == 0 { return .timedOut }
        }
    }

    func read() throws(IIOError) -> [UInt8] {
        guard let buffer else {
            throw IIOError(code: EBADF, operation: "reading the buffer of \(device)", reason: "closed")
        }
        // A remote buffer's read is a request to iiod: libiio prints its own lines when the connection fails.
        let result =
            readsBlock
            ? context.output.capture(during: "reading the buffer of \(device)", errorsAreExpected: true) {
                iio_buffer_refill(buffer)
            } : iio_buffer_refill(buffer)
        if result == -Int(EAGAIN) { return [] }
        if result < 0 {
            let code = Int32(-result)
            throw IIOError(
                code: code, operation: "reading the buffer of \(device)", reason: LibIIOBackend.describe(code))
        }
        guard let start = iio_buffer_start(buffer), let end = iio_buffer_end(buffer) else { return [] }
        let count = end - start
        guard count > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: start, count: count))
    }

    func close() {
        if let buffer {
            // Disabling the buffer of a device that has gone makes libiio print an error per channel: expected
            // then, and the capture loop says what happened.
            context.output.capture(during: "stopping the buffer of \(device)", errorsAreExpected: true) {
                iio_buffer_destroy(buffer)
            }
            self.buffer = nil
        }
    }
}

/// libiio 0.24 prints some warnings and errors on standard error itself, behind the daemon's logger (and into
/// the journal as unstructured lines). Around the libiio calls that do, descriptor 2 is pointed at a pipe; after
/// the call it is restored, libiio's lines go through the logger at a level that fits them, and anything else
/// written to standard error meanwhile (another thread's log line) is passed on unchanged.
///
/// Descriptor 2 is shared by all threads, so the redirections are serialized by a lock; a line another thread
/// writes during one is delayed, never lost (the pipe holds 64 KiB, and a writer that fills it waits until the
/// call returns and the pipe is drained).
struct LibraryOutput: Sendable {
    let logger: Logger?
    /// Serializes the redirections (a plain mutex: the calls inside return values that are not Sendable).
    private nonisolated(unsafe) static let lock: UnsafeMutablePointer<pthread_mutex_t> = {
        let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        return mutex
    }()

    init(logger: Logger?) {
        self.logger = logger
    }

    /// Runs `body` with standard error captured, then logs what libiio wrote.
    /// - Parameter errorsAreExpected: libiio's errors are logged at debug level (stopping a vanished device).
    @discardableResult
    func capture<Result>(during operation: String, errorsAreExpected: Bool = false, _ body: () -> Result) -> Result {
        guard let logger else { return body() }
        pthread_mutex_lock(Self.lock)
        let (result, text) = Self.redirected(body)
        pthread_mutex_unlock(Self.lock)
        guard let text, !text.isEmpty else { return result }
        var passOn = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if let (level, message) = Self.classify(String(line), errorsAreExpected: errorsAreExpected) {
                logger.log(
                    level: level, "libiio reported", metadata: ["libiio": "\(message)", "operation": "\(operation)"])
            } else {
                passOn += line + "\n"
            }
        }
        if !passOn.isEmpty { Self.writeAll(passOn, to: 2) }
        return result
    }

    /// What a line libiio printed means: its level and text; nil for a line that is not libiio's.
    static func classify(_ line: String, errorsAreExpected: Bool) -> (Logger.Level, String)? {
        let prefixes: [(String, Logger.Level)] = [
            ("ERROR: ", errorsAreExpected ? .debug : .error), ("WARNING: ", .warning), ("INFO: ", .debug),
            ("DEBUG: ", .debug),
        ]
        for (prefix, level) in prefixes where line.hasPrefix(prefix) {
            let message = String(line.dropFirst(prefix.count))
            // Said on every kernel without ADI's mmap buffer interface: reads use read(2), which is all we need.
            if message.hasPrefix("High-speed mode not enabled") { return (.debug, message) }
            return (level, message)
        }
        return nil
    }

    /// Runs `body` with descriptor 2 on a pipe. - Returns: its result and what was written (nil when the pipe
    /// could not be set up: then nothing was redirected).
    private static func redirected<Result>(_ body: () -> Result) -> (Result, String?) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return (body(), nil) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        // Non-blocking: a child another thread started meanwhile may still hold the write end.
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        let saved = fcntl(2, F_DUPFD_CLOEXEC, 3)
        guard saved >= 0, dup2(fds[1], 2) >= 0 else {
            if saved >= 0 { Glibc.close(saved) }
            Glibc.close(fds[0])
            Glibc.close(fds[1])
            return (body(), nil)
        }
        Glibc.close(fds[1])
        let result = body()
        fflush(nil)
        _ = dup2(saved, 2)
        Glibc.close(saved)
        // What was written is in the pipe now: read it all.
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = Glibc.read(fds[0], &chunk, chunk.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        Glibc.close(fds[0])
        return (result, String(decoding: bytes, as: UTF8.self))
    }

    private static func writeAll(_ text: String, to fd: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }
}

/// The few plain file reads the backend needs (sysfs and udev's database).
enum SystemFiles {
    static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = Glibc.read(fd, &chunk, chunk.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
            if bytes.count > 1 << 20 { break }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes a sysfs attribute in one write(2). - Returns: 0, or the errno.
    static func write(_ path: String, _ value: String) -> Int32 {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return errno }
        defer { Glibc.close(fd) }
        let bytes = Array(value.utf8)
        while true {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            return written < 0 ? errno : 0
        }
    }

    static func list(_ path: String) -> [String]? {
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
