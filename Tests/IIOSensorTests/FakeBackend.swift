// SPDX-License-Identifier: Apache-2.0
import BlockingWork
import IIOModel
import IIOSensor
import Synchronization

/// A simulated IIO world for the tests: devices that can appear and vanish, attributes, and buffers that
/// deliver queued reads. Its clock advances only when a wait times out or a poll sleeps, so the tests run
/// without waiting on real time.
final class FakeWorld: Sendable {
    struct Device: Sendable {
        var info: IIODeviceInfo
        var values: [String: String] = [:]
        /// Reads the buffer will deliver, in order.
        var reads: [[UInt8]] = []
        /// What happens when the reads run out: the device vanishes, or the buffer falls silent.
        var vanishWhenDrained = false
        var udev: [String: String] = [:]
        /// Attributes whose writes the device refuses (EINVAL), keeping their value.
        var refusedWrites: Set<String> = []
        /// Read through iiod: its buffer has no descriptor to wait on, and a read blocks until data comes.
        var remote = false
    }

    struct State: Sendable {
        var devices: [Device] = []
        var clock = 0.0
        var written: [String] = []
        /// Devices whose buffer is enabled: like the kernel, the fake refuses their buffer attributes and their
        /// timestamp clock then (EBUSY).
        var enabled: Set<String> = []
        var contextsCreated = 0
        /// A device that appears after this many looks at the world.
        var appearing: (after: Int, device: Device)?
        var looks = 0
        /// Devices whose node another program holds: opening their buffer fails with EBUSY this many more times.
        var busyOpens: [String: Int] = [:]
        /// Devices whose attributes udev has not yet given the daemon: every write to them (rate, trigger,
        /// buffer) fails with EACCES until this many more looks at the world have passed (nil: never).
        var ungranted: [String: Int?] = [:]

        mutating func look() {
            looks += 1
            for (device, left) in ungranted {
                guard let left else { continue }
                if left <= 1 { ungranted.removeValue(forKey: device) } else { ungranted[device] = left - 1 }
            }
            if let appearing, looks >= appearing.after {
                devices.append(appearing.device)
                self.appearing = nil
            }
        }
    }

    let state = Mutex(State())

    /// The clock: it moves a millisecond each time it is read, and more when a buffer wait times out.
    var clock: @Sendable () -> Double {
        { [self] in
            state.withLock {
                $0.clock += 0.001
                return $0.clock
            }
        }
    }

    func advance(_ seconds: Double) {
        state.withLock { $0.clock += seconds }
    }

    func add(_ device: Device) {
        state.withLock { $0.devices.append(device) }
    }

    func remove(_ id: String) {
        state.withLock { $0.devices.removeAll { $0.info.id == id } }
    }
}

struct FakeBackend: IIOBackend {
    let world: FakeWorld

    func makeContext() throws(IIOError) -> any IIOContextHandle {
        let devices = world.state.withLock { state in
            state.look()
            state.contextsCreated += 1
            return state.devices
        }
        if devices.isEmpty {
            throw IIOError(code: 2, operation: "creating the IIO context local:", reason: "No such file or directory")
        }
        return FakeContext(world: world, devices: devices.map(\.info))
    }

    func devicesFingerprint() -> String? {
        world.state.withLock { state in
            state.look()
            return state.devices.map(\.info.id).sorted().joined(separator: " ")
        }
    }
}

final class FakeContext: IIOContextHandle {
    let world: FakeWorld
    let devices: [IIODeviceInfo]

    init(world: FakeWorld, devices: [IIODeviceInfo]) {
        self.world = world
        self.devices = devices
    }

    private func gone(_ id: String, _ what: String) -> IIOError {
        IIOError(code: 19, operation: "\(what) of \(id)", reason: "No such device")
    }

    func read(device id: String, attribute: String) throws(IIOError) -> String {
        let value = world.state.withLock { state in
            state.devices.first { $0.info.id == id }.map { $0.values[attribute] }
        }
        guard let present = value else { throw gone(id, "reading \(attribute)") }
        guard let text = present else {
            throw IIOError(code: 2, operation: "reading \(attribute) of \(id)", reason: "No such file or directory")
        }
        return text
    }

    private func busy(_ id: String, _ what: String) -> IIOError {
        IIOError(code: 16, operation: "\(what) of \(id)", reason: "Device or resource busy")
    }

    /// EACCES while udev has not given the daemon the device's attributes.
    private func ungranted(_ id: String, _ what: String) throws(IIOError) {
        if world.state.withLock({ $0.ungranted.keys.contains(id) }) {
            throw IIOError(code: 13, operation: "\(what) of \(id)", reason: "Permission denied")
        }
    }

