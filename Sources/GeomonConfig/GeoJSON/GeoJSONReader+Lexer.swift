import GeomonFormat
import GeomonCore
#if canImport(Glibc)
import Glibc
#endif

/// The JSON lexer under the GeoJSON reader: whitespace, literals, objects and arrays walked
/// with callbacks, strings (`JSONStringText` for escapes), numbers and positions
/// (`JSONCursor`), skipping values.
extension GeoJSONReader {

    @inline(__always) func peek() -> UInt8? { i < n ? p[i] : nil }

    func peekLiteral(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard i + count <= n else { return false }
        let w = word.utf8Start
        for k in 0..<count where p[i + k] != w[k] { return false }
        return true
    }

    @inline(__always) func skipSpace() throws {
        var cursor = JSONCursor(p, at: i)
        cursor.skipSpace()
        i = cursor.j
    }

    func expect(_ byte: UInt8) throws {
        try skipSpace()
        guard i < n else { throw JSONSyntaxError(offset: i, message: "unexpected end of file, expected '\(Character(Unicode.Scalar(byte)))'") }
        guard p[i] == byte else { throw JSONSyntaxError(offset: i, message: "expected '\(Character(Unicode.Scalar(byte)))'") }
        i += 1
    }

    /// Walks an object, calling `member(key, keyOffset)` with `i` at each value.
    func parseObject(_ member: (String, Int) throws -> Void) throws {
        try expect(UInt8(ascii: "{"))
        try skipSpace()
        if peek() == UInt8(ascii: "}") { i += 1; return }
        while true {
            try skipSpace()
            let keyOffset = i
            guard peek() == UInt8(ascii: "\"") else { throw JSONSyntaxError(offset: i, message: "expected a string key") }
            let key = try parseString()
            try expect(UInt8(ascii: ":"))
            try skipSpace()
            try member(key, keyOffset)
            try skipSpace()
            guard let c = peek() else { throw JSONSyntaxError(offset: i, message: "unexpected end of file in an object") }
            i += 1
            if c == UInt8(ascii: "}") { return }
            if c != UInt8(ascii: ",") { throw JSONSyntaxError(offset: i - 1, message: "expected ',' or '}' in an object") }
        }
    }

    /// Walks an array, calling `element(index)` with `i` at each element.
    func parseArray(_ element: (Int) throws -> Void) throws {
        try expect(UInt8(ascii: "["))
        try skipSpace()
        if peek() == UInt8(ascii: "]") { i += 1; return }
        var index = 0
        while true {
            try skipSpace()
            try element(index)
            index += 1
            try skipSpace()
            guard let c = peek() else { throw JSONSyntaxError(offset: i, message: "unexpected end of file in an array") }
            i += 1
            if c == UInt8(ascii: "]") { return }
            if c != UInt8(ascii: ",") { throw JSONSyntaxError(offset: i - 1, message: "expected ',' or ']' in an array") }
        }
    }

    /// A string value, or nil (value skipped) when the value is not a string.
    func parseStringValue() throws -> String? {
        if peek() == UInt8(ascii: "\"") { return try parseString() }
        try skipValue(depth: 8)
        return nil
    }

    /// A number value; nil (value skipped) for anything else.
    func parseNumberValue() throws -> Double? {
        guard let c = peek() else { throw JSONSyntaxError(offset: i, message: "unexpected end of file") }
        if c == UInt8(ascii: "-") || (c >= 0x30 && c <= 0x39) { return try parseNumber() }
        try skipValue(depth: 8)
        return nil
    }

    /// A string or number value as an id string; nil (value skipped) otherwise.
    func parseIDValue() throws -> String? {
        guard let c = peek() else { throw JSONSyntaxError(offset: i, message: "unexpected end of file") }
        if c == UInt8(ascii: "\"") { return try parseString() }
        if c == UInt8(ascii: "-") || (c >= 0x30 && c <= 0x39) {
            let start = i
            _ = try parseNumber()
            return String(decoding: UnsafeBufferPointer(rebasing: p[start..<i]), as: UTF8.self)
        }
        try skipValue(depth: 8)
        return nil
    }

    func parseString() throws -> String {
        let start = i
        i += 1
        let contentStart = i
        var simple = true
        while i < n {
            let c = p[i]
            if c == UInt8(ascii: "\"") {
                if simple {
                    let text = Self.commonWord(p, contentStart, i)
                        ?? String(decoding: UnsafeBufferPointer(rebasing: p[contentStart..<i]), as: UTF8.self)
                    i += 1
                    return text
                }
                break
            }
            if c == UInt8(ascii: "\\") { simple = false; i += 2; continue }
            if c < 0x20 { throw JSONSyntaxError(offset: i, message: "control character in a string") }
            i += 1
        }
        guard i < n else { throw JSONSyntaxError(offset: start, message: "unterminated string") }
        // With escapes: the one JSON string reader.
        do {
            let (text, end) = try JSONStringText.read(p, quote: start)
            i = end
            return text
        } catch {
            throw JSONSyntaxError(offset: error.offset, message: error.reason)
        }
    }

    /// The text between `start` and `end` when it is one of the words every feature repeats
    /// (keys, types): a literal, found by a comparison, where decoding the bytes into a new
    /// String costs ten times as much.
    @inline(__always) static func commonWord(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> String? {
        @inline(__always) func matches(_ word: StaticString) -> Bool {
            let w = word.utf8Start
            for k in 0..<word.utf8CodeUnitCount where p[start &+ k] != w[k] { return false }
            return true
        }
        switch end &- start {
        case 2: if matches("id") { return "id" }
        case 4:
            if matches("type") { return "type" }
            if matches("name") { return "name" }
        case 5: if matches("Point") { return "Point" }
        case 7:
            if matches("Feature") { return "Feature" }
            if matches("Polygon") { return "Polygon" }
        case 8:
            if matches("geometry") { return "geometry" }
            if matches("features") { return "features" }
        case 10:
            if matches("properties") { return "properties" }
            if matches("LineString") { return "LineString" }
        case 11: if matches("coordinates") { return "coordinates" }
        case 12: if matches("MultiPolygon") { return "MultiPolygon" }
        case 15: if matches("MultiLineString") { return "MultiLineString" }
        case 17: if matches("FeatureCollection") { return "FeatureCollection" }
        default: break
        }
        return nil
    }

    func parseNumber() throws -> Double {
        var cursor = JSONCursor(p, at: i)
        defer { i = cursor.j }
        return try cursor.number()
    }

    /// Skips any JSON value (`depth` is kept for call-site readability; the cursor limits nesting).
    func skipValue(depth: Int) throws {
        var cursor = JSONCursor(p, at: i)
        defer { i = cursor.j }
        try cursor.skipValue()
    }
}
