public import GeomonCore

/// What one motion line says: moving or still, and what carries the device.
public struct MotionWord: Hashable, Sendable {
    /// `"moving"`; nil on a line that names only an activity.
    public var motion: Motion?
    /// `"activity"`: foot, bicycle, vehicle, boat, air or any; nil when the line has none.
    public var activity: Activity?
    /// `"time"`, when the line has one (a recording's lines; the daemon acts when a line arrives).
    public var time: UTCTime?
    public init(_ motion: Motion?, activity: Activity? = nil, time: UTCTime? = nil) {
        self.motion = motion
        self.activity = activity
        self.time = time
    }
}

/// Parses the motion command's JSON lines, `{"moving": true|false}` with an optional
/// `"activity"` (`foot`, `bicycle`, `vehicle`, `boat`, `air`, `any`; docs/power.md, "Activity";
/// a line may name only the activity) and an optional `"time"` (RFC 3339: checked, and kept for
/// a recording read by `geomon replay --activity FILE`), incrementally. Blank lines are
/// ignored; any other bad line is skipped and counted.
public struct MotionLinesParser: Sendable {
    private var reader = JSONLineReader()

    public init() {}

    /// Counts of skipped lines by reason.
    public var skipped: [String: Int] { reader.skipped }
    /// The last problem seen, as `line N: reason`.
    public var lastError: String? { reader.lastError }

    /// Parses a chunk; returns what the complete lines in it say, in order.
    public mutating func feed(_ bytes: [UInt8]) -> [MotionWord] { reader.feed(bytes, Self.decode) }

    /// Ends the input; parses a trailing line without newline.
    public mutating func finish() -> [MotionWord] { reader.finish(Self.decode) }

    private static func decode(_ reader: inout JSONLineReader, _ object: FlatJSONObject) -> MotionWord? {
        var moving: Bool?
        if let value = object["moving"], value != .null {
            guard case let .bool(flag) = value else { reader.reject("bad \"moving\" (true or false)", reason: "bad moving"); return nil }
            moving = flag
        }
        var time: UTCTime?
        if let value = object["time"], value != .null {
            guard let text = value.string, let parsed = UTCTime(rfc3339: text) else { reader.reject("bad \"time\"", reason: "bad time"); return nil }
            time = parsed
        }
        var activity: Activity?
        if let value = object["activity"], value != .null {
            guard let text = value.string, let named = Activity(rawValue: text) else {
                reader.reject("bad \"activity\" (foot, bicycle, vehicle, boat, air or any)", reason: "bad activity")
                return nil
            }
            activity = named
        }
        guard moving != nil || activity != nil else {
            reader.reject("missing \"moving\" (true or false)", reason: "no moving")
            return nil
        }
        return MotionWord(moving.map { $0 ? .moving : .still }, activity: activity, time: time)
    }
}