    func write(device id: String, attribute: String, value: String) throws(IIOError) {
        try ungranted(id, "writing \(value) to \(attribute)")
        enum Outcome { case written, gone, busy, refused }
        let outcome = world.state.withLock { state -> Outcome in
            guard let index = state.devices.firstIndex(where: { $0.info.id == id }) else { return .gone }
            // Like the kernel (kxcjk-1013 among others), no new clock or scale while the buffer runs.
            if attribute == "current_timestamp_clock" || attribute == "in_accel_scale", state.enabled.contains(id) {
                return .busy
            }
            if state.devices[index].refusedWrites.contains(attribute) { return .refused }
            state.devices[index].values[attribute] = value
            state.written.append("\(id)/\(attribute)=\(value)")
            return .written
        }
        switch outcome {
        case .written: return
        case .gone: throw gone(id, "writing \(attribute)")
        case .busy: throw busy(id, "writing \(attribute)")
        case .refused: throw IIOError(code: 22, operation: "writing \(attribute) of \(id)", reason: "Invalid argument")
        }
    }

    func writeBuffer(device id: String, attribute: String, value: String) throws(IIOError) {
        try ungranted(id, "writing \(value) to buffer/\(attribute)")
        let enabled = world.state.withLock { state in
            // Like the kernel, the buffer can always be turned off.
            if attribute == "enable", value == "0" {
                state.written.append("\(id)/buffer/enable=0")
                state.enabled.remove(id)
                return false
            }
            if state.enabled.contains(id) { return true }
            state.written.append("\(id)/buffer/\(attribute)=\(value)")
            if let index = state.devices.firstIndex(where: { $0.info.id == id }) {
                state.devices[index].values["buffer/\(attribute)"] = value
            }
            return false
        }
        if enabled { throw busy(id, "writing buffer/\(attribute)") }
    }

    func setTrigger(device id: String, trigger: String?) throws(IIOError) {
        try ungranted(id, "writing trigger/current_trigger")
        let name = trigger.map { trigger in devices.first { $0.id == trigger }?.name ?? trigger } ?? ""
        world.state.withLock { state in
            state.written.append("\(id)/trigger=\(trigger ?? "none")")
            if let index = state.devices.firstIndex(where: { $0.info.id == id }) {
                state.devices[index].values["trigger/current_trigger"] = name
            }
        }
    }

    /// The device's set-up as the kernel would show it: the values under their sysfs file names.
    func deviceState(device id: String) -> DeviceState? {
        world.state.withLock { state in
            guard let device = state.devices.first(where: { $0.info.id == id }) else { return nil }
            var scanEnables: [String: Bool] = [:]
            for (file, value) in device.values where file.hasPrefix("scan_elements/") {
                scanEnables[String(file.dropFirst("scan_elements/".count))] = value == "1"
            }
            return DeviceState(
                trigger: device.values["trigger/current_trigger"], bufferEnabled: state.enabled.contains(id),
                length: device.values["buffer/length"], watermark: device.values["buffer/watermark"],
                scanEnables: scanEnables,
                samplingFrequency: device.values["sampling_frequency"].map { ("sampling_frequency", $0) })
        }
    }

    func apply(device id: String, writes: [DeviceState.Write]) -> [(DeviceState.Write, IIOError)] {
        world.state.withLock { state in
            guard let index = state.devices.firstIndex(where: { $0.info.id == id }) else {
                return writes.map { ($0, IIOError(code: 19, operation: "writing \($0)", reason: "No such device")) }
            }
            for write in writes {
                state.written.append("\(id)/restore \(write)")
                if write.file == "buffer/enable" {
                    if write.value == "1" { state.enabled.insert(id) } else { state.enabled.remove(id) }
                } else {
                    state.devices[index].values[write.file] = write.value
                }
            }
            return []
        }
    }

    func openBuffer(device id: String, channels: [String], samples: Int, blocks: Int) throws(IIOError)
        -> any IIOBufferHandle
    {
        try ungranted(id, "writing 1 to buffer/enable")
        let busy = world.state.withLock { state in
            if state.enabled.contains(id) { return true }
            if let held = state.busyOpens[id], held > 0 {
                state.busyOpens[id] = held - 1
                return true
            }
            state.written.append("\(id)/buffer channels=\(channels.joined(separator: ",")) samples=\(samples)")
            // As libiio 0.24's local backend does: the kernel buffer's length becomes a read's worth of scans
            // times its count of kernel buffers, whatever was written before.
            if let index = state.devices.firstIndex(where: { $0.info.id == id }) {
                state.devices[index].values["buffer/length"] = String(samples * blocks)
            }
            state.enabled.insert(id)
            return false
        }
        if busy { throw self.busy(id, "starting a buffer") }
        let remote = world.state.withLock { state in state.devices.first { $0.info.id == id }?.remote ?? false }
        return FakeBuffer(world: world, device: id, readsBlock: remote)
    }

