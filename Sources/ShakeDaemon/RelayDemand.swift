// SPDX-License-Identifier: Apache-2.0
/// Whether anything reads the relay's input device, decided from the opens and closes of its evdev node without
/// a clock or a file (the caller passes the time and what it saw).
///
/// iio-sensor-proxy's input accelerometer driver opens the node, reads its three axes and closes it every 700 ms
/// while one of its clients claims the accelerometer (a shell while the screen is on and rotation unlocked), and
/// not at all otherwise; it also reads it once when it finds the device. So the node opened within ``timeout``,
/// or held open now, means somebody wants orientation; nothing for longer means nobody does, and the sensor can
/// be off until the next open.
public struct RelayDemand: Sendable, Equatable {
    /// Seconds without an open after which the device counts as unread: four of iio-sensor-proxy's reads, so
    /// that a late one (a busy system) is not taken for a release.
    public static let timeout = 3.0

    public enum Change: Sendable, Equatable {
        /// Something began to read the device: capture for the relay again.
        case read
        /// Nothing has read it for ``timeout``: the sensor may be off.
        case unread
    }

    /// Whether the device counts as read now.
    public private(set) var isRead: Bool
    /// The last open seen (or the device's creation, which counts as one: iio-sensor-proxy reads a device it
    /// has just found).
    public private(set) var lastOpen: Double
    /// Opens not yet matched by a close: a reader that keeps the node open.
    public private(set) var holders = 0

    /// A device made at `now`: read until ``timeout`` has passed without an open.
    public init(createdAt now: Double) {
        isRead = true
        lastOpen = now
    }

    /// The opens and closes seen since the last call, at `now` (monotonic seconds); with none, only the time
    /// passes.
    public mutating func observed(opens: Int, closes: Int, at now: Double) -> Change? {
        let opens = max(0, opens)
        if opens > 0 { lastOpen = max(lastOpen, now) }
        // A close of an open made before the watch began is not counted below zero.
        holders = max(0, holders + opens - max(0, closes))
        let read = holders > 0 || now - lastOpen < Self.timeout
        guard read != isRead else { return nil }
        isRead = read
        return read ? .read : .unread
    }
}
