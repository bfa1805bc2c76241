// SPDX-License-Identifier: Apache-2.0
/// A sensor that has just appeared is opened as soon as the daemon sees it, and udev may not yet have given the
/// daemon's group the sysfs attributes it writes (60-shaked.rules changes them in a program it runs after the
/// device node is made): setting the rate, the trigger or the buffer is refused (EACCES, EPERM). Set-up is then
/// tried again after ``first`` seconds, twice as long after each refusal, at most ``maximumTries`` times for one
/// device (0.25 s to 8 s, about 16 s in all by default); only then does the source settle for what it can do
/// without those writes (polling). A device given up on stays so until it is no longer present. No I/O, no clock.
public struct PermissionRetry: Sendable, Hashable {
    public let first: Double
    public let maximumTries: Int
    /// The device being retried, and how many times it was.
    public private(set) var device: String?
    public private(set) var tries = 0
    /// Devices given up on: set up without the refused writes until they vanish.
    public private(set) var givenUp: Set<String> = []

    public init(first: Double = 0.25, maximumTries: Int = 6) {
        self.first = first
        self.maximumTries = maximumTries
    }

    /// Whether set-up of `device` is still to be tried with the writes udev should grant.
    public func retries(_ device: String) -> Bool { !givenUp.contains(device) }

    /// Set-up of `device` was refused: the wait before the next try, seconds, or nil when the device is given up
    /// on (the source goes on without the refused writes).
    public mutating func refused(_ device: String) -> Double? {
        guard !givenUp.contains(device) else { return nil }
        if device != self.device {
            self.device = device
            tries = 0
        }
        guard tries < maximumTries else {
            givenUp.insert(device)
            self.device = nil
            tries = 0
            return nil
        }
        defer { tries += 1 }
        return first * Double(1 << min(tries, 30))
    }

    /// Set-up of `device` got past the writes: its count starts again.
    public mutating func succeeded(_ device: String) {
        if device == self.device {
            self.device = nil
            tries = 0
        }
    }

    /// The devices present now: one given up on that vanished is tried in full again when it returns.
    public mutating func present(_ devices: Set<String>) {
        givenUp.formIntersection(devices)
        if let device, !devices.contains(device) {
            self.device = nil
            tries = 0
        }
    }
}
