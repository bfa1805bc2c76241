// SPDX-License-Identifier: Apache-2.0
import IIOModel
import Testing

/// What the log says of a failed read through iiod: libiio fails it with EPIPE both when iiod closed the
/// connection and when no answer came within the context's timeout (the link or the machine behind it down).
struct RemoteReadTests {
    @Test func aReadThatWaitedTheTimeoutSaysNoAnswerCame() {
        let reason = RemoteRead.failureReason(brokenPipe: true, waited: 2.003, described: "Broken pipe")
        #expect(
            reason == "no answer from iiod for 2 s (the network link or the machine serving the sensor may be down)")
    }

    @Test(arguments: [
        (true, 0.01, "Broken pipe"),  // iiod closed the connection (killed, or the sensor gone)
        (false, 2.5, "Connection reset by peer"),
    ])
    func otherFailuresKeepTheSystemsWords(brokenPipe: Bool, waited: Double, described: String) {
        #expect(RemoteRead.failureReason(brokenPipe: brokenPipe, waited: waited, described: described) == described)
    }
}
