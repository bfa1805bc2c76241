// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import Logging
import ServiceLifecycle
import Synchronization
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// Standard output for `--print-events`: lines are queued (``OutputQueue``, bounded, the oldest dropped) by
/// whoever publishes, and written by a thread of the writer's own (`shaked-stdout`), which waits in `poll(2)` for
/// the descriptor to take more, or for more lines, or for the stop. A reader of that pipe who stops reading fills
/// the queue and loses events (counted, logged once as it stalls and once in a summary), and holds up nothing
/// else: not capture, not the socket, not the bus.
///
/// A line is written only once `poll` says the descriptor takes more, one line (well under `PIPE_BUF`) at a
/// time: a pipe or a socket then takes it without blocking, so that a stop is never stuck behind a full pipe.
final class StandardOutputWriter: Sendable {
    private let queue: Locked<OutputQueue>
    private let descriptor: Int32
    /// Rung when lines come into an empty queue, and at the stop.
    private let bell = Wakeup()
    private let stopping = Atomic(false)
    private let logger: Logger

    /// Lines held for a reader that does not keep up (about 200 bytes each).
    static let defaultLimit = 1024
    /// How long the writer goes on writing what is queued once it is told to stop.
    static let drainTime = Duration.seconds(1)

    init(descriptor: Int32 = STDOUT_FILENO, limit: Int = StandardOutputWriter.defaultLimit, logger: Logger) {
        self.descriptor = descriptor
        queue = Locked(OutputQueue(limit: limit))
        self.logger = logger
    }

    /// Queues `line` for the writer. Never blocks: past the limit, the oldest line is dropped.
    func write(_ line: [UInt8]) {
        switch queue.withLock({ $0.offer(line) }) {
        case .queued(let wake):
            if wake { bell.signal() }
        case .droppedOldest(let firstOfStall):
            if firstOfStall {
                logger.warning(
                    "standard output is not being read: events are not printed until it is",
                    metadata: ["queued": "\(queue.withLock { $0.limit })"])
            }
        case .closed:
            break
        }
    }

    /// Lines dropped so far (counted while the writer runs, and those it never wrote once it stopped).
    var dropped: Int { queue.withLock { $0.dropped } }

    /// Tells the writer to stop once it has written what is queued, or after ``drainTime``.
    func stop() {
        stopping.store(true, ordering: .releasing)
        bell.signal()
    }

    /// There is no writer: nothing is queued from now on.
    func abandon() {
        _ = queue.withLock { $0.close() }
    }

    /// The writer's thread: writes what is queued as the descriptor takes it, until ``stop()`` (and the drain) or
    /// a failed write.
    func run() {
        var pending: [[UInt8]] = []
        var next = 0
        var deadline: ContinuousClock.Instant?
        var failed = false
        while true {
            if next == pending.count {
                pending = queue.withLock { $0.take() }
                next = 0
                if pending.isEmpty {
                    if let dropped = queue.withLock({ $0.caughtUp() }) {
                        logger.notice(
                            "standard output is read again; events were not printed meanwhile",
                            metadata: ["dropped": "\(dropped)"])
                    }
                    if stopping.load(ordering: .acquiring) { break }
                }
            }
            var timeout: Duration?
            if stopping.load(ordering: .acquiring) {
                let end = deadline ?? ContinuousClock.now + Self.drainTime
                deadline = end
                let remaining = ContinuousClock.now.duration(to: end)
                if remaining <= .zero { break }
                timeout = remaining
            }
            var descriptors = [pollfd(fd: bell.fileDescriptor, events: Int16(POLLIN), revents: 0)]
            if next < pending.count { descriptors.append(pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)) }
            guard case .success = Readiness.wait(&descriptors, timeout: timeout) else { break }
            if descriptors[0].revents != 0 { bell.consume() }
            // Writable, or an error or hang-up, which the write then reports.
            if descriptors.count > 1, descriptors[1].revents != 0 {
                do throws(WriteFailure) {
                    try Self.write(pending[next], to: descriptor)
                    next += 1
                } catch {
                    // A reader that went away is not worth a crash; the events still reach the log and the socket.
                    logger.warning(
                        "standard output failed: events are no longer printed", metadata: ["error": "\(error)"])
                    failed = true
                    break
                }
            }
        }
        let unwritten = pending.count - next
        let lost = queue.withLock { $0.close(unwritten: unwritten) }
        if let lost, !failed {
            logger.warning(
                "events were not printed: standard output was not read", metadata: ["dropped": "\(lost)"])
        }
    }

    struct WriteFailure: Error, CustomStringConvertible {
        var errno: Errno
        var description: String { errno.description }
    }

    /// Every byte of `bytes`, or the error.
    private static func write(_ bytes: [UInt8], to descriptor: Int32) throws(WriteFailure) {
        do {
            _ = try bytes.withUnsafeBytes { try FileDescriptor(rawValue: descriptor).writeAll($0) }
        } catch let error as Errno {
            throw WriteFailure(errno: error)
        } catch {
            throw WriteFailure(errno: .ioError)
        }
    }
}

/// Standard output's writer as a service of the group: its thread runs while the group does, and on shutdown
/// writes what the last events left queued (within ``StandardOutputWriter/drainTime``) before the service
/// returns. Listed before the source, so that it stops after it.
struct StandardOutputService: Service {
    let writer: StandardOutputWriter
    let logger: Logger

    func run() async {
        let writer = self.writer
        let logger = self.logger
        await withTaskCancellationOrGracefulShutdownHandler {
            guard let thread = BlockingThread.start(name: "shaked-stdout", { writer.run() }) else {
                logger.error("cannot start standard output's writer: events are not printed")
                writer.abandon()
                return
            }
            await thread.join()
        } onCancelOrGracefulShutdown: {
            writer.stop()
        }
    }
}
