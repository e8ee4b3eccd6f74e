#if canImport(Glibc)
import Glibc
#endif
import GeomonFormat

/// A value of a flat JSON object's member. Nested objects and arrays are skipped (`.other`).
enum FlatJSONValue: Sendable, Equatable {
    case number(Double)
    case string(String)
    case bool(Bool)
    case null
    case other

    var double: Double? {
        if case .number(let v) = self { return v }
        return nil
    }

    var string: String? {
        if case .string(let v) = self { return v }
        return nil
    }
}

/// The top-level members of one flat JSON object, in order. Lines have a handful of members, so
/// a lookup is a short linear scan (cheaper than hashing every key of every line); a name
/// given twice means its last value, as in a dictionary.
struct FlatJSONObject: Sendable {
    private(set) var members: [(name: String, value: FlatJSONValue)] = []

    init() { members.reserveCapacity(8) }

    subscript(name: String) -> FlatJSONValue? {
        for member in members.reversed() where member.name == name { return member.value }
        return nil
    }

    mutating func append(_ name: String, _ value: FlatJSONValue) { members.append((name, value)) }
}

/// A byte-level parser for one JSON object per line: the top-level members with scalar values.
/// Good for the line protocols geomon reads (JSON lines tracks, gpsd's JSON, coarse plugins).
enum FlatJSON {
    enum Failure: Error, Equatable {
        case invalid(String)
    }

    /// Whether `b` begins with a UTF-8 byte order mark (a file's first line may).
    static func startsWithByteOrderMark(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        b.count >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF
    }

    /// Parses `{ "key": value, … }` (surrounding whitespace allowed, and NUL bytes before it: a
    /// log appended to across a power loss holds a run of them before the next line, as the
    /// format's detection and the NMEA reader already allow). Throws with a short reason.
    static func parseObject(_ b: UnsafeBufferPointer<UInt8>) throws(Failure) -> FlatJSONObject {
        var p = Cursor(b: b)
        p.skipByteOrderMark()
        while p.peek == 0 { p.i += 1 }
        p.skipSpace()
        guard p.peek == 123 else { throw .invalid("not a JSON object") }
        p.i += 1
        var result = FlatJSONObject()
        p.skipSpace()
        if p.peek == 125 {
            p.i += 1
        } else {
            while true {
                p.skipSpace()
                guard p.peek == 34 else { throw .invalid("expected a member name at byte \(p.i + 1)") }
                let key = try p.string()
                p.skipSpace()
                guard p.peek == 58 else { throw .invalid("expected ':' at byte \(p.i + 1)") }
                p.i += 1
                p.skipSpace()
                result.append(key, try p.value())
                p.skipSpace()
                if p.peek == 44 { p.i += 1; continue }
                if p.peek == 125 { p.i += 1; break }
                throw .invalid("expected ',' or '}' at byte \(p.i + 1)")
            }
        }
        p.skipSpace()
        guard p.i == b.count else { throw .invalid("trailing data at byte \(p.i + 1)") }
        return result
    }

    static func parseObject(_ bytes: [UInt8]) throws(Failure) -> FlatJSONObject {
        let r: Result<FlatJSONObject, Failure> = bytes.withUnsafeBufferPointer { buffer in
            do throws(Failure) { return .success(try parseObject(buffer)) } catch { return .failure(error) }
        }
        return try r.get()
    }

    private struct Cursor {
        let b: UnsafeBufferPointer<UInt8>
        var i = 0

        var peek: UInt8? { i < b.count ? b[i] : nil }

        mutating func skipSpace() {
            while i < b.count, b[i] == 32 || b[i] == 9 || b[i] == 10 || b[i] == 13 { i += 1 }
        }

        /// Skips a UTF-8 byte order mark (a file's first line may begin with one).
        mutating func skipByteOrderMark() {
            if i == 0, FlatJSON.startsWithByteOrderMark(b) { i = 3 }
        }

        mutating func string() throws(Failure) -> String {
            do {
                let (text, end) = try JSONStringText.read(b, quote: i)
                i = end
                return text
            } catch {
                throw .invalid("\(error.reason) at byte \(error.offset + 1)")
            }
        }

        mutating func value() throws(Failure) -> FlatJSONValue {
            guard let c = peek else { throw .invalid("missing value") }
            switch c {
            case 34: return .string(try string())
            case 123, 91: try skipNested(); return .other
            case 116: try literal("true"); return .bool(true)
            case 102: try literal("false"); return .bool(false)
            case 110: try literal("null"); return .null
            default: return .number(try number())
            }
        }

        mutating func literal(_ word: String) throws(Failure) {
            for w in word.utf8 {
                guard peek == w else { throw .invalid("bad literal at byte \(i + 1)") }
                i += 1
            }
        }

        /// A number, by the one JSON scanner (`JSONScanner.number`: exact, as strtod rounds).
        mutating func number() throws(Failure) -> Double {
            var scanner = JSONScanner(b, at: i)
            defer { i = scanner.j }
            do {
                return try scanner.number()
            } catch {
                throw .invalid("\(error.message) at byte \(error.offset + 1)")
            }
        }

        /// Skips a nested object or array, by the one JSON scanner.
        mutating func skipNested() throws(Failure) {
            var scanner = JSONScanner(b, at: i)
            defer { i = scanner.j }
            do {
                try scanner.skipValue()
            } catch {
                throw .invalid("\(error.message) at byte \(error.offset + 1)")
            }
        }
    }
}
