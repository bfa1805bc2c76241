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
        /// A D-Bus client called `Claim` and has neither released nor left the bus.
        case busClaims = "a D-Bus client claims the sensor"
        case sampleStreams = "a client streams samples"
        case nobody = "nobody is listening"
    }

    public enum Action: Sendable, Equatable {
        case startCapture(Reason)
        case stopCapture
    }

    public let printEvents: Bool
    public let hasSocket: Bool
    public private(set) var alwaysOn: Bool
    public private(set) var subscribers = 0
    public private(set) var sampleStreams = 0
    /// The unique bus names of the D-Bus clients that claim the sensor.
    public private(set) var busClaims: Set<String> = []
    /// Whether capture was last told to run.
    public private(set) var isCapturing: Bool

    public init(printEvents: Bool, hasSocket: Bool, alwaysOn: Bool) {
        self.printEvents = printEvents
        self.hasSocket = hasSocket
        self.alwaysOn = alwaysOn
        isCapturing = false
        isCapturing = reason != .nobody
    }

    /// The first reason that holds, in the order above.
    public var reason: Reason {
        if printEvents { return .printEvents }
        if !hasSocket { return .noSocket }
        if alwaysOn { return .alwaysOn }
        if subscribers > 0 { return .subscribers }
        if !busClaims.isEmpty { return .busClaims }
        if sampleStreams > 0 { return .sampleStreams }
        return .nobody
    }

    /// Whether capture should run now.
    public var wantsCapture: Bool { reason != .nobody }

    /// The server's count of clients that want events or samples changed.
    public mutating func listenersChanged(subscribers: Int, sampleStreams: Int) -> Action? {
        self.subscribers = max(0, subscribers)
        self.sampleStreams = max(0, sampleStreams)
        return settle()
    }

    /// A D-Bus client (by its unique name) called `Claim`; a second claim from the same client counts once.
    public mutating func claimed(by client: String) -> Action? {
        busClaims.insert(client)
        return settle()
    }

    /// A D-Bus client called `Release`, or left the bus; a client that holds no claim changes nothing.
    public mutating func released(by client: String) -> Action? {
        busClaims.remove(client)
        return settle()
    }

    /// A reload changed `sensor.always_on`.
    public mutating func alwaysOnChanged(_ alwaysOn: Bool) -> Action? {
        self.alwaysOn = alwaysOn
        return settle()
    }

    private mutating func settle() -> Action? {
        let reason = self.reason
        switch (isCapturing, reason != .nobody) {
        case (false, true):
            isCapturing = true
            return .startCapture(reason)
        case (true, false):
            isCapturing = false
            return .stopCapture
        default:
            return nil
        }
    }
}
