// SPDX-License-Identifier: Apache-2.0
public import Foundation

/// A Unix datagram socket bound to a path: stands in for systemd's notify socket or the journal's.
public final class DatagramSocket: @unchecked Sendable {
    public let fd: Int32
    public let path: String

    /// Binds `path` (replacing what is there); a receive waits at most `timeout` seconds.
    public init(path: String, timeout: Double = 0.2) throws {
        self.path = path
        unlink(path)
        guard let fd = UnixSocket.bind(path, type: Int32(SOCK_DGRAM.rawValue)) else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        self.fd = fd
        chmod(path, 0o666)
        UnixSocket.setReceiveTimeout(fd, seconds: timeout)
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// The next datagram, or nil after the time-out.
    public func receive() -> Data? {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = recv(fd, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return Data(buffer[..<count])
    }

    /// Collects datagrams until `condition` holds for what arrived so far, or `timeout` seconds pass.
    public func collect(timeout: Double, into messages: inout [Data], until condition: ([Data]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(messages) { return true }
            if let message = receive() { messages.append(message) }
        }
        return condition(messages)
    }
}
