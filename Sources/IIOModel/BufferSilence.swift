// SPDX-License-Identifier: Apache-2.0
/// What a buffered sensor's silence means, once the system may have slept since its last data.
///
/// A buffer that delivers nothing for a while is given up on (the capture polls the sensor instead). But across
/// a suspend to RAM the sensor is silent because the system was asleep, and on the way down, with user space
/// frozen, the kernel may take many seconds on the monotonic clock (15 s in the emulated guest) before it sleeps:
/// neither is the buffer's fault. The monotonic clock stops while the system sleeps and the boot-time clock
/// does not, so the distance between them grows by the time asleep and by nothing else: a growth since the last
/// data says the system slept, and the stream breaks there (a shake in progress is interrupted) while the buffer
/// is kept.
public enum BufferSilence: Sendable, Hashable {
    /// Within the limit: keep waiting.
    case waiting
    /// The system slept this many seconds since the last data: break the stream and count the silence afresh.
    case slept(seconds: Double)
    /// Silent this many seconds, past the limit, awake: give the buffer up.
    case silent(seconds: Double)

    /// Growth of the boot-time clock over the monotonic one, in seconds, past which the system counts as having
    /// slept (the two do not drift apart while it is awake).
    public static let sleepThreshold = 0.05

    /// - Parameters:
    ///   - silent: seconds on the monotonic clock since the last data.
    ///   - slept: how much further the boot-time clock has moved than the monotonic one since the last data.
    ///   - limit: the silence past which the buffer is given up.
    public static func judge(silent: Double, slept: Double, limit: Double) -> BufferSilence {
        if slept >= sleepThreshold { return .slept(seconds: slept) }
        if silent >= limit { return .silent(seconds: silent) }
        return .waiting
    }
}
