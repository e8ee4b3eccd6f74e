import GeomonCore
import GeomonFormat

/// The hot inner loops of the GeoJSON reader on a local cursor (a struct in a local `var`,
/// so no dynamic exclusivity checks on every byte): whitespace, numbers, positions, rings
/// and skipping values.
struct JSONCursor {
    let p: UnsafeBufferPointer<UInt8>
    var j: Int
    private let n: Int

    init(_ p: UnsafeBufferPointer<UInt8>, at offset: Int) {
        self.p = p
        self.j = offset
        self.n = p.count
    }

    @inline(__always) mutating func skipSpace() {
        while j < n {
            let c = p[j]
            if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { j += 1 } else { return }
        }
    }

    /// A JSON number, parsed in place: exact for up to 15-16 significant digits and
    /// exponents within ±22 (Clinger's fast path), `Double(String)` otherwise.
    mutating func number() throws(JSONSyntaxError) -> Double {
        let start = j
        var negative = false
        if j < n && p[j] == 0x2D { negative = true; j &+= 1 }
        // The usual case, without a branch per digit beyond the digit test: at most 19
        // digits (no overflow in 64 bits), no exponent part.
        var mantissa: UInt64 = 0
        let intStart = j
        while j < n {
            let d = p[j] &- 0x30
            if d > 9 { break }
            mantissa = mantissa &* 10 &+ UInt64(d)
            j &+= 1
        }
        let intDigits = j &- intStart
        guard intDigits > 0 else { throw JSONSyntaxError(offset: start, message: "invalid number") }
        var fractionDigits = 0
        if j < n && p[j] == 0x2E {
            j &+= 1
            let fractionStart = j
            while j < n {
                let d = p[j] &- 0x30
                if d > 9 { break }
                mantissa = mantissa &* 10 &+ UInt64(d)
                j &+= 1
            }
            fractionDigits = j &- fractionStart
            guard fractionDigits > 0 else { throw JSONSyntaxError(offset: start, message: "invalid number") }
        }
        let hasExponent = j < n && (p[j] == 0x65 || p[j] == 0x45)
        if !hasExponent, intDigits &+ fractionDigits <= 19, mantissa < (1 << 53), fractionDigits <= 22 {
            let m = Double(mantissa)
            let value = fractionDigits == 0 ? m : m / Self.power(of: fractionDigits)
            return negative ? -value : value
        }
        j = start
        return try slowNumber()
    }

