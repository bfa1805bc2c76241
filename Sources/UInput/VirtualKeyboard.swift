// SPDX-License-Identifier: Apache-2.0
/// A uinput keyboard that types key chords. Compositors (Wayland and X11) take it as a keyboard.
///
/// ```swift
/// let keyboard = try VirtualKeyboard(name: "shaked keyboard", chords: [try KeyChord(parsing: "ctrl+z")])
/// try keyboard.send(try KeyChord(parsing: "ctrl+z"))
/// ```
///
/// The keyboard can press only the keys declared when it is made (`chords`, or `keys` for more); ``send(_:)``
/// refuses a chord with others. Compositors may need a moment after creation to add the device: a command that
/// makes a keyboard to send one chord should wait briefly before sending. Destroyed on ``close()`` or deinit.
/// Not thread-safe: one owner sends.
public final class VirtualKeyboard {
    private let device: UInputDevice
    /// The key codes this keyboard can press.
    public let keys: Set<UInt16>

    /// The device's name under /sys/devices/virtual/input (`input7`), when the kernel told it.
    public var systemName: String? { device.systemName }

    /// Creates the device with the keys of `chords` and `keys`.
    public init(
        name: String, chords: [KeyChord], keys: [UInt16] = [], phys: String? = nil, path: String = "/dev/uinput"
    ) throws(UInputError) {
        let all = Set(chords.flatMap(\.keyCodes) + keys)
        self.keys = all
        device = try UInputDevice(path: path, identity: .init(name: name, phys: phys), keys: all.sorted())
    }

    /// Types the chord once: modifiers and key down, a report, all up in reverse, a report.
    /// - Throws: ``UInputError`` with `EINVAL` for a key not declared at creation, or the write's error.
    public func send(_ chord: KeyChord) throws(UInputError) {
        guard chord.keyCodes.allSatisfy(keys.contains) else {
            throw UInputError(operation: "send \(chord) (key not declared)", path: device.path, errno: 22)
        }
        try device.write(chord.events)
    }

    /// Destroys the device. Idempotent.
    public func close() { device.destroy() }
}
