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

    /// Parses `{ "key": value, … }` (surrounding whitespace allowed). Throws with a short reason.
    static func parseObject(_ b: UnsafeBufferPointer<UInt8>) throws(Failure) -> FlatJSONObject {
        var p = Cursor(b: b)
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

        mutating func number() throws(Failure) -> Double {
            let start = i
            while i < b.count {
                let c = b[i]
                guard (c >= 48 && c <= 57) || c == 45 || c == 43 || c == 46 || c == 101 || c == 69 else { break }
                i += 1
            }
            let length = i - start
            guard length > 0, length < 64 else { throw .invalid("bad value at byte \(start + 1)") }
            if let exact = Self.exactDecimal(UnsafeBufferPointer(rebasing: b[start..<i])) { return exact }
            // Anything else: parsed by strtod from a NUL-terminated copy on the stack (no String
            // per number); the whole text must be the number, as Double(String) requires.
            let v: Double? = withUnsafeTemporaryAllocation(of: CChar.self, capacity: length + 1) { text in
                for k in 0..<length { text[k] = CChar(bitPattern: b[start + k]) }
                text[length] = 0
                var end: UnsafeMutablePointer<CChar>?
                let value = strtod(text.baseAddress!, &end)
                return end == text.baseAddress! + length ? value : nil
            }
            guard let v else { throw .invalid("bad value at byte \(start + 1)") }
            return v
        }

        /// `-?digits[.digits]` with at most 15 significant digits in all and at most 22 after the
        /// point: the integer of its digits is exact in a Double and so is the power of ten, so
        /// one division gives the correctly rounded value (Clinger's fast path), as strtod
        /// would. Nil for anything else (exponents, more digits, malformed text).
        static func exactDecimal(_ t: UnsafeBufferPointer<UInt8>) -> Double? {
            var k = 0
            let negative = t.count > 0 && t[0] == 45
            if negative { k = 1 }
            var mantissa: UInt64 = 0
            var digits = 0
            var fraction = -1
            while k < t.count {
                let c = t[k]
                if c == 46 {
                    guard fraction < 0, digits > 0 else { return nil }
                    fraction = 0
                } else {
                    let d = c &- 48
                    guard d <= 9 else { return nil }
                    mantissa = mantissa &* 10 &+ UInt64(d)
                    digits += 1
                    if fraction >= 0 { fraction += 1 }
                }
                k += 1
            }
            guard digits > 0, digits <= 15, fraction != 0, fraction <= 22 else { return nil }
            let value = fraction > 0 ? Double(mantissa) / powersOfTen[fraction] : Double(mantissa)
            return negative ? -value : value
        }

        static let powersOfTen: [Double] = (0...22).map { (0..<$0).reduce(1.0) { a, _ in a * 10 } }

        mutating func skipNested() throws(Failure) {
            var depth = 0
            while i < b.count {
                let c = b[i]
                if c == 34 {
                    _ = try string()
                    continue
                }
                if c == 123 || c == 91 { depth += 1 }
                if c == 125 || c == 93 {
                    depth -= 1
                    if depth == 0 { i += 1; return }
                }
                i += 1
            }
            throw .invalid("unterminated object or array")
        }
    }
}
