// SPDX-License-Identifier: Apache-2.0
import Foundation
import IIOModel
import IIOSensor
import ShakeTestSupport
import Testing

/// Leaving a device as it was found, and waiting on a busy one: pure.
struct DeviceStateTests {
    /// As iio-sensor-proxy leaves an HID accelerometer: its trigger, its buffer running on x, y, z and timestamp.
    let proxy = DeviceState(
        trigger: "accel_3d-dev0", bufferEnabled: true, length: "128", watermark: "1",
        scanEnables: ["in_accel_x_en": true, "in_accel_y_en": true, "in_accel_z_en": true, "in_timestamp_en": true],
        samplingFrequency: ("sampling_frequency", "10"))

    @Test func aBufferThatRanIsSetUpAgainThenEnabledLast() {
        // shaked closed its buffer (off), changed the rate, length and watermark and dropped the timestamp.
        var left = proxy
        left.bufferEnabled = false
        left.length = "80"
        left.watermark = "20"
        left.samplingFrequency = ("sampling_frequency", "100")
        left.scanEnables["in_timestamp_en"] = false
        #expect(
            proxy.restoration(from: left).map(\.description) == [
                "buffer/length=128", "buffer/watermark=1", "sampling_frequency=10", "scan_elements/in_timestamp_en=1",
                "buffer/enable=1",
            ])
    }

    @Test func aBufferStillRunningIsTurnedOffFirst() {
        var left = proxy
        left.trigger = "other"
        let writes = proxy.restoration(from: left).map(\.description)
        #expect(writes == ["buffer/enable=0", "trigger/current_trigger=accel_3d-dev0", "buffer/enable=1"])
    }

    @Test func nothingToDoWhenNothingChangedAndAnIdleDeviceStaysOff() {
        #expect(proxy.restoration(from: proxy).isEmpty)
        var stopped = proxy
        stopped.bufferEnabled = false
        #expect(proxy.restoration(from: stopped).map(\.description) == ["buffer/enable=1"])
        var idle = proxy
        idle.bufferEnabled = false
        #expect(idle.restoration(from: idle).isEmpty)
        // An empty trigger (none) is put back as empty.
        var untriggered = idle
        untriggered.trigger = ""
        #expect(untriggered.restoration(from: idle).map(\.description) == ["trigger/current_trigger="])
    }

    @Test func backoffDoublesToAMinuteAndStartsOverAfterASuccess() {
        var backoff = RetryBackoff()
        #expect((0..<9).map { _ in backoff.next() } == [1, 2, 4, 8, 16, 32, 60, 60, 60])
        backoff.reset()
        #expect(backoff.next() == 1)
    }

    @Test func refusedSetUpIsTriedAgainABoundedNumberOfTimesPerDevice() {
        var retry = PermissionRetry(first: 0.25, maximumTries: 6)
        #expect((0..<6).map { _ in retry.refused("iio:device0") } == [0.25, 0.5, 1, 2, 4, 8])
        // Given up on: set up without the refused writes from now on, at once.
        #expect(retry.refused("iio:device0") == nil)
        #expect(!retry.retries("iio:device0"))
        #expect(retry.refused("iio:device0") == nil)
        // Another device has its own count; one that got through starts again.
        #expect(retry.refused("iio:device1") == 0.25)
        #expect(retry.refused("iio:device1") == 0.5)
        retry.succeeded("iio:device1")
        #expect(retry.refused("iio:device1") == 0.25)
        // The device given up on vanished: when it returns, it is tried in full again.
        retry.present(["iio:device1"])
        #expect(retry.retries("iio:device0"))
        #expect(retry.refused("iio:device0") == 0.25)
    }
}

/// Who holds a device node, from a /proc laid out in a temporary folder.
struct DeviceHoldersTests {
    func proc(_ processes: [(pid: Int, command: String, links: [String])]) throws -> String {
        let root = try Scratch.directory("proc")
        for process in processes {
            let fd = "\(root)/\(process.pid)/fd"
            try FileManager.default.createDirectory(atPath: fd, withIntermediateDirectories: true)
            // As the kernel keeps them: comm cut to 15 bytes, cmdline the full path and arguments.
            try (String(process.command.utf8.prefix(15))! + "\n").write(
                toFile: "\(root)/\(process.pid)/comm", atomically: true, encoding: .utf8)
            try "/usr/libexec/\(process.command)\0--verbose\0".write(
                toFile: "\(root)/\(process.pid)/cmdline", atomically: true, encoding: .utf8)
            for (number, target) in process.links.enumerated() {
                try FileManager.default.createSymbolicLink(atPath: "\(fd)/\(number)", withDestinationPath: target)
            }
        }
        try FileManager.default.createDirectory(atPath: "\(root)/sys", withIntermediateDirectories: true)
        return root
    }

    @Test func namesTheProgramsWithTheNodeOpen() throws {
        let root = try proc([
            (812, "iio-sensor-proxy", ["/dev/null", "/dev/iio:device0", "socket:[1234]"]),
            (900, "bash", ["/dev/pts/0"]),
            (77, "monitor", ["/dev/iio:device0"]),
            (901, "other", ["/dev/iio:device1"]),
        ])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let holders = DeviceHolders.find("/dev/iio:device0", procRoot: root)
        #expect(holders == [.init(pid: 77, command: "monitor"), .init(pid: 812, command: "iio-sensor-proxy")])
        #expect(DeviceHolders.find("/dev/iio:device9", procRoot: root).isEmpty)
        #expect(DeviceHolders.find("/dev/iio:device0", procRoot: "\(root)/missing").isEmpty)
        #expect(
            DeviceHolders.running(["iio-sensor-proxy"], procRoot: root) == [
                .init(pid: 812, command: "iio-sensor-proxy")
            ])
        #expect(DeviceHolders.running(["nothing"], procRoot: root).isEmpty)
    }

    @Test func theAdviceSaysWhoAndWhatToDo() {
        let proxy = DeviceHolders.advice(device: "iio:device0", holders: [.init(pid: 812, command: "iio-sensor-proxy")])
        #expect(
            proxy.hasPrefix(
                "/dev/iio:device0 is held by iio-sensor-proxy (pid 812): hand the device over with shaked's hand-over rule"
            ))
        // The rule already gave the device to shaked: iio-sensor-proxy only has to let go, not the rule installed.
        let handedOver = DeviceHolders.advice(
            device: "iio:device0", holders: [.init(pid: 812, command: "iio-sensor-proxy")], handedOver: true)
        #expect(handedOver.contains("restart iio-sensor-proxy (`systemctl restart iio-sensor-proxy.service`)"))
        #expect(!handedOver.contains("udevadm trigger"))
        let suspected = DeviceHolders.advice(
            device: "iio:device0", holders: [], suspects: [.init(pid: 812, command: "iio-sensor-proxy")])
        #expect(suspected.hasPrefix("/dev/iio:device0 is in use, probably by iio-sensor-proxy (pid 812)"))
        #expect(suspected.contains("hand-over rule"))
        let unknown = DeviceHolders.advice(device: "iio:device0", holders: [])
        #expect(unknown.contains("not visible to this user"))
        #expect(unknown.contains("fuser -v /dev/iio:device0"))
    }
}
