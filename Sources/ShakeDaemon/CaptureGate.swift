/// Whether the sensor should capture, and why: capture runs only while somebody listens. No I/O: the daemon
/// starts or stops capture as the returned actions say.
public struct CaptureGate: Sendable, Equatable {
    /// Why capture is on (or, with ``nobody``, off).
    public enum Reason: String, Sendable, Equatable {
        /// Events go to standard output (`--print-events`).
        case printEvents = "events are printed"
        /// Without a socket, the daemon exists to capture.
        case noSocket = "there is no socket"
        /// `sensor.always_on`.
        case alwaysOn = "capture is always on"
        case subscribers = "a client is subscribed"
        case sampleStreams = "a client streams samples"
        /// Only the relay to iio-sensor-proxy reads the sensor: capture at the low rate that serves it.
        case relay = "the orientation relay reads the sensor"
        case nobody = "nobody is listening"
    }

    public enum Action: Sendable, Equatable {
        case startCapture(Reason)
        case stopCapture
        /// Capture goes on at the other rate (low for the relay alone, the configured one for clients).
        case changeRate(Reason)
    }

    public let printEvents: Bool
    public let hasSocket: Bool
    public private(set) var alwaysOn: Bool
    public private(set) var subscribers = 0
    public private(set) var sampleStreams = 0
    /// Whether the relay to iio-sensor-proxy is on (it needs a few readings a second).
    public private(set) var relay: Bool
    /// Whether capture was last told to run.
    public private(set) var isCapturing: Bool
    /// Whether capture was last told to run at the relay's low rate.
    public private(set) var isLowRate: Bool

    public init(printEvents: Bool, hasSocket: Bool, alwaysOn: Bool, relay: Bool = false) {
        self.printEvents = printEvents
        self.hasSocket = hasSocket
        self.alwaysOn = alwaysOn
        self.relay = relay
        isCapturing = false
        isLowRate = false
        isCapturing = reason != .nobody
        isLowRate = reason == .relay
    }

    /// The first reason that holds, in the order above.
    public var reason: Reason {
        if printEvents { return .printEvents }
        if !hasSocket { return .noSocket }
        if alwaysOn { return .alwaysOn }
        if subscribers > 0 { return .subscribers }
        if sampleStreams > 0 { return .sampleStreams }
        if relay { return .relay }
        return .nobody
    }

    /// Whether capture should run now.
    public var wantsCapture: Bool { reason != .nobody }

    /// Whether capture should run at the relay's low rate rather than the configured one: only the relay reads.
    public var wantsLowRate: Bool { reason == .relay }

    /// The server's count of clients that want events or samples changed.
    public mutating func listenersChanged(subscribers: Int, sampleStreams: Int) -> Action? {
        self.subscribers = max(0, subscribers)
        self.sampleStreams = max(0, sampleStreams)
        return settle()
    }

    /// A reload changed `sensor.always_on`.
    public mutating func alwaysOnChanged(_ alwaysOn: Bool) -> Action? {
        self.alwaysOn = alwaysOn
        return settle()
    }

    /// The relay was turned on (its uinput device exists) or off (it could not be made, or the sensor went).
    public mutating func relayChanged(_ relay: Bool) -> Action? {
        self.relay = relay
        return settle()
    }

    private mutating func settle() -> Action? {
        let reason = self.reason
        let lowRate = reason == .relay
        defer { isLowRate = isCapturing && lowRate }
        switch (isCapturing, reason != .nobody) {
        case (false, true):
            isCapturing = true
            return .startCapture(reason)
        case (true, false):
            isCapturing = false
            return .stopCapture
        case (true, true) where lowRate != isLowRate:
            return .changeRate(reason)
        default:
            return nil
        }
    }
}
