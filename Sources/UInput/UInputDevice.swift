// SPDX-License-Identifier: Apache-2.0
internal import CUInput

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One virtual input device made through /dev/uinput: set up, created, written, destroyed. The only user of the
/// uinput ioctls; ``VirtualAccelerometer`` and ``VirtualKeyboard`` are built on it.
///
/// Not thread-safe: one owner writes it (the relay's task, or a command). `destroy()` is idempotent and runs on
/// deinit, so the device disappears with its owner.
final class UInputDevice {
    let path: String
    private var descriptor: Int32
    /// The device's name under /sys/devices/virtual/input (`input7`), once created.
    private(set) var systemName: String?

    struct Identity {
        var name: String
        var phys: String?
        var bus: UInt16 = 0x06  // BUS_VIRTUAL
        var vendor: UInt16 = 0
        var product: UInt16 = 0
        var version: UInt16 = 1
    }

    struct Axis {
        var axis: AbsoluteAxis
        var range: ClosedRange<Int32>
        var resolution: Int32
        var value: Int32
    }

    /// Opens `path`, declares the capabilities, creates the device.
    init(
        path: String, identity: Identity, properties: [Int32] = [], keys: [UInt16] = [], axes: [Axis] = []
    ) throws(UInputError) {
        self.path = path
        descriptor = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw UInputError(operation: "open", path: path, errno: Glibc.errno) }
        do {
            try configure(identity: identity, properties: properties, keys: keys, axes: axes)
        } catch {
            close(descriptor)
            descriptor = -1
            throw error
        }
    }

    private func configure(
        identity: Identity, properties: [Int32], keys: [UInt16], axes: [Axis]
    ) throws(UInputError) {
        for property in properties {
            try check("UI_SET_PROPBIT", shaked_uinput_set_propbit(descriptor, property))
        }
        if !keys.isEmpty {
            try check("UI_SET_EVBIT", shaked_uinput_set_evbit(descriptor, Int32(InputEvent.keyType)))
            for key in Set(keys) { try check("UI_SET_KEYBIT", shaked_uinput_set_keybit(descriptor, Int32(key))) }
        }
        if !axes.isEmpty {
            try check("UI_SET_EVBIT", shaked_uinput_set_evbit(descriptor, Int32(InputEvent.absoluteType)))
            for axis in axes {
                try check("UI_SET_ABSBIT", shaked_uinput_set_absbit(descriptor, Int32(axis.axis.rawValue)))
                try check(
                    "UI_ABS_SETUP",
                    shaked_uinput_abs_setup(
                        descriptor, axis.axis.rawValue, axis.range.lowerBound, axis.range.upperBound, 0, 0,
                        axis.resolution, axis.value))
            }
        }
        if let phys = identity.phys { try check("UI_SET_PHYS", shaked_uinput_set_phys(descriptor, phys)) }
        try check(
            "UI_DEV_SETUP",
            shaked_uinput_setup(
                descriptor, identity.name, identity.bus, identity.vendor, identity.product, identity.version))
        try check("UI_DEV_CREATE", shaked_uinput_create(descriptor))
        var buffer = [CChar](repeating: 0, count: 64)
        if shaked_uinput_sysname(descriptor, &buffer, buffer.count - 1) >= 0 {
            systemName = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// Writes the events in order, at most 16 per write(2).
    func write(_ events: [InputEvent]) throws(UInputError) {
        guard descriptor >= 0 else { throw UInputError(operation: "write", path: path, errno: EBADF) }
        var start = 0
        while start < events.count {
            let batch = events[start..<min(start + 16, events.count)]
            let types = batch.map(\.type)
            let codes = batch.map(\.code)
            let values = batch.map(\.value)
            try check("write", shaked_uinput_write_events(descriptor, types, codes, values, batch.count))
            start += batch.count
        }
    }

    /// Destroys the device and closes /dev/uinput. Idempotent.
    func destroy() {
        guard descriptor >= 0 else { return }
        _ = shaked_uinput_destroy(descriptor)
        close(descriptor)
        descriptor = -1
    }

    deinit { destroy() }

    private func check(_ operation: String, _ result: Int32) throws(UInputError) {
        if result < 0 { throw UInputError(operation: operation, path: path, errno: Glibc.errno) }
    }
}
