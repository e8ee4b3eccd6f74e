/// 10^0 … 10^22, each exact in a Double. Tables rather than a `switch`: the number of digits
/// varies from number to number, and a jump table's indirect branch mispredicts on that.
@usableFromInline let powersOfTen: [Double] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                               1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22]
@usableFromInline let integerPowersOfTen: [UInt64] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000]

/// A JSON text is not valid JSON at `offset` (a byte offset), and why.
public struct JSONSyntaxError: Error, Sendable {
    public var offset: Int
    public var message: String
    public init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }
}

/// The one JSON scanner under every JSON reader geomon has (GeoJSON fences, place files and
/// OwnTracks commands through `JSONTree`, flat JSON lines): whitespace, numbers (exact, Clinger's
/// fast path eight digits at a time), skipping values and strings, on a local cursor (a struct
/// in a local `var`, so no dynamic exclusivity checks on every byte). Inlinable: the readers'
/// hot loops are compiled with it. A string's text is `JSONStringText`'s.
@frozen
public struct JSONScanner {
    public let p: UnsafeBufferPointer<UInt8>
    /// The read position.
    public var j: Int
    /// The buffer's length.
    public let n: Int

    @inlinable public init(_ p: UnsafeBufferPointer<UInt8>, at offset: Int) {
        self.p = p
        self.j = offset
        self.n = p.count
    }

    @inlinable @inline(__always) public mutating func skipSpace() {
        while j < n {
            let c = p[j]
            if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { j += 1 } else { return }
        }
    }

    /// A JSON number, parsed in place: exact for up to 15-16 significant digits and
    /// exponents within ±22 (Clinger's fast path), `Double(String)` otherwise.
    @inlinable public mutating func number() throws(JSONSyntaxError) -> Double {
        let start = j
        var negative = false
        if j < n && p[j] == 0x2D { negative = true; j &+= 1 }
        // The usual case: at most 19 digits (no overflow in 64 bits), no exponent part. The
        // integer part (a coordinate's 1–3 digits) a byte at a time, where a short loop beats
        // the fixed cost of a word; the fraction (4–8 digits) eight at a time.
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
            fractionDigits = digitRun(&mantissa)
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

    /// Reads the decimal digits at `j` into `mantissa` (`mantissa × 10^k + digits`, wrapping
    /// past 19 digits: the caller counts them) and returns their count `k`. Eight bytes at a
    /// time where eight are left: the length of the run comes from a mask of the non-digit
    /// bytes, and its value from three multiplications, so that a fraction's digits cost no
    /// branch per digit (and no misprediction at the run's end, whose length varies from
    /// number to number).
    @inlinable @inline(__always) mutating func digitRun(_ mantissa: inout UInt64) -> Int {
        let first = j
        while j &+ 8 <= n {
            // Little-endian: the byte at `j` is the word's lowest.
            let word = UnsafeRawPointer(p.baseAddress! + j).loadUnaligned(as: UInt64.self).littleEndian
            let values = word ^ 0x3030_3030_3030_3030 // a digit's byte becomes 0...9
            // High bit of each byte that is not a digit: its value is ≥ 10 (adding 0x76 to
            // the low 7 bits carries into bit 7, never out of the byte) or ≥ 0x80.
            let nonDigits = (((values & 0x7F7F_7F7F_7F7F_7F7F) &+ 0x7676_7676_7676_7676) | values) & 0x8080_8080_8080_8080
            let count = nonDigits == 0 ? 8 : nonDigits.trailingZeroBitCount >> 3
            guard count > 0 else { break }
            // The run's digits moved to the top bytes (zeros below are leading zeros), then
            // combined pairwise: 8 one-digit lanes → 4 two-digit → 2 four-digit → 1.
            var v = values << (64 &- 8 &* UInt64(count))
            v = (v &* 10) &+ (v >> 8)
            v = (((v & 0x0000_00FF_0000_00FF) &* (100 &+ (1_000_000 << 32)))
                 &+ (((v >> 16) & 0x0000_00FF_0000_00FF) &* (1 &+ (10_000 << 32)))) >> 32
            mantissa = mantissa &* integerPowersOfTen[count] &+ (v & 0xFFFF_FFFF)
            j &+= count
            if count < 8 { return j &- first }
        }
        while j < n {
            let d = p[j] &- 0x30
            if d > 9 { break }
            mantissa = mantissa &* 10 &+ UInt64(d)
            j &+= 1
        }
        return j &- first
    }

    /// Any JSON number: exact for up to 15-16 significant digits and exponents within ±22
    /// (Clinger's fast path), `Double(String)` otherwise.
    @inlinable mutating func slowNumber() throws(JSONSyntaxError) -> Double {
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
    @inlinable @inline(__always) public static func power(of k: Int) -> Double {
        powersOfTen[k]
    }


    @inlinable @inline(__always) public static func startsNumber(_ c: UInt8) -> Bool {
        c == 0x2D || (c &- 0x30) <= 9
    }

    /// Skips one JSON value of any kind without recursion (nesting limit 512).
    @inlinable public mutating func skipValue() throws(JSONSyntaxError) {
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
    @inlinable mutating func key() throws(JSONSyntaxError) {
        skipSpace()
        guard j < n, p[j] == 0x22 else { throw JSONSyntaxError(offset: j, message: "expected a string key") }
        try string()
        skipSpace()
        guard j < n, p[j] == 0x3A else { throw JSONSyntaxError(offset: j, message: "expected ':'") }
        j += 1
    }

    /// Skips a string starting at '"'.
    @inlinable public mutating func string() throws(JSONSyntaxError) {
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

    @inlinable mutating func literal(_ word: StaticString) throws(JSONSyntaxError) {
        let count = word.utf8CodeUnitCount
        let w = word.utf8Start
        guard j + count <= n else { throw JSONSyntaxError(offset: j, message: "invalid literal") }
        for k in 0..<count where p[j + k] != w[k] {
            throw JSONSyntaxError(offset: j, message: "invalid literal")
        }
        j += count
    }
}
