// SPDX-License-Identifier: Apache-2.0
/// One evdev event as written to /dev/uinput: a type, a code and a value (linux/input.h). Pure values; the
/// device writes them.
public struct InputEvent: Sendable, Hashable, CustomStringConvertible {
    public var type: UInt16
    public var code: UInt16
    public var value: Int32

    public init(type: UInt16, code: UInt16, value: Int32) {
        self.type = type
        self.code = code
        self.value = value
    }

    /// `EV_SYN`, `EV_KEY`, `EV_ABS`.
    public static let synchronization: UInt16 = 0
    public static let keyType: UInt16 = 1
    public static let absoluteType: UInt16 = 3

    public enum KeyState: Int32, Sendable {
        case release = 0
        case press = 1
    }

    /// `SYN_REPORT`: the events before it form one report.
    public static let report = InputEvent(type: synchronization, code: 0, value: 0)

    public static func key(_ code: UInt16, _ state: KeyState) -> InputEvent {
        InputEvent(type: keyType, code: code, value: state.rawValue)
    }

    public static func absolute(_ axis: AbsoluteAxis, _ value: Int32) -> InputEvent {
        InputEvent(type: absoluteType, code: axis.rawValue, value: value)
    }

    public var description: String { "(\(type), \(code), \(value))" }
}

/// The absolute axes an accelerometer reports (`ABS_X`, `ABS_Y`, `ABS_Z`).
public enum AbsoluteAxis: UInt16, Sendable, CaseIterable {
    case x = 0
    case y = 1
    case z = 2
}
