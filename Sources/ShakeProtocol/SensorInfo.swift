public import ShakeDetection

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

    public init(source: String, name: String? = nil, id: String? = nil, location: String? = nil, rate: Double? = nil) {
        self.source = source
        self.name = name
        self.id = id
        self.location = location
        self.rate = rate
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
        return writer.result
    }

    init?(_ value: JSONValue?) {
        guard let value, let source = value["source"]?.string else { return nil }
        self.init(
            source: source, name: value["name"]?.string, id: value["id"]?.string, location: value["location"]?.string,
            rate: value["rate"]?.number)
    }
}
