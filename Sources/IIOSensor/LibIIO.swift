import CLibIIO

#if canImport(Glibc)
    import Glibc
#endif

// The only file that calls libiio (and the few system calls that go with it). Everything else uses the
// protocols of IIOBackend.swift, which the tests implement with fakes.

/// The real backend: libiio's local context (the kernel's sysfs), or any URI libiio accepts.
public struct LibIIOBackend: IIOBackend {
    /// A libiio context URI (`local:`, `ip:host`, `xml:file`); nil for the local context.
    public var uri: String?

    public init(uri: String? = nil) {
        self.uri = uri
    }

    /// Where the kernel lists IIO devices.
    static let sysfsDevices = "/sys/bus/iio/devices"

    private var isLocal: Bool { uri == nil || uri == "local:" }

    public func makeContext() throws(IIOError) -> any IIOContextHandle {
        errno = 0
        let context: OpaquePointer?
        if let uri, uri != "local:" {
            context = iio_create_context_from_uri(uri)
        } else {
            context = iio_create_local_context()
        }
        guard let context else {
            let code = errno
            throw IIOError(
                code: code, operation: "creating the IIO context \(uri ?? "local:")", reason: Self.describe(code))
        }
        iio_context_set_timeout(context, 2000)
        return LibIIOContext(context, isLocal: isLocal)
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
    let devices: [IIODeviceInfo]
    private var pointers: [String: OpaquePointer] = [:]
    private var attributes: [String: [String: Attribute]] = [:]

    init(_ context: OpaquePointer, isLocal: Bool) {
        self.context = context
        self.isLocal = isLocal
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
        errno = 0
        guard let buffer = iio_device_create_buffer(device, samples, false) else {
            let code = errno
            throw IIOError(code: code, operation: operation, reason: LibIIOBackend.describe(code))
        }
        try check(Int(iio_buffer_set_blocking_mode(buffer, false)), operation)
        return LibIIOBuffer(buffer, context: self, device: id)
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

/// A started libiio buffer, read in non-blocking mode after polling its file descriptor.
final class LibIIOBuffer: IIOBufferHandle {
    private var buffer: OpaquePointer?
    private let context: LibIIOContext  // keeps the context alive while the buffer exists
    private let device: String

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
        let result = iio_buffer_refill(buffer)
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
            iio_buffer_destroy(buffer)
            self.buffer = nil
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
