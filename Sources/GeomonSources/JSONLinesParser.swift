public import GeomonCore

/// Parses JSON lines `{"time":"RFC 3339","lat":…,"lon":…,"accuracy_m":…}` (optional
/// `speed_mps`, `course_deg`) into fixes, incrementally. The coarse command plugin protocol uses
/// the same lines. Blank lines are ignored; any other bad line is skipped and counted.
public struct JSONLinesParser: Sendable {
    /// The source stamped on the fixes.
    public var source: FixSource

    private var reader = JSONLineReader()

    public init(source: FixSource = .gnss) {
        self.source = source
    }

    /// Counts of skipped lines by reason.
    public var skipped: [String: Int] { reader.skipped }
    /// The last problem seen, as `line N: reason`.
    public var lastError: String? { reader.lastError }
    /// Lines seen so far.
    public var lineNumber: Int { reader.lineNumber }

    /// Parses a chunk; returns fixes of the complete lines in it.
    public mutating func feed(_ bytes: [UInt8]) -> [Fix] {
        let source = source
        return reader.feed(bytes) { Self.decode(&$0, $1, source: source) }
    }

    /// Parses a chunk, appending the fixes of its complete lines to `fixes`.
    public mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>, into fixes: inout [Fix]) {
        let source = source
        reader.feed(bytes, { Self.decode(&$0, $1, source: source) }) { fixes.append($0) }
    }

    /// Ends the input; parses a trailing line without newline.
    public mutating func finish() -> [Fix] {
        let source = source
        return reader.finish { Self.decode(&$0, $1, source: source) }
    }

    private static func decode(_ reader: inout JSONLineReader, _ object: FlatJSONObject, source: FixSource) -> Fix? {
        // `geomon export --format jsonl` writes its fixes, then its events (a "type" naming
        // an event kind): the events are not positions the receiver reported. Any other
        // "type" (a coarse plugin's `"type": "wifi"`) is a member like any other: ignored.
        if let type = object["type"]?.string, EventKind(rawValue: type) != nil {
            reader.reject("an event line (\"type\": \"\(type)\"), not a fix", reason: "event line")
            return nil
        }
        guard let timeText = object["time"]?.string else { reader.reject("missing \"time\"", reason: "no time"); return nil }
        guard let time = UTCTime(rfc3339: timeText) else { reader.reject("bad time \"\(timeText)\"", reason: "bad time"); return nil }
        guard let lat = object["lat"]?.double, let lon = object["lon"]?.double else {
            reader.reject("missing \"lat\" or \"lon\"", reason: "no position")
            return nil
        }
        let coordinate = Coordinate(latitude: lat, longitude: lon)
        guard coordinate.isValid else { reader.reject("coordinate out of range", reason: "invalid coordinate"); return nil }
        var accuracy = AccuracyModel.unknownAccuracyMeters
        if let value = object["accuracy_m"], value != .null {
            guard let a = value.double, a.isFinite, a >= 0 else { reader.reject("bad \"accuracy_m\"", reason: "invalid accuracy"); return nil }
            accuracy = a
        }
        var speed: Double?
        if let value = object["speed_mps"]?.double {
            speed = ReportedMotion.speed(value)
            if speed == nil { reader.dropped("\"speed_mps\" out of range, left out", reason: "invalid speed") }
        }
        var course: Double?
        if let value = object["course_deg"]?.double {
            course = ReportedMotion.course(value)
            if course == nil { reader.dropped("\"course_deg\" out of range, left out", reason: "invalid course") }
        }
        return Fix(
            time: time,
            coordinate: coordinate,
            horizontalAccuracyMeters: accuracy,
            speedMetersPerSecond: speed,
            courseDegrees: course,
            source: source
        )
    }
}
