public import GeomonCore

/// Parses the motion command's JSON lines, `{"moving": true|false}` (an optional `"time"`,
/// RFC 3339, is checked when present and otherwise not used: the daemon acts when a line
/// arrives), incrementally. Blank lines are ignored; any other bad line is skipped and counted.
public struct MotionLinesParser: Sendable {
    /// Counts of skipped lines by reason.
    public private(set) var skipped: [String: Int] = [:]
    /// The last problem seen, as `line N: reason`.
    public private(set) var lastError: String?
    public private(set) var lineNumber = 0
    private var buffer = LineBuffer()

    public init() {}

    /// Parses a chunk; returns what the complete lines in it say, in order.
    public mutating func feed(_ bytes: [UInt8]) -> [Motion] {
        let (lines, overflowed) = buffer.append(bytes)
        for _ in 0..<overflowed { reject("line too long", reason: "garbage") }
        return lines.compactMap { parse($0) }
    }

    /// Ends the input; parses a trailing line without newline.
    public mutating func finish() -> [Motion] {
        guard let last = buffer.finish() else { return [] }
        return parse(last).map { [$0] } ?? []
    }

    private mutating func reject(_ message: String, reason: String) {
        skipped[reason, default: 0] += 1
        lastError = "line \(lineNumber): \(message)"
    }

    private mutating func parse(_ line: [UInt8]) -> Motion? {
        lineNumber += 1
        if line.allSatisfy({ $0 == 32 || $0 == 9 }) { return nil }
        let object: [String: FlatJSONValue]
        do {
            object = try FlatJSON.parseObject(line)
        } catch {
            switch error { case .invalid(let why): reject(why, reason: "malformed") }
            return nil
        }
        guard case let .bool(moving)? = object["moving"] else {
            reject("missing \"moving\" (true or false)", reason: "no moving")
            return nil
        }
        if let time = object["time"], time != .null {
            guard let text = time.string, UTCTime(rfc3339: text) != nil else { reject("bad \"time\"", reason: "bad time"); return nil }
        }
        return moving ? .moving : .still
    }
}
