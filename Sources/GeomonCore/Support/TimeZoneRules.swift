/// A time zone's offsets from UTC, as plain values: the transitions of a TZif file
/// (RFC 8536, `/usr/share/zoneinfo/NAME`) and its POSIX TZ footer for instants after the last
/// one (`CET-1CEST,M3.5.0,M10.5.0/3`). Pure: the shell reads the file, the core converts.
public struct TimeZoneRules: Hashable, Sendable {
    /// The zone's name (`Europe/Zurich`, `UTC`).
    public var name: String
    /// UTC seconds at which the offset changes, ascending, and the offset (seconds east of
    /// UTC) from each on.
    var transitions: [Int64]
    var offsets: [Int32]
    /// The offset before the first transition.
    var initialOffset: Int32
    /// The rule after the last transition.
    var footer: PosixTZ?

    public static let utc = TimeZoneRules(name: "UTC", transitions: [], offsets: [], initialOffset: 0, footer: nil)

    init(name: String, transitions: [Int64], offsets: [Int32], initialOffset: Int32, footer: PosixTZ?) {
        self.name = name
        self.transitions = transitions
        self.offsets = offsets
        self.initialOffset = initialOffset
        self.footer = footer
    }

    /// A fixed offset from UTC (`UTC+01:00` style zones, and tests).
    public init(name: String, fixedOffsetSeconds: Int32) {
        self.init(name: name, transitions: [], offsets: [], initialOffset: fixedOffsetSeconds, footer: nil)
    }

    /// Reads a TZif file (version 1, 2, 3 or 4); nil when `bytes` is not one.
    public init?(tzif bytes: [UInt8], name: String) {
        var reader = TZifReader(bytes: bytes)
        guard let parsed = reader.parse() else { return nil }
        self.init(name: name, transitions: parsed.transitions, offsets: parsed.offsets,
                  initialOffset: parsed.initialOffset, footer: parsed.footer)
    }

    /// Seconds east of UTC at the instant `seconds` (UTC, since 1970).
    public func offsetSeconds(atUTC seconds: Int64) -> Int32 {
        if let last = transitions.last, seconds >= last, let footer {
            return footer.offset(atUTC: seconds)
        }
        // The last transition at or before `seconds`.
        var low = 0, high = transitions.count
        while low < high {
            let mid = (low + high) / 2
            if transitions[mid] <= seconds { low = mid + 1 } else { high = mid }
        }
        if low == 0 {
            if transitions.isEmpty, let footer { return footer.offset(atUTC: seconds) }
            return initialOffset
        }
        return offsets[low - 1]
    }

    /// Local wall-clock seconds (since 1970-01-01T00:00 local) of a UTC instant.
    public func localSeconds(_ time: UTCTime) -> Int64 {
        let seconds = Self.floorDiv(time.millisecondsSince1970, 1000)
        return seconds + Int64(offsetSeconds(atUTC: seconds))
    }

    /// The UTC instant of local wall-clock seconds: in a gap (clocks moved forward) the
    /// instant the wall clock passes it; in an overlap (moved back) the first of the two.
    public func utcSeconds(fromLocal local: Int64) -> Int64 {
        utcInstants(fromLocal: local)[0]
    }

    /// Every UTC instant whose wall clock reads `local`, in order: one; two in an overlap
    /// (clocks moved back: the repeated hour); in a gap (moved forward) the instant the wall
    /// clock jumps past it.
    public func utcInstants(fromLocal local: Int64) -> [Int64] {
        // The offsets in effect a day either side bound every candidate.
        let before = Int64(offsetSeconds(atUTC: local - 86_400)), after = Int64(offsetSeconds(atUTC: local + 86_400))
        let candidates = Set([before, after]).map { local - $0 }.filter { $0 + Int64(offsetSeconds(atUTC: $0)) == local }
        if !candidates.isEmpty { return candidates.sorted() }
        // A gap: the wall clock jumps over `local`; the first instant whose wall clock is at
        // or past it (the jump).
        var low = local - max(before, after), high = local - min(before, after)
        while low < high {
            let mid = low + (high - low) / 2
            if mid + Int64(offsetSeconds(atUTC: mid)) >= local { high = mid } else { low = mid + 1 }
        }
        return [low]
    }

    /// The instants in `(from, through]` at which the offset changes (at most one a day is
    /// found: no zone changes twice within a day).
    public func offsetChanges(after from: Int64, through: Int64) -> [Int64] {
        var changes: [Int64] = []
        var low = from
        while low < through {
            let high = min(low + 86_400, through)
            if offsetSeconds(atUTC: low) != offsetSeconds(atUTC: high) {
                // The first second whose offset is the later one.
                let target = offsetSeconds(atUTC: high)
                var a = low, b = high
                while a + 1 < b {
                    let mid = a + (b - a) / 2
                    if offsetSeconds(atUTC: mid) == target { b = mid } else { a = mid }
                }
                changes.append(b)
            }
            low = high
        }
        return changes
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }
}

