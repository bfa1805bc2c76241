// SPDX-License-Identifier: Apache-2.0
public import IIOModel

/// When buffered capture reads while only the relay to iio-sensor-proxy reads the sensor: just before
/// iio-sensor-proxy's polls, as ``PollPhase`` plans from the opens of the relay's node (the daemon's relay
/// follows them).
public protocol RelayReadTiming: AnyObject, Sendable {
    /// The next read, planned at `now` (monotonic seconds), and the descriptor that becomes readable when the
    /// relay's node is opened (for a plan that reads at the open); nil: no plan (every ``ReadPacing/relay``
    /// seconds).
    func nextRead(now: Double) -> (plan: PollPhase.Plan, watch: Int32?)?
    /// The watch became readable at `time` while a read waited for an open.
    /// - Returns: whether the relay's node was opened (else the wait goes on: another input node's open).
    func watchReady(at time: Double) -> Bool
    /// A planned read (``PollPhase/Plan/read(at:)``) is about to happen: the opens since it was planned are
    /// counted (its poll may have come first).
    func willRead()
}