    func udevProperties(device id: String) -> [String: String] {
        world.state.withLock { state in state.devices.first { $0.info.id == id }?.udev ?? [:] }
    }
}

final class FakeBuffer: IIOBufferHandle {
    let world: FakeWorld
    let device: String
    let readsBlock: Bool

    init(world: FakeWorld, device: String, readsBlock: Bool = false) {
        self.world = world
        self.device = device
        self.readsBlock = readsBlock
    }

    private enum Next {
        case data, silent, vanished
    }

    private func next() -> Next {
        world.state.withLock { state in
            guard let index = state.devices.firstIndex(where: { $0.info.id == device }) else { return .vanished }
            if !state.devices[index].reads.isEmpty { return .data }
            if state.devices[index].vanishWhenDrained {
                state.devices.remove(at: index)
                return .vanished
            }
            return .silent
        }
    }

    func wait(timeout: Duration, wakeup: Wakeup) -> WaitOutcome {
        if wakeup.isSignalled { return .stopped }
        // libiio's network backend has no descriptor to poll (iio_buffer_get_poll_fd fails).
        if readsBlock { return .failed }
        switch next() {
        case .data:
            world.advance(0.2)
            return .ready
        case .vanished: return .failed
        case .silent:
            let (seconds, attoseconds) = timeout.components
            world.advance(Double(seconds) + Double(attoseconds) / 1e18)
            return .timedOut
        }
    }

    func read() throws(IIOError) -> [UInt8] {
        if readsBlock {
            // A blocking read waits for the data, or fails at the context's timeout.
            switch next() {
            case .data: world.advance(0.2)
            case .vanished: break
            case .silent:
                world.advance(2)
                throw IIOError(code: 110, operation: "reading the buffer of \(device)", reason: "Connection timed out")
            }
        }
        let bytes: [UInt8]? = world.state.withLock { state in
            guard let index = state.devices.firstIndex(where: { $0.info.id == device }) else { return nil }
            return state.devices[index].reads.isEmpty ? [] : state.devices[index].reads.removeFirst()
        }
        guard let bytes else {
            throw IIOError(code: 19, operation: "reading the buffer of \(device)", reason: "No such device")
        }
        return bytes
    }

    private var closed = false

    deinit {
        close()
    }

    func close() {
        guard !closed else { return }
        closed = true
        world.state.withLock { _ = $0.enabled.remove(device) }
    }
}

extension FakeWorld.Device {
    /// An accelerometer with raw attributes, s16 scan elements, a timestamp and a scale of 0.01 m/s² per count.
    static func accelerometer(
        number: Int, name: String = "fake-accel", label: String? = nil, buffered: Bool = true
    ) -> FakeWorld.Device {
        let type = ScanType(bits: 16, storageBits: 16)
        var attributes: Set<String> = [
            "in_accel_x_raw", "in_accel_y_raw", "in_accel_z_raw", "in_accel_scale", "sampling_frequency",
        ]
        attributes.insert("sampling_frequency_available")
        let elements =
            buffered
            ? [
                IIOScanElement(channel: "accel_x", index: 0, type: type),
                IIOScanElement(channel: "accel_y", index: 1, type: type),
                IIOScanElement(channel: "accel_z", index: 2, type: type),
                IIOScanElement(channel: "timestamp", index: 3, type: .timestamp),
            ] : []
        let info = IIODeviceInfo(
            id: "iio:device\(number)", name: name, label: label, attributes: attributes, scanElements: elements,
            bufferAttributes: buffered ? ["enable", "length", "watermark"] : [])
        return FakeWorld.Device(
            info: info,
            values: [
                "in_accel_x_raw": "0", "in_accel_y_raw": "981", "in_accel_z_raw": "0", "in_accel_scale": "0.01",
                "sampling_frequency": "0", "sampling_frequency_available": "12.5 25 50 100 200",
            ])
    }

    static func trigger(number: Int, name: String) -> FakeWorld.Device {
        FakeWorld.Device(info: IIODeviceInfo(id: "trigger\(number)", name: name, isTrigger: true))
    }
}