/// A POSIX TZ rule (the TZif footer): standard and daylight offsets and when daylight time
/// starts and ends each year (`M` month.week.day, `J` Julian day without Feb 29, or a zero-based
/// day of the year), each at a local time.
struct PosixTZ: Hashable, Sendable {
    var standardOffset: Int32
    var daylight: Daylight?

    struct Daylight: Hashable, Sendable {
        var offset: Int32
        var start: Rule
        var end: Rule
    }

    enum Day: Hashable, Sendable {
        case monthWeekDay(month: Int, week: Int, weekday: Int)
        case julian(Int)
        case zeroBased(Int)
    }

    struct Rule: Hashable, Sendable {
        var day: Day
        /// Seconds after local midnight (may be negative or beyond 24 h).
        var time: Int32
    }

    func offset(atUTC seconds: Int64) -> Int32 {
        guard let daylight else { return standardOffset }
        let year = CivilDate(daysSince1970: TimeZoneRules.floorDiv(seconds + Int64(standardOffset), 86_400)).year
        // Start is given in standard local time, end in daylight local time.
        for y in [year - 1, year, year + 1] {
            let start = Self.instant(daylight.start, year: y) - Int64(standardOffset)
            let end = Self.instant(daylight.end, year: y) - Int64(daylight.offset)
            if start < end {
                if seconds >= start && seconds < end { return daylight.offset }
            } else if y == year {
                // Southern hemisphere: daylight time spans the new year.
                if seconds >= start || seconds < end { return daylight.offset }
            }
        }
        return standardOffset
    }

    /// Local seconds since 1970 of a rule's instant in `year`.
    static func instant(_ rule: Rule, year: Int) -> Int64 {
        let jan1 = CivilDate(year: year, month: 1, day: 1).daysSince1970
        let day: Int64
        switch rule.day {
        case let .julian(n):
            // 1…365, February 29 never counted.
            let leap = CivilDate.isLeap(year) && n >= 60
            day = jan1 + Int64(n - 1) + (leap ? 1 : 0)
        case let .zeroBased(n):
            day = jan1 + Int64(n)
        case let .monthWeekDay(month, week, weekday):
            let first = CivilDate(year: year, month: month, day: 1).daysSince1970
            // 1970-01-01 was a Thursday (weekday 4, Sunday = 0).
            let firstWeekday = Int((first % 7 + 7 + 4) % 7)
            var d = first + Int64((weekday - firstWeekday + 7) % 7) + Int64(7 * (week - 1))
            let length = Int64(CivilDate.daysIn(month: month, year: year))
            while d >= first + length { d -= 7 }
            day = d
        }
        return day * 86_400 + Int64(rule.time)
    }

    /// Parses `STD offset [DST [offset] [,start[/time],end[/time]]]`; nil when it is not one
    /// this reader knows (then the zone falls back to its last transition's offset).
    init?(_ text: String) {
        var p = Substring(text)
        func name() -> Bool {
            if p.first == "<" {
                guard let close = p.firstIndex(of: ">") else { return false }
                p = p[p.index(after: close)...]
                return true
            }
            let letters = p.prefix { $0.isLetter }
            guard letters.count >= 3 else { return false }
            p = p.dropFirst(letters.count)
            return true
        }
        func clock() -> Int32? {
            var sign: Int32 = 1
            if p.first == "+" { p = p.dropFirst() } else if p.first == "-" { sign = -1; p = p.dropFirst() }
            var parts: [Int32] = []
            while parts.count < 3 {
                let digits = p.prefix { $0.isASCII && $0.isNumber }
                guard !digits.isEmpty, let v = Int32(digits) else { return nil }
                parts.append(v)
                p = p.dropFirst(digits.count)
                guard p.first == ":" else { break }
                p = p.dropFirst()
            }
            while parts.count < 3 { parts.append(0) }
            return sign * (parts[0] * 3600 + parts[1] * 60 + parts[2])
        }
        func rule() -> Rule? {
            var day: Day
            if p.first == "M" {
                p = p.dropFirst()
                let fields = p.prefix { $0.isNumber || $0 == "." }
                p = p.dropFirst(fields.count)
                let n = fields.split(separator: ".").compactMap { Int($0) }
                guard n.count == 3, (1...12).contains(n[0]), (1...5).contains(n[1]), (0...6).contains(n[2]) else { return nil }
                day = .monthWeekDay(month: n[0], week: n[1], weekday: n[2])
            } else if p.first == "J" {
                p = p.dropFirst()
                let digits = p.prefix { $0.isNumber }
                p = p.dropFirst(digits.count)
                guard let n = Int(digits), (1...365).contains(n) else { return nil }
                day = .julian(n)
            } else {
                let digits = p.prefix { $0.isNumber }
                p = p.dropFirst(digits.count)
                guard let n = Int(digits), (0...365).contains(n) else { return nil }
                day = .zeroBased(n)
            }
            var time: Int32 = 7200
            if p.first == "/" {
                p = p.dropFirst()
                guard let t = clock() else { return nil }
                time = t
            }
            return Rule(day: day, time: time)
        }
        guard name(), let std = clock() else { return nil }
        // POSIX offsets are west of UTC: `CET-1` is UTC+1.
        standardOffset = -std
        if p.isEmpty { daylight = nil; return }
        guard name() else { return nil }
        var dst = standardOffset + 3600
        if let first = p.first, first != ",", let v = clock() { dst = -v }
        // No rule given: the US rule of POSIX's default.
        var start = Rule(day: .monthWeekDay(month: 3, week: 2, weekday: 0), time: 7200)
        var end = Rule(day: .monthWeekDay(month: 11, week: 1, weekday: 0), time: 7200)
        if p.first == "," {
            p = p.dropFirst()
            guard let s = rule(), p.first == "," else { return nil }
            p = p.dropFirst()
            guard let e = rule() else { return nil }
            start = s
            end = e
        }
        guard p.isEmpty else { return nil }
        daylight = Daylight(offset: dst, start: start, end: end)
    }
}

