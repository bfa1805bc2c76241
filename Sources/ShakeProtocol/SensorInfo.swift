// SPDX-License-Identifier: Apache-2.0
/// What the daemon tells clients about its sensor, in `hello` and `status`.
public struct SensorInfo: Sendable, Hashable {
    /// Where samples come from: `iio`, `replay`, or `none` while waiting for a sensor.
    public var source: String
    /// The device's name (`mma8452`, `accel_3d`) or the trace file.
    public var name: String?
    /// The IIO id (`iio:device0`).
    public var id: String?
    /// `display`, `base`, or nil when unknown.
    public var location: String?
    /// Samples per second.
    public var rate: Double?
    /// What the daemon is doing with it: `capturing`, `idle` (capture is off: nobody listens), `waiting` (for a
    /// sensor to appear, be readable or return), `busy` (another program holds it), `replaying`; nil when it
    /// does not say.
    public var state: String?
    /// Why, for `waiting` (`no IIO devices yet`) and `busy` (who holds it, what to do).
    public var reason: String?

    public init(
        source: String, name: String? = nil, id: String? = nil, location: String? = nil, rate: Double? = nil,
        state: String? = nil, reason: String? = nil
    ) {
        self.source = source
        self.name = name
        self.id = id
        self.location = location
        self.rate = rate
        self.state = state
        self.reason = reason
    }

    /// `replay demo.csv (iio:device0) display, idle`: the sensor and its state in a few words.
    public var summary: String {
        let what = [source, name, id.map { "(\($0))" }, location].compactMap { $0 }.joined(separator: " ")
        guard let state else { return what }
        return what + ", " + state + (reason.map { ": \($0)" } ?? "")
    }

    public static let none = SensorInfo(source: "none")

    /// The sensor as a JSON object.
    public var json: String {
        var writer = JSONObjectWriter()
        writer.add("source", source)
        if let name { writer.add("name", name) }
        if let id { writer.add("id", id) }
        if let location { writer.add("location", location) }
        if let rate { writer.add("rate", rate, decimals: 2) }
        if let state { writer.add("state", state) }
        if let reason { writer.add("reason", reason) }
        return writer.result
    }

    init?(_ value: JSONValue?) {
        guard let value, let source = value["source"]?.string else { return nil }
        self.init(
            source: source, name: value["name"]?.string, id: value["id"]?.string, location: value["location"]?.string,
            rate: value["rate"]?.number, state: value["state"]?.string, reason: value["reason"]?.string)
    }
}
