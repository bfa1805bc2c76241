// SPDX-License-Identifier: Apache-2.0
import ShakeClient
import ShakeDetection
import ShakeProtocol
import ShakeTestSupport
import Testing

/// A subscriber that remembers where it was across its own restarts (shaked-mqtt's cursor) resumes with `since`
/// and the run that seq belongs to: after it in the same run, everything of another run.
@Suite(.serialized)
struct ClientResumeTests {
    /// The seqs of the first `count` shake updates; fewer if they do not come while the harness waits.
    static func seqs(_ client: ShakeClient, since: Int, run: String, count: Int) async throws -> [Int] {
        let received = ServerHarness.Counter()
        let collected = Task {
            var seqs: [Int] = []
            for try await update in client.updates(since: since, run: run) {
                if case .shake(let notification) = update { seqs.append(notification.seq) }
                received.set(seqs.count)
                if seqs.count == count { break }
            }
            return seqs
        }
        // A deadline, so that a client that missed something fails the test instead of waiting forever.
        if !(await ServerHarness.eventually { received.current == count }) { collected.cancel() }
        return try await collected.value
    }

    @Test func sinceResumesInItsOwnRunAndAnotherRunIsDeliveredWhole() async throws {
        let harness = try await ServerHarness()
        for time in 1...3 { harness.publish(.began(time: Double(time))) }
        let connection = try await harness.client.connect()
        let run = connection.hello.run
        #expect(connection.hello.seq == 3)
        await connection.closeAndWait()
        #expect(try await Self.seqs(harness.client, since: 2, run: run, count: 1) == [3])
        // A seq of an earlier run of the daemon means nothing in this one: all three are new.
        #expect(try await Self.seqs(harness.client, since: 2, run: "an-earlier-run", count: 3) == [1, 2, 3])
        await harness.stop()
    }
}