/// A proleptic Gregorian date (Howard Hinnant's days-from-civil).
struct CivilDate: Hashable, Sendable {
    var year: Int
    var month: Int
    var day: Int

    init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    init(daysSince1970 z0: Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        day = Int(doy - (153 * mp + 2) / 5 + 1)
        month = Int(mp < 10 ? mp + 3 : mp - 9)
        year = Int(yoe + era * 400) + (month <= 2 ? 1 : 0)
    }

    var daysSince1970: Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// 0 = Monday … 6 = Sunday (ISO order) of a day count since 1970 (a Thursday).
    static func isoWeekday(daysSince1970 days: Int64) -> Int {
        Int(((days % 7) + 7 + 3) % 7)
    }
}

/// Reads the version 2+ (64-bit) data block of a TZif file, or the version 1 block alone.
private struct TZifReader {
    let bytes: [UInt8]
    var position = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    struct Parsed {
        var transitions: [Int64]
        var offsets: [Int32]
        var initialOffset: Int32
        var footer: PosixTZ?
    }

    mutating func u32() -> UInt32? {
        guard position + 4 <= bytes.count else { return nil }
        defer { position += 4 }
        return UInt32(bytes[position]) << 24 | UInt32(bytes[position + 1]) << 16 | UInt32(bytes[position + 2]) << 8 | UInt32(bytes[position + 3])
    }

    mutating func parse() -> Parsed? {
        guard bytes.count >= 44, bytes[0...3] == [0x54, 0x5A, 0x69, 0x66] else { return nil }
        let version = bytes[4]
        position = 20
        guard var header = counts() else { return nil }
        var wide = false
        if version >= 0x32 {
            // Skip the version 1 block to the version 2 header.
            position += header.v1Length
            guard position + 44 <= bytes.count, bytes[position..<position + 4] == [0x54, 0x5A, 0x69, 0x66] else { return nil }
            position += 20
            guard let h = counts() else { return nil }
            header = h
            wide = true
        }
        let timeSize = wide ? 8 : 4
        var times: [Int64] = []
        for _ in 0..<header.timecnt {
            guard position + timeSize <= bytes.count else { return nil }
            var v: Int64 = 0
            for k in 0..<timeSize { v = v << 8 | Int64(bytes[position + k]) }
            if !wide { v = Int64(Int32(truncatingIfNeeded: v)) }
            position += timeSize
            times.append(v)
        }
        guard position + header.timecnt <= bytes.count else { return nil }
        let indices = Array(bytes[position..<position + header.timecnt])
        position += header.timecnt
        var types: [Int32] = []
        for _ in 0..<header.typecnt {
            guard let offset = u32(), position + 2 <= bytes.count else { return nil }
            position += 2
            types.append(Int32(bitPattern: offset))
        }
        guard !types.isEmpty, indices.allSatisfy({ Int($0) < types.count }) else { return nil }
        position += header.charcnt + header.leapcnt * (timeSize + 4) + header.isstdcnt + header.isutcnt
        var footer: PosixTZ?
        if wide, position < bytes.count, bytes[position] == 0x0A,
           let end = bytes[(position + 1)...].firstIndex(of: 0x0A) {
            let text = String(decoding: bytes[(position + 1)..<end], as: UTF8.self)
            if !text.isEmpty { footer = PosixTZ(text) }
        }
        // Before the first transition: the first type (RFC 8536 3.2).
        return Parsed(transitions: times, offsets: indices.map { types[Int($0)] }, initialOffset: types[0], footer: footer)
    }

    struct Counts {
        var isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt: Int
        var v1Length: Int { timecnt * 5 + typecnt * 6 + charcnt + leapcnt * 8 + isstdcnt + isutcnt }
    }

    mutating func counts() -> Counts? {
        guard let a = u32(), let b = u32(), let c = u32(), let d = u32(), let e = u32(), let f = u32() else { return nil }
        let values = [a, b, c, d, e, f].map(Int.init)
        guard values.allSatisfy({ $0 < 1 << 20 }) else { return nil }
        return Counts(isutcnt: values[0], isstdcnt: values[1], leapcnt: values[2], timecnt: values[3], typecnt: values[4], charcnt: values[5])
    }
}
