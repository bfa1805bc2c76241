// SPDX-License-Identifier: Apache-2.0
import NumberFormat

/// How a buffer read through iiod (libiio's network backend) is bounded, and what its failure says.
///
/// libiio 0.24 reads a remote buffer with blocking reads and waits for each of iiod's answers at most the
/// context's timeout. A peer that stops answering without closing the connection (the network link down, the
/// machine behind it asleep) then fails the read with EPIPE, as a connection that iiod closed fails it at once:
/// the time the read took tells the two apart, for the log. Closing the buffer then asks iiod to close it and
/// waits for the answer, the timeout again: the capture ends the stream first (a shake in progress is
/// interrupted at the failed read). The request is not skipped (`iio_buffer_cancel`): iiod 0.24, left without
/// it, kept the device's buffer for the dead connection once the link was back, and the next connection's
/// reads got nothing.
public enum RemoteRead {
    /// The context's timeout, seconds: the longest a remote read waits for iiod's next bytes. A still sensor
    /// that reports on change only stays silent longer, and the capture then connects again.
    public static let timeout = 2.0

    /// The reason a failed remote read gives in the log.
    /// - Parameters:
    ///   - brokenPipe: whether libiio failed it with EPIPE (its word for both a closed connection and no answer).
    ///   - waited: seconds the read took.
    ///   - described: the system's text for the error.
    public static func failureReason(brokenPipe: Bool, waited: Double, described: String) -> String {
        // (a poll that times out returns a little after the timeout, never before: 0.9 leaves room for the
        // clock's granularity only)
        guard brokenPipe, waited >= timeout * 0.9 else { return described }
        return "no answer from iiod for \(DecimalText.format(timeout)) s (the network link or the machine serving "
            + "the sensor may be down)"
    }
}
