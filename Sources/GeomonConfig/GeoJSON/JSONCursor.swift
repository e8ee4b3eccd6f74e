import GeomonCore
import GeomonFormat

/// 10^0 … 10^22, each exact in a Double. Tables rather than a `switch`: the number of digits
/// varies from number to number, and a jump table's indirect branch mispredicts on that.
private let powersOfTen: [Double] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22]
private let integerPowersOfTen: [UInt64] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000]

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
    @inline(__always) private mutating func digitRun(_ mantissa: inout UInt64) -> Int {
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
        powersOfTen[k]
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
    mutating func ring(_ problems: inout [Problem], scratch points: inout PositionBuffer) throws(JSONSyntaxError) -> (points: [Coordinate]?, lastOffset: Int) {
        j += 1 // '['
        points.removeAll()
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
            } else if let point = quickPosition() {
                points.append(point)
            } else if let point = try generalPosition(&problems) {
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
        return (failed ? nil : points.array, lastOffset)
    }

    /// `[lon, lat]` or `[lon, lat, alt, …]` starting at '['.
    mutating func position(_ problems: inout [Problem]) throws(JSONSyntaxError) -> Coordinate? {
        if let quick = quickPosition() { return quick }
        return try generalPosition(&problems)
    }

    /// `position` for any text `quickPosition` leaves (spaces, a third number, a problem).
    private mutating func generalPosition(_ problems: inout [Problem]) throws(JSONSyntaxError) -> Coordinate? {
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

    /// `[lon,lat]` at '[' as files write it (no spaces, two numbers in range), or nil with `j`
    /// unchanged: anything else is left to `position`, which says what is wrong.
    @inline(__always) private mutating func quickPosition() -> Coordinate? {
        let start = j
        j &+= 1
        if j < n, Self.startsNumber(p[j]), let lon = try? number(), lon >= -180, lon <= 180,
           j &+ 1 < n, p[j] == 0x2C, Self.startsNumber(p[j &+ 1]) {
            j &+= 1
            if let lat = try? number(), lat >= -90, lat <= 90, j < n, p[j] == 0x5D {
                j &+= 1
                return Coordinate(latitude: lat, longitude: lon)
            }
        }
        j = start
        return nil
    }

    @inline(__always) private static func startsNumber(_ c: UInt8) -> Bool {
        c == 0x2D || (c &- 0x30) <= 9
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

/// A ring's positions as they are read, before the ring's size is known: appending checks
/// only the capacity (an `Array` also checks, through a call into the runtime, that its
/// storage is not shared, at every position). Not copyable: it owns its storage.
struct PositionBuffer: ~Copyable {
    private var base: UnsafeMutablePointer<Coordinate>
    private var capacity = 256
    private(set) var count = 0

    init() {
        base = .allocate(capacity: capacity)
    }

    deinit {
        base.deallocate()
    }

    mutating func removeAll() {
        count = 0
    }

    @inline(__always) mutating func append(_ point: Coordinate) {
        if count == capacity { grow() }
        (base + count).initialize(to: point)
        count &+= 1
    }

    private mutating func grow() {
        let larger = UnsafeMutablePointer<Coordinate>.allocate(capacity: 2 * capacity)
        larger.moveInitialize(from: base, count: count)
        base.deallocate()
        base = larger
        capacity *= 2
    }

    /// The positions read, as an array of their exact size.
    var array: [Coordinate] {
        Array(UnsafeBufferPointer(start: base, count: count))
    }
}
