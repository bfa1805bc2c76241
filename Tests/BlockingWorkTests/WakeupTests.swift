// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import Testing

#if canImport(Glibc)
    import Glibc
#endif

struct WakeupTests {
    /// Whether `wakeup`'s descriptor is readable now.
    private func readable(_ wakeup: Wakeup) -> Bool {
        var descriptors = [pollfd(fd: wakeup.fileDescriptor, events: Int16(POLLIN), revents: 0)]
        return (try? Readiness.wait(&descriptors, timeout: .zero).get()) == 1
    }

    @Test func aSignalFromAnotherThreadEndsASleep() throws {
        let wakeup = Wakeup()
        let thread = try #require(BlockingThread.start(name: "test-signal") { wakeup.signal() })
        #expect(wakeup.sleep(for: .seconds(600)))
        #expect(wakeup.isSignalled)
        thread.join()
    }

    @Test func anUnsignalledSleepEndsWithItsTime() {
        let wakeup = Wakeup()
        #expect(wakeup.fileDescriptor >= 0)
        #expect(!wakeup.sleep(for: .milliseconds(1)))
        #expect(!wakeup.isSignalled)
        #expect(!readable(wakeup))
    }

    /// As a stop signal: every wait after the signal returns at once, however many there are.
    @Test func aStopSignalStays() {
        let wakeup = Wakeup()
        wakeup.signal()
        wakeup.signal()
        for _ in 0..<3 {
            #expect(wakeup.sleep(for: .seconds(600)))
            #expect(readable(wakeup))
        }
    }

    /// As a doorbell: consumed, it no longer wakes a wait, and the next signal does.
    @Test func aConsumedDoorbellRingsAgain() {
        let wakeup = Wakeup()
        wakeup.signal()
        wakeup.signal()
        wakeup.consume()
        #expect(!wakeup.isSignalled)
        #expect(!readable(wakeup))
        #expect(!wakeup.sleep(for: .milliseconds(1)))
        wakeup.signal()
        #expect(readable(wakeup))
        #expect(wakeup.sleep(for: .seconds(600)))
    }

    @Test func millisecondsRoundUp() {
        #expect(Wakeup.milliseconds(.zero) == 0)
        #expect(Wakeup.milliseconds(.nanoseconds(1)) == 1)
        #expect(Wakeup.milliseconds(.milliseconds(1500)) == 1500)
        #expect(Wakeup.milliseconds(.seconds(-1)) == 0)
        #expect(Wakeup.milliseconds(.seconds(Int64.max / 2)) == Int32.max)
    }
}
