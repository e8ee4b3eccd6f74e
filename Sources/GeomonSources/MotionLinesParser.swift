public import GeomonCore

/// Parses the motion command's JSON lines, `{"moving": true|false}` (an optional `"time"`,
/// RFC 3339, is checked when present and otherwise not used: the daemon acts when a line
/// arrives), incrementally. Blank lines are ignored; any other bad line is skipped and counted.
public struct MotionLinesParser: Sendable {
    private var reader = JSONLineReader()

    public init() {}

    /// Counts of skipped lines by reason.
    public var skipped: [String: Int] { reader.skipped }
    /// The last problem seen, as `line N: reason`.
    public var lastError: String? { reader.lastError }

    /// Parses a chunk; returns what the complete lines in it say, in order.
    public mutating func feed(_ bytes: [UInt8]) -> [Motion] { reader.feed(bytes, Self.decode) }

    /// Ends the input; parses a trailing line without newline.
    public mutating func finish() -> [Motion] { reader.finish(Self.decode) }

    private static func decode(_ reader: inout JSONLineReader, _ object: FlatJSONObject) -> Motion? {
        guard case let .bool(moving)? = object["moving"] else {
            reader.reject("missing \"moving\" (true or false)", reason: "no moving")
            return nil
        }
        if let time = object["time"], time != .null {
            guard let text = time.string, UTCTime(rfc3339: text) != nil else { reader.reject("bad \"time\"", reason: "bad time"); return nil }
        }
        return moving ? .moving : .still
    }
}
