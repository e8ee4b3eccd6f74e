public import GeomonCore

/// Parses a recording of the power supply (`geomon replay --power-supply FILE`): JSON lines
/// `{"time": RFC 3339, "capacity": 0–100, "online": true|false}`, incrementally. `capacity`
/// or `online` may be missing or null (unknown: no battery, no mains or USB supply) but not
/// both; `time` is required. Blank lines are ignored; any other bad line is skipped and
/// counted, the last problem kept as `line N: reason`.
public struct PowerSupplyLinesParser: Sendable {
    private var reader = JSONLineReader()

    public init() {}

    /// Counts of skipped lines by reason.
    public var skipped: [String: Int] { reader.skipped }
    /// The last problem seen, as `line N: reason`.
    public var lastError: String? { reader.lastError }

    /// Parses a chunk; returns the readings of the complete lines in it, in order.
    public mutating func feed(_ bytes: [UInt8]) -> [(time: UTCTime, reading: PowerSupplyReading)] { reader.feed(bytes, Self.decode) }

    /// Ends the input; parses a trailing line without newline.
    public mutating func finish() -> [(time: UTCTime, reading: PowerSupplyReading)] { reader.finish(Self.decode) }

    private static func decode(_ reader: inout JSONLineReader, _ object: FlatJSONObject) -> (time: UTCTime, reading: PowerSupplyReading)? {
        guard let text = object["time"]?.string, let time = UTCTime(rfc3339: text) else {
            reader.reject("missing or bad \"time\" (RFC 3339)", reason: "bad time")
            return nil
        }
        var reading = PowerSupplyReading()
        if let value = object["capacity"], value != .null {
            guard let number = value.double, number >= 0, number <= 100, number == number.rounded() else {
                reader.reject("bad \"capacity\" (a whole percentage, 0 to 100)", reason: "bad capacity")
                return nil
            }
            reading.capacity = Int(number)
        }
        if let value = object["online"], value != .null {
            guard case let .bool(online) = value else {
                reader.reject("bad \"online\" (true or false)", reason: "bad online")
                return nil
            }
            reading.online = online
        }
        guard reading.capacity != nil || reading.online != nil else {
            reader.reject("neither \"capacity\" nor \"online\"", reason: "empty")
            return nil
        }
        return (time, reading)
    }
}
