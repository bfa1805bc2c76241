// SPDX-License-Identifier: Apache-2.0
import Testing
import UInput

#if canImport(Glibc)
    import Glibc
#endif

/// The devices' error paths on this machine; creating real devices is tested in the VM, where /dev/uinput exists.
@Suite struct VirtualDeviceTests {
    @Test func missingNodeIsAClearError() {
        #expect {
            try VirtualAccelerometer(name: "test", path: "/nonexistent/uinput")
        } throws: { error in
            guard let error = error as? UInputError else { return false }
            return error.operation == "open" && error.errno == ENOENT
                && error.description.contains("/nonexistent/uinput") && error.description.contains("modprobe uinput")
        }
    }

    @Test func aNodeThatIsNotUInputFailsAtSetup() {
        // /dev/null opens for writing but answers ENOTTY to the uinput ioctls.
        #expect {
            try VirtualKeyboard(name: "test", chords: [try KeyChord(parsing: "ctrl+z")], path: "/dev/null")
        } throws: { error in
            guard let error = error as? UInputError else { return false }
            return error.operation.hasPrefix("UI_") && error.errno == ENOTTY
        }
    }
}
