public import GeomonCore

/// Parses JSON lines `{"time":"RFC 3339","lat":…,"lon":…,"accuracy_m":…}` (optional
/// `speed_mps`, `course_deg`) into fixes, incrementally. The coarse command plugin protocol uses
/// the same lines. Blank lines are ignored; any other bad line is skipped and counted.
public struct JSONLinesParser: Sendable {
    /// Counts of skipped lines by reason.
    public private(set) var skipped: [String: Int] = [:]
    /// The last problem seen, as `line N: reason`.
    public private(set) var lastError: String?
    /// Lines seen so far.
    public private(set) var lineNumber = 0
    /// The source stamped on the fixes.
    public var source: FixSource

    private var buffer = LineBuffer()

    public init(source: FixSource = .gnss) {
        self.source = source
    }

    /// Parses a chunk; returns fixes of the complete lines in it.
    public mutating func feed(_ bytes: [UInt8]) -> [Fix] {
        let (lines, overflowed) = buffer.append(bytes)
        for _ in 0..<overflowed { reject("line too long", reason: "garbage") }
        return lines.compactMap { parse($0) }
    }

    /// Ends the input; parses a trailing line without newline.
    public mutating func finish() -> [Fix] {
        guard let last = buffer.finish() else { return [] }
        return parse(last).map { [$0] } ?? []
    }

    private mutating func reject(_ message: String, reason: String) {
        skipped[reason, default: 0] += 1
        lastError = "line \(lineNumber): \(message)"
    }

    private mutating func parse(_ line: [UInt8]) -> Fix? {
        lineNumber += 1
        if line.allSatisfy({ $0 == 32 || $0 == 9 }) { return nil }
        let object: [String: FlatJSONValue]
        do {
            object = try FlatJSON.parseObject(line)
        } catch {
            switch error { case .invalid(let why): reject(why, reason: "malformed") }
            return nil
        }
        // `geomon export --format jsonl` writes its fixes, then its events (with a "type"):
        // the events are not positions the receiver reported.
        if object["type"] != nil { reject("an event line (\"type\"), not a fix", reason: "event line"); return nil }
        guard let timeText = object["time"]?.string else { reject("missing \"time\"", reason: "no time"); return nil }
        guard let time = UTCTime(rfc3339: timeText) else { reject("bad time \"\(timeText)\"", reason: "bad time"); return nil }
        guard let lat = object["lat"]?.double, let lon = object["lon"]?.double else {
            reject("missing \"lat\" or \"lon\"", reason: "no position")
            return nil
        }
        let coordinate = Coordinate(latitude: lat, longitude: lon)
        guard coordinate.isValid else { reject("coordinate out of range", reason: "invalid coordinate"); return nil }
        var accuracy = AccuracyModel.unknownAccuracyMeters
        if let value = object["accuracy_m"], value != .null {
            guard let a = value.double, a.isFinite, a >= 0 else { reject("bad \"accuracy_m\"", reason: "invalid accuracy"); return nil }
            accuracy = a
        }
        return Fix(
            time: time,
            coordinate: coordinate,
            horizontalAccuracyMeters: accuracy,
            speedMetersPerSecond: object["speed_mps"]?.double.flatMap { $0.isFinite ? $0 : nil },
            courseDegrees: object["course_deg"]?.double.flatMap { $0.isFinite ? $0 : nil },
            source: source
        )
    }
}
