// SPDX-License-Identifier: Apache-2.0
import Testing
import UInput

#if canImport(Glibc)
    import Glibc
#endif

/// The opens and closes of an input device's node, counted by the kernel: here on a plain file standing for
/// `/dev/input/eventN`, found through a directory standing for the device's sysfs entry.
@Suite struct InputNodeWatchTests {
    /// A scratch tree: `sys/input7/event3` (the device's evdev entry) and `dev/event3` (its node).
    func tree() -> (root: String, sysfs: String, dev: String) {
        var template = Array("/tmp/shaked-node-watch-XXXXXX".utf8CString)
        let root = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        let sysfs = root + "/sys"
        let dev = root + "/dev"
        for directory in [sysfs, sysfs + "/input7", sysfs + "/input7/event3", dev] { mkdir(directory, 0o755) }
        close(open(dev + "/event3", O_CREAT | O_WRONLY, 0o644))
        return (root, sysfs, dev)
    }

    func remove(_ root: String) {
        for path in ["/sys/input7/event3", "/sys/input7", "/sys", "/dev/event3", "/dev", ""] {
            if unlink(root + path) != 0 { rmdir(root + path) }
        }
    }

    @Test func opensAndClosesOfTheNodeAreCountedAndDrained() throws {
        let (root, sysfs, dev) = tree()
        defer { remove(root) }
        let watch = try #require(InputNodeWatch(systemName: "input7", sysfs: sysfs, dev: dev))
        #expect(watch.path == dev + "/event3")
        #expect(watch.drain() == (0, 0))
        // What iio-sensor-proxy does every 700 ms while claimed: open, read the axes, close.
        for _ in 0..<3 { close(open(watch.path, O_RDONLY)) }
        // The descriptor is readable now: the source's thread waits on it while the sensor is off.
        var descriptor = pollfd(fd: watch.fileDescriptor, events: Int16(POLLIN), revents: 0)
        #expect(poll(&descriptor, 1, 0) == 1)
        #expect(watch.drain() == (3, 3))
        #expect(watch.drain() == (0, 0))
        // Another node of the folder counts for nothing.
        close(open(dev + "/event4", O_CREAT | O_RDONLY, 0o644))
        #expect(watch.drain() == (0, 0))
        unlink(dev + "/event4")
        // A reader that keeps it open: one open, no close yet.
        let held = open(watch.path, O_RDONLY)
        #expect(watch.drain() == (1, 0))
        close(held)
        #expect(watch.drain() == (0, 1))
    }

    @Test func aDeviceWithoutAnEvdevNodeIsNotWatched() {
        let (root, sysfs, dev) = tree()
        defer { remove(root) }
        #expect(InputNodeWatch(systemName: "input8", sysfs: sysfs, dev: dev) == nil)
        rmdir(sysfs + "/input7/event3")
        mkdir(sysfs + "/input7/eventX", 0o755)
        #expect(InputNodeWatch(systemName: "input7", sysfs: sysfs, dev: dev) == nil)
        rmdir(sysfs + "/input7/eventX")
    }
}