    /// Any JSON number: exact for up to 15-16 significant digits and exponents within ±22
    /// (Clinger's fast path), `Double(String)` otherwise.
    private mutating func slowNumber() throws(JSONSyntaxError) -> Double {
        let start = j
        var negative = false
        if j < n && p[j] == 0x2D { negative = true; j += 1 }
        var mantissa: UInt64 = 0
        var significant = 0
        var exponent = 0
        var digits = 0
        var exact = true
        while j < n {
            let d = p[j] &- 0x30
            if d > 9 { break }
            if significant < 19 {
                mantissa = mantissa &* 10 &+ UInt64(d)
                if mantissa > 0 { significant += 1 }
            } else {
                exponent += 1
                exact = false
            }
            digits += 1
            j += 1
        }
        guard digits > 0 else { throw JSONSyntaxError(offset: start, message: "invalid number") }
        if j < n && p[j] == 0x2E {
            j += 1
            var fraction = 0
            while j < n {
                let d = p[j] &- 0x30
                if d > 9 { break }
                if significant < 19 {
                    mantissa = mantissa &* 10 &+ UInt64(d)
                    if mantissa > 0 { significant += 1 }
                    exponent -= 1
                } else {
                    exact = false
                }
                fraction += 1
                j += 1
            }
            guard fraction > 0 else { throw JSONSyntaxError(offset: start, message: "invalid number") }
        }
        if j < n && (p[j] == 0x65 || p[j] == 0x45) {
            j += 1
            var expNegative = false
            if j < n && (p[j] == 0x2B || p[j] == 0x2D) {
                expNegative = p[j] == 0x2D
                j += 1
            }
            var value = 0
            var expDigits = 0
            while j < n {
                let d = p[j] &- 0x30
                if d > 9 { break }
                if value < 100_000 { value = value * 10 + Int(d) }
                expDigits += 1
                j += 1
            }
            guard expDigits > 0 else { throw JSONSyntaxError(offset: start, message: "invalid number") }
            exponent += expNegative ? -value : value
        }
        if exact && mantissa < (1 << 53) && exponent >= -22 && exponent <= 22 {
            let m = Double(mantissa)
            let scale = Self.power(of: exponent < 0 ? -exponent : exponent)
            let value = exponent < 0 ? m / scale : m * scale
            return negative ? -value : value
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: p[start..<j]), as: UTF8.self)
        return Double(text) ?? .nan
    }

    /// 10^k for 0 ≤ k ≤ 22, exactly.
    @inline(__always) static func power(of k: Int) -> Double {
        switch k {
        case 0: 1e0; case 1: 1e1; case 2: 1e2; case 3: 1e3; case 4: 1e4; case 5: 1e5
        case 6: 1e6; case 7: 1e7; case 8: 1e8; case 9: 1e9; case 10: 1e10; case 11: 1e11
        case 12: 1e12; case 13: 1e13; case 14: 1e14; case 15: 1e15; case 16: 1e16
        case 17: 1e17; case 18: 1e18; case 19: 1e19; case 20: 1e20; case 21: 1e21
        default: 1e22
        }
    }

    /// A problem found while reading a ring: message and byte offset.
    struct Problem {
        /// A coordinate outside its range: the GeoJSON reader reports one per feature.
        enum Kind { case latitudeRange, longitudeRange, other }
        var message: String
        var offset: Int
        var kind: Kind = .other
    }

    /// Reads a ring `[[lon, lat], …]` starting at '['. Returns the vertices (nil when a
    /// position was bad; problems say why) and the offset of the last position.
    /// `points` is scratch space (cleared here) so that the returned ring is allocated once
    /// with its exact size.
    mutating func ring(_ problems: inout [Problem], scratch points: inout [Coordinate]) throws(JSONSyntaxError) -> (points: [Coordinate]?, lastOffset: Int) {
        j += 1 // '['
        points.removeAll(keepingCapacity: true)
        var failed = false
        var lastOffset = j
        skipSpace()
        if j < n && p[j] == 0x5D { j += 1; return ([], lastOffset) }
        while true {
            skipSpace()
            lastOffset = j
            guard j < n else { throw JSONSyntaxError(offset: j, message: "unexpected end of file in an array") }
            if p[j] != 0x5B {
                if !failed {
                    problems.append(Problem(message: "positions must be arrays [longitude, latitude] (wrong nesting?)", offset: j))
                }
                failed = true
                try skipValue()
            } else if let point = try position(&problems) {
                points.append(point)
            } else {
                failed = true
            }
            skipSpace()
            guard j < n else { throw JSONSyntaxError(offset: j, message: "unexpected end of file in an array") }
            let c = p[j]
            j += 1
            if c == 0x5D { break }
            if c != 0x2C { throw JSONSyntaxError(offset: j - 1, message: "expected ',' or ']' in an array") }
        }
        return (failed ? nil : Array(points[...]), lastOffset)
    }

    /// `[lon, lat]` or `[lon, lat, alt, …]` starting at '['.
    mutating func position(_ problems: inout [Problem]) throws(JSONSyntaxError) -> Coordinate? {
        let start = j
        j += 1
        var lon = 0.0, lat = 0.0
        var count = 0
        var valid = true
        skipSpace()
        if j < n && p[j] == 0x5D {
            j += 1
        } else {
            while true {
                skipSpace()
                let offset = j
                guard j < n else { throw JSONSyntaxError(offset: j, message: "unexpected end of file") }
                let c = p[j]
                if c == 0x2D || (c >= 0x30 && c <= 0x39) {
                    let value = try number()
                    if count == 0 {
                        lon = value
                        if !(value >= -180 && value <= 180) {
                            problems.append(Problem(message: "longitude \(NumberText.shortest(value)) is out of range [-180, 180]", offset: offset, kind: .longitudeRange))
                            valid = false
                        }
                    } else if count == 1 {
                        lat = value
                        if !(value >= -90 && value <= 90) {
                            problems.append(Problem(message: "latitude \(NumberText.shortest(value)) is out of range [-90, 90]", offset: offset, kind: .latitudeRange))
                            valid = false
                        }
                    }
                    count += 1
                } else {
                    if valid { problems.append(Problem(message: "a position must contain only numbers", offset: offset)) }
                    valid = false
                    try skipValue()
                }
                skipSpace()
                guard j < n else { throw JSONSyntaxError(offset: j, message: "unexpected end of file") }
                let next = p[j]
                j += 1
                if next == 0x5D { break }
                if next != 0x2C { throw JSONSyntaxError(offset: j - 1, message: "expected ',' or ']' in an array") }
            }
        }
        if count < 2 && valid {
            problems.append(Problem(message: "a position needs at least 2 numbers [longitude, latitude] (got \(count))", offset: start))
            return nil
        }
        return valid ? Coordinate(latitude: lat, longitude: lon) : nil
    }

    /// Skips one JSON value of any kind without recursion (nesting limit 512).
    mutating func skipValue() throws(JSONSyntaxError) {
        var stack: [Bool] = [] // true: inside an object
        while true {
            // A value is expected here.
            skipSpace()
            guard j < n else { throw JSONSyntaxError(offset: j, message: "unexpected end of file, expected a value") }
            let c = p[j]
            switch c {
            case 0x7B, 0x5B: // { [
                if stack.count >= 512 { throw JSONSyntaxError(offset: j, message: "nesting is deeper than 512 levels") }
                j += 1
                skipSpace()
                if j < n && p[j] == (c == 0x7B ? 0x7D : 0x5D) {
                    j += 1 // empty container: a complete value
                } else {
                    stack.append(c == 0x7B)
                    if c == 0x7B { try key() }
                    continue
                }
            case 0x22:
                try string()
            case 0x74:
                try literal("true")
            case 0x66:
                try literal("false")
            case 0x6E:
                try literal("null")
            case 0x2D, 0x30...0x39:
                _ = try number()
            default:
                throw JSONSyntaxError(offset: j, message: "unexpected character '\(Character(Unicode.Scalar(c)))'")
            }
            // A value is complete: close containers or move to the next element.
            while true {
                guard let inObject = stack.last else { return }
                skipSpace()
                guard j < n else { throw JSONSyntaxError(offset: j, message: "unexpected end of file") }
                let d = p[j]
                j += 1
                if d == 0x2C {
                    if inObject { try key() }
                    break
                }
                if d == (inObject ? 0x7D : 0x5D) {
                    stack.removeLast()
                    continue
                }
                throw JSONSyntaxError(offset: j - 1, message: inObject ? "expected ',' or '}' in an object" : "expected ',' or ']' in an array")
            }
        }
    }

    /// A `"key":` at `j`.
    private mutating func key() throws(JSONSyntaxError) {
        skipSpace()
        guard j < n, p[j] == 0x22 else { throw JSONSyntaxError(offset: j, message: "expected a string key") }
        try string()
        skipSpace()
        guard j < n, p[j] == 0x3A else { throw JSONSyntaxError(offset: j, message: "expected ':'") }
        j += 1
    }

    /// Skips a string starting at '"'.
    mutating func string() throws(JSONSyntaxError) {
        let start = j
        j += 1
        while j < n {
            let c = p[j]
            if c == 0x22 { j += 1; return }
            if c == 0x5C { j += 2; continue }
            if c < 0x20 { throw JSONSyntaxError(offset: j, message: "control character in a string") }
            j += 1
        }
        throw JSONSyntaxError(offset: start, message: "unterminated string")
    }

    private mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
        let count = word.utf8CodeUnitCount
        let w = word.utf8Start
        guard j + count <= n else { throw JSONSyntaxError(offset: j, message: "invalid literal") }
        for k in 0..<count where p[j + k] != w[k] {
            throw JSONSyntaxError(offset: j, message: "invalid literal")
        }
        j += count
    }
}
