// SPDX-License-Identifier: Apache-2.0
import Foundation
import ShakeServer
import ShakeTestSupport
import Testing

/// A client that sends requests without reading the answers stalls itself: the server stops reading its requests
/// while answers wait, instead of reading on and piling answers up (or cutting it off).
struct RequestPauseTests {
    @Test func aClientThatAsksWithoutReadingIsNoLongerReadUntilItReads() async throws {
        var configuration = ServerConfiguration()
        configuration.queueLimit = 16
        let harness = try await ServerHarness(configuration: configuration)
        let raw = try RawClient(path: harness.path)
        #expect(raw.readLine()?.contains("hello") == true)
        _ = fcntl(raw.fd, F_SETFL, fcntl(raw.fd, F_GETFL) | O_NONBLOCK)
        // 3,000 requests a write; 4 MB in all is more than any socket buffer holds.
        let block = Array(String(repeating: #"{"request":"status"}"# + "\n", count: 3000).utf8)
        var written = 0
        var stalled = false
        var offset = 0
        while written < 4 << 20 {
            let count = block.withUnsafeBytes { Foundation.write(raw.fd, $0.baseAddress! + offset, $0.count - offset) }
            if count > 0 {
                written += count
                offset = (offset + count) % block.count
                continue
            }
            guard errno == EAGAIN else { break }
            // Full: a server that reads on makes room again; one that stopped reading does not.
            var descriptor = pollfd(fd: raw.fd, events: Int16(POLLOUT), revents: 0)
            if poll(&descriptor, 1, 2000) == 0 {
                stalled = true
                break
            }
        }
        #expect(stalled, "the server read \(written) bytes of requests while its answers waited")
        // Reading again: the answers come, and the server reads the rest; the client is not cut off.
        _ = fcntl(raw.fd, F_SETFL, fcntl(raw.fd, F_GETFL) & ~O_NONBLOCK)
        var answers = 0
        while answers < 1000, let line = raw.readLine() {
            #expect(!line.contains("too_slow"))
            if line.contains(#""event":"status""#) { answers += 1 }
        }
        #expect(answers == 1000)
        #expect(await harness.server.clientCount() == 1)
        await harness.stop()
    }
}
