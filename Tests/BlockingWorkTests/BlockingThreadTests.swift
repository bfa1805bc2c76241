// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import CThreads
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The name the calling thread has, as the kernel keeps it.
private func currentThreadName() -> String {
    var name = [CChar](repeating: 0, count: 64)
    guard shaked_thread_name(&name, name.count) == 0 else { return "" }
    return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

struct BlockingThreadTests {
    /// A join that returned before the body had ended (as a flag polled at intervals could) would find the body's
    /// last steps not yet done.
    @Test func aJoinReturnsOnlyAfterTheBodyHasEnded() throws {
        let running = Wakeup()
        let release = Wakeup()
        let steps = Atomic<Int>(0)
        let thread = try #require(
            BlockingThread.start(name: "test-join") {
                running.signal()
                release.sleep(for: .seconds(600))
                for _ in 0..<10_000 { steps.add(1, ordering: .relaxed) }
            })
        running.sleep(for: .seconds(600))
        #expect(!thread.isFinished)
        release.signal()
        thread.join()
        #expect(thread.isFinished)
        let stepsDone = steps.load(ordering: .relaxed)
        #expect(stepsDone == 10_000)
    }

    @Test func anAwaitedJoinReturnsAfterTheBodyHasEnded() async throws {
        let release = Wakeup()
        let ended = Atomic<Bool>(false)
        let thread = try #require(
            BlockingThread.start(name: "test-async") {
                release.sleep(for: .seconds(600))
                ended.store(true, ordering: .releasing)
            })
        release.signal()
        await thread.join()
        let endedBeforeJoinReturned = ended.load(ordering: .acquiring)
        #expect(endedBeforeJoinReturned)
        // Once finished, further joins of either kind return at once.
        await thread.join()
        #expect(thread.join(timeout: .zero))
    }

    /// A thread that has ended leaves its id to the system, which gives it to the next thread it starts (glibc
    /// reuses a detached thread's cached stack, and the id is that stack's address): a join made from such a later
    /// thread must not take itself for the ended one and refuse to wait.
    @Test func aJoinFromALaterThreadWithTheSameIdReturnsAtOnce() async throws {
        let ended = try #require(BlockingThread.start(name: "test-ended") {})
        await ended.join()
        let joined = Atomic<Int>(0)
        for index in 0..<50 {
            let later = try #require(
                BlockingThread.start(name: "test-later-\(index)") {
                    if ended.join(timeout: .zero) { joined.add(1, ordering: .relaxed) }
                })
            await later.join()
        }
        #expect(joined.load(ordering: .relaxed) == 50)
    }

    @Test func aTimedJoinSaysWhetherTheBodyEnded() throws {
        let release = Wakeup()
        let thread = try #require(BlockingThread.start(name: "test-timed") { release.sleep(for: .seconds(600)) })
        #expect(!thread.join(timeout: .milliseconds(1)))
        release.signal()
        #expect(thread.join(timeout: .seconds(600)))
    }

    @Test func theThreadCarriesItsName() throws {
        let seen = Mutex<String>("")
        let thread = try #require(
            BlockingThread.start(name: "shaked-test") { seen.withLock { $0 = currentThreadName() } })
        thread.join()
        #expect(seen.withLock { $0 } == "shaked-test")
    }

    @Test func aLongNameKeepsTheKernelsFifteenBytes() throws {
        #expect(BlockingThread.kernelName("shaked-sessions-and-more") == "shaked-sessions")
        #expect(BlockingThread.kernelName("ääääääää") == "äääääää")  // 14 bytes: the eighth would split
        let seen = Mutex<String>("")
        let thread = try #require(
            BlockingThread.start(name: "shaked-sessions-and-more") { seen.withLock { $0 = currentThreadName() } })
        thread.join()
        #expect(seen.withLock { $0 } == "shaked-sessions")
        #expect(thread.name == "shaked-sessions-and-more")
    }

    /// A handler run by the body that closes its owner joins from the thread itself: that must not wait for itself.
    @Test func aJoinOnTheThreadItselfReturns() throws {
        let inner = Mutex<(joined: Bool, timed: Bool)?>(nil)
        let handle = Mutex<BlockingThread?>(nil)
        let ready = Wakeup()
        let thread = try #require(
            BlockingThread.start(name: "test-self") {
                ready.sleep(for: .seconds(600))
                guard let me = handle.withLock({ $0 }) else { return }
                me.join()
                inner.withLock { $0 = (true, me.join(timeout: .seconds(600))) }
            })
        handle.withLock { $0 = thread }
        ready.signal()
        thread.join()
        #expect(inner.withLock { $0?.joined } == true)
        #expect(inner.withLock { $0?.timed } == false)
    }
}
