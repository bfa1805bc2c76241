// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import CLibIIO
import IIOModel
public import Logging

#if canImport(Glibc)
    import Glibc
#endif

// The binding: the only file that calls libiio (LibraryOutput.swift takes what libiio prints around the calls;
// SystemFiles.swift reads sysfs and udev's database). Everything else uses the protocols of IIOBackend.swift,
// which the tests implement with fakes.

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
        // (what bounds a remote buffer's blocking read: RemoteRead)
        iio_context_set_timeout(context, UInt32(RemoteRead.timeout * 1000))
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

    func openBuffer(device id: String, channels: [String], samples: Int, blocks: Int) throws(IIOError)
        -> any IIOBufferHandle
    {
        let operation = "starting a buffer of \(samples) scans on \(id)"
        let device = try device(id, operation)
        // libiio's local backend writes the kernel buffer's length as it starts it: a read's worth of scans times
        // this count (iiod sizes its own).
        if isLocal { _ = iio_device_set_kernel_buffers_count(device, UInt32(clamping: max(1, blocks))) }
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
        if wakeup.isSignalled { return .stopped }
        guard case .success(let ready) = Readiness.wait(&fds, timeout: timeout) else { return .failed }
        if fds[1].revents != 0 || wakeup.isSignalled { return .stopped }
        if fds[0].revents & Int16(POLLIN) != 0 { return .ready }
        if fds[0].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { return .failed }
        return ready == 0 ? .timedOut : .failed
    }

    func read() throws(IIOError) -> [UInt8] {
        guard let buffer else {
            throw IIOError(code: EBADF, operation: "reading the buffer of \(device)", reason: "closed")
        }
        // A remote buffer's read is a request to iiod: libiio prints its own lines when the connection fails.
        let started = readsBlock ? SensorSource.monotonicSeconds() : 0
        let result =
            readsBlock
            ? context.output.capture(during: "reading the buffer of \(device)", errorsAreExpected: true) {
                iio_buffer_refill(buffer)
            } : iio_buffer_refill(buffer)
        if result == -Int(EAGAIN) { return [] }
        if result < 0 {
            let code = Int32(-result)
            var reason = LibIIOBackend.describe(code)
            if readsBlock {
                reason = RemoteRead.failureReason(
                    brokenPipe: code == EPIPE, waited: SensorSource.monotonicSeconds() - started, described: reason)
            }
            throw IIOError(code: code, operation: "reading the buffer of \(device)", reason: reason)
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
