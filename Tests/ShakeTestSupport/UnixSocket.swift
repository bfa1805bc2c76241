// SPDX-License-Identifier: Apache-2.0
public import Foundation

/// Unix-domain sockets for the tests' own peers: raw clients, stand-ins for systemd's sockets.
public enum UnixSocket {
    /// A new socket of `type` (SOCK_STREAM, SOCK_DGRAM) connected to `path`, or nil (the socket closed, errno
    /// set) when nobody listens there.
    public static func connect(_ path: String, type: Int32 = Int32(SOCK_STREAM.rawValue)) -> Int32? {
        open(path, type: type) { fd, address, length in Foundation.connect(fd, address, length) }
    }

    /// Whether a stream socket listens at `path`, from the kernel's table (/proc/net/unix), without connecting.
    /// The file appears at `bind`, before the daemon gives it its mode and listens; a test that connects or
    /// checks the mode as soon as the file exists races with that.
    public static func isListening(_ path: String) -> Bool {
        // Read to the end: /proc reports a size of 0, and String(contentsOfFile:) stops after the first page
        // (about 4 KB: some 40 sockets, far fewer than the tests running beside this one have open).
        let fd = Glibc.open("/proc/net/unix", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        let table = String(decoding: bytes, as: UTF8.self)
        // Num RefCount Protocol Flags Type St Inode Path; Flags has __SO_ACCEPTCON (0x10000) once listening.
        return table.split(separator: "\n").dropFirst().contains { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 8, fields[7] == path, let flags = UInt32(fields[3], radix: 16) else { return false }
            return flags & 0x10000 != 0
        }
    }

    /// A new socket of `type` bound to `path`, or nil (errno set).
    public static func bind(_ path: String, type: Int32) -> Int32? {
        open(path, type: type) { fd, address, length in Foundation.bind(fd, address, length) }
    }

    private static func open(
        _ path: String, type: Int32, _ operation: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32
    ) -> Int32? {
        let fd = socket(AF_UNIX, type, 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                operation(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let saved = errno
            close(fd)
            errno = saved
            return nil
        }
        return fd
    }

    /// Sets how long a blocking receive on `fd` waits, in seconds.
    public static func setReceiveTimeout(_ fd: Int32, seconds: Double) {
        var timeout = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Raises this process's soft limit on open descriptors to `wanted` (as far as the hard limit allows), for
    /// tests with a thousand connections; the processes they start inherit it.
    public static func raiseDescriptorLimit(to wanted: rlim_t) {
        var limit = rlimit()
        if getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < wanted {
            limit.rlim_cur = min(limit.rlim_max, wanted)
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        }
    }
}
