// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
    import Glibc
#endif

/// Who opens an input device's evdev node (`/dev/input/eventN`), counted by the kernel: inotify's `IN_OPEN` and
/// `IN_CLOSE_*` on the node's folder, for that node's name. The folder, not the node: a watch on a device node
/// needs the right to read it, which the service's device controller (`DevicePolicy=closed`) refuses for input
/// devices whatever the node's group; the folder's events name the node. The relay's way to see whether
/// iio-sensor-proxy reads its accelerometer. Nothing wakes for it unless its ``fileDescriptor`` is polled: the
/// opens wait in the kernel until ``drain()`` (an open of another input device makes it readable too, and counts
/// for nothing).
public final class InputNodeWatch: Sendable {
    /// The descriptor that becomes readable when the node has been opened or closed.
    public let fileDescriptor: Int32
    /// The node watched.
    public let path: String

    /// Watches the evdev node of the input device `systemName` (`input7`, under /sys/devices/virtual/input).
    /// Nil when the device has no evdev node (the `evdev` module not loaded) or inotify is refused.
    public convenience init?(
        systemName: String, sysfs: String = "/sys/devices/virtual/input", dev: String = "/dev/input"
    ) {
        try? self.init(watching: systemName, sysfs: sysfs, dev: dev)
    }

    /// As ``init(systemName:sysfs:dev:)``, saying why not: no evdev node (`ENOENT`), or the right to read the
    /// node is missing (`EACCES`: udev has not given it to the daemon's group yet).
    public init(watching systemName: String, sysfs: String = "/sys/devices/virtual/input", dev: String = "/dev/input")
        throws(UInputError)
    {
        guard let node = Self.eventNode(in: "\(sysfs)/\(systemName)") else {
            throw UInputError(operation: "finding the evdev node", path: "\(sysfs)/\(systemName)", errno: ENOENT)
        }
        let path = "\(dev)/\(node)"
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw UInputError(operation: "inotify_init1", path: path, errno: errno) }
        guard inotify_add_watch(fd, dev, UInt32(IN_OPEN | IN_CLOSE_WRITE | IN_CLOSE_NOWRITE)) >= 0 else {
            let code = errno
            Glibc.close(fd)
            throw UInputError(operation: "inotify_add_watch", path: dev, errno: code)
        }
        fileDescriptor = fd
        self.path = path
        self.node = node
    }

    /// The node's name in its folder (`event3`).
    let node: String

    deinit {
        Glibc.close(fileDescriptor)
    }

    /// The opens and closes since the last drain (never blocks).
    public func drain() -> (opens: Int, closes: Int) {
        var opens = 0
        var closes = 0
        let size = 4096
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let count = read(fileDescriptor, buffer, size)
            guard count > 0 else { break }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let length = min(Int(event.len), count - offset - header)
                let name = String(
                    decoding: UnsafeRawBufferPointer(start: buffer + offset + header, count: length).prefix { $0 != 0 },
                    as: UTF8.self)
                if name == node {
                    if event.mask & UInt32(IN_OPEN) != 0 { opens += 1 }
                    if event.mask & UInt32(IN_CLOSE_WRITE | IN_CLOSE_NOWRITE) != 0 { closes += 1 }
                }
                offset += header + Int(event.len)
            }
        }
        return (opens, closes)
    }

    /// The `eventN` entry of an input device's sysfs directory.
    static func eventNode(in directory: String) -> String? {
        guard let dir = opendir(directory) else { return nil }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix("event"), name.dropFirst(5).allSatisfy(\.isNumber), name.count > 5 { return name }
        }
        return nil
    }
}
