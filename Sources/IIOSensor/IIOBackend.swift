// SPDX-License-Identifier: Apache-2.0
public import BlockingWork
public import IIOModel
public import Logging

/// The seam between the sensor logic and libiio.
///
/// Everything IIOSensor needs from libiio goes through these protocols; `LibIIO.swift` implements them with the
/// real library and the tests implement them with fakes, so discovery, the drivers and hotplug handling run
/// without libiio or a kernel. Attributes are named as sysfs names them (`in_accel_x_raw`, `in_accel_scale`,
/// `sampling_frequency`), whatever libiio makes of them.
public protocol IIOBackend: Sendable {
    /// A new context listing the devices present now. libiio has no hotplug: a context never changes, so a
    /// device that appears or vanishes needs a new one.
    /// - Throws: ``IIOError``; ``IIOError/isNoDevices`` when there is no IIO device at all (not yet).
    func makeContext() throws(IIOError) -> any IIOContextHandle

    /// A cheap fingerprint of the devices present (the entries of `/sys/bus/iio/devices`), or nil where the
    /// backend cannot tell without a new context (a remote one). When it changes, the devices changed.
    func devicesFingerprint() -> String?

    /// The backend sending what the library itself reports (libiio's own warnings and errors) to `logger`.
    func logging(to logger: Logger) -> any IIOBackend
}

extension IIOBackend {
    public func logging(to logger: Logger) -> any IIOBackend { self }
}

/// One context: the devices it saw at its creation, and access to their attributes and buffers.
public protocol IIOContextHandle: AnyObject {
    /// The devices and triggers, as they were when the context was created.
    var devices: [IIODeviceInfo] { get }

    /// Reads an attribute by its sysfs name, without the trailing newline.
    func read(device: String, attribute: String) throws(IIOError) -> String
    /// Writes an attribute by its sysfs name.
    func write(device: String, attribute: String, value: String) throws(IIOError)
    /// Writes an attribute of the device's buffer (`buffer/<name>`).
    func writeBuffer(device: String, attribute: String, value: String) throws(IIOError)
    /// Sets the device's trigger (by the trigger's id, `trigger0`), or clears it with nil.
    func setTrigger(device: String, trigger: String?) throws(IIOError)
    /// Enables exactly the given scan elements (by channel id: `accel_x`, `timestamp`) and starts a buffer of
    /// `samples` scans, in non-blocking mode where the backend has one (see ``IIOBufferHandle/readsBlock``). The
    /// kernel's buffer holds `blocks` times `samples` scans: libiio sets its length so as it starts the buffer, over
    /// whatever was written before.
    func openBuffer(device: String, channels: [String], samples: Int, blocks: Int) throws(IIOError)
        -> any IIOBufferHandle
    /// udev's properties of the device (`ACCEL_MOUNT_MATRIX`, `ACCEL_LOCATION`), where the backend can see them.
    func udevProperties(device: String) -> [String: String]
    /// How the device's buffer, trigger, scan elements and rate are set up now; nil where the backend cannot
    /// see it (a remote context).
    func deviceState(device: String) -> DeviceState?
    /// Performs the writes in order (files relative to the device's sysfs directory).
    /// - Returns: the writes that failed, with why.
    func apply(device: String, writes: [DeviceState.Write]) -> [(DeviceState.Write, IIOError)]
}

extension IIOContextHandle {
    public func deviceState(device: String) -> DeviceState? { nil }
    public func apply(device: String, writes: [DeviceState.Write]) -> [(DeviceState.Write, IIOError)] {
        writes.map { ($0, IIOError(code: 95, operation: "writing \($0) of \(device)", reason: "not supported")) }
    }
}

/// A started buffer. Destroying it (``close()``) stops the capture.
public protocol IIOBufferHandle: AnyObject {
    /// Waits until data is ready, the timeout passes, or `wakeup` is signalled.
    func wait(timeout: Duration, wakeup: Wakeup) -> WaitOutcome
    /// The bytes available now (whole scans as the kernel packs them); empty when nothing is ready.
    /// - Throws: ``IIOError`` when the device failed or vanished.
    func read() throws(IIOError) -> [UInt8]
    /// Stops the capture and frees the buffer. Idempotent.
    func close()
    /// Whether ``wait(timeout:wakeup:)`` cannot be used and ``read()`` blocks instead until a read's worth of
    /// scans has come (or the context's timeout has passed, which fails it): a remote buffer, through iiod, has
    /// no file descriptor to poll and no non-blocking mode.
    var readsBlock: Bool { get }
}

extension IIOBufferHandle {
    public var readsBlock: Bool { false }
}

/// Why a wait returned.
public enum WaitOutcome: Sendable, Hashable {
    case ready
    case timedOut
    /// The wakeup was signalled: stop.
    case stopped
    /// The device's file reported an error or hang-up.
    case failed
}

/// A failure reported by libiio (a negative errno) or by the seam.
public struct IIOError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The errno (positive), or 0 when there is none.
    public var code: Int32
    /// What was being done: `reading in_accel_x_raw of iio:device0`.
    public var operation: String
    /// The system's text for the errno.
    public var reason: String

    public init(code: Int32, operation: String, reason: String) {
        self.code = code
        self.operation = operation
        self.reason = reason
    }

    public var description: String { "\(operation): \(reason)" + (code != 0 ? " (errno \(code))" : "") }

    /// ENOENT from creating a local context: no IIO device exists (yet).
    public var isNoDevices: Bool { code == 2 }
    /// EBUSY: another program holds the device (its node open, or its buffer or trigger in use).
    public var isBusy: Bool { code == 16 }
    /// EACCES or EPERM: the daemon may not write the attribute (yet: udev gives its group a new device's
    /// attributes a moment after the device appears).
    public var isPermissionDenied: Bool { code == 13 || code == 1 }
    /// The device is gone: ENODEV, ENXIO, EBADF, ENOENT. (EIO may be a passing bus error.)
    public var isDeviceGone: Bool { [19, 6, 9, 2].contains(code) }
}
