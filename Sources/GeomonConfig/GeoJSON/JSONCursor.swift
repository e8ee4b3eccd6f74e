import GeomonCore
import GeomonFormat

/// The GeoJSON reader's cursor: the one JSON scanner, with the GeoJSON reader's own hot loops
/// (positions and rings) on it.
typealias JSONCursor = JSONScanner

extension JSONScanner {
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
