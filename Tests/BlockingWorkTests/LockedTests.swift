// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import Testing

struct LockedTests {
    /// Increments from several threads at once, each a read and a write of the value under the lock: without
    /// mutual exclusion two threads read the same count and one of the increments is lost.
    @Test func incrementsFromSeveralThreadsAtOnceAreAllKept() async throws {
        let counter = Locked(0)
        let threads = 4
        let increments = 50_000
        var started: [BlockingThread] = []
        for index in 0..<threads {
            started.append(
                try #require(
                    BlockingThread.start(name: "test-locked-\(index)") {
                        for _ in 0..<increments {
                            counter.withLock { value in
                                let read = value
                                value = read &+ 1
                            }
                        }
                    }))
        }
        for thread in started { await thread.join() }
        #expect(counter.withLock { $0 } == threads * increments)
    }

    /// What the body returns and throws reaches the caller; the lock is free again afterwards.
    @Test func theBodysResultAndErrorArePassedOn() throws {
        struct Refused: Error, Equatable {}
        let names = Locked(["first"])
        let count = names.withLock { names in
            names.append("second")
            return names.count
        }
        #expect(count == 2)
        #expect(throws: Refused()) {
            try names.withLock { (_: inout [String]) throws(Refused) in throw Refused() }
        }
        #expect(names.withLock { $0 } == ["first", "second"])
    }

    /// A value that cannot be copied is kept and changed in place, as the client's line buffer keeps its state.
    @Test func aValueThatCannotBeCopiedIsKept() {
        struct Token: ~Copyable { var uses = 0 }
        let token = Locked(Token())
        token.withLock { $0.uses += 1 }
        #expect(token.withLock { $0.uses } == 1)
    }
}
