// SPDX-License-Identifier: Apache-2.0
import IIOModel
import Logging
import NumberFormat

/// Whether the system slept since `last` (the seconds asleep since boot when last asked), which becomes `now`;
/// a sleep of ``BufferSilence/sleepThreshold`` or more is logged once, for both drivers alike.
func noteSleep(now: Double, since last: inout Double, device: String, logger: Logger) -> Bool {
    let slept = now - last
    last = now
    guard slept >= BufferSilence.sleepThreshold else { return false }
    logger.info(
        "the system slept; the sensor's stream starts again",
        metadata: ["device": "\(device)", "seconds": "\(DecimalText.format((slept * 10).rounded() / 10))"])
    return true
}
