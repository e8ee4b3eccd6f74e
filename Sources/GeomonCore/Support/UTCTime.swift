/// An instant in UTC, as milliseconds since 1970-01-01T00:00:00Z.
///
/// The core never reads a clock: every instant it sees was handed to it (a fix's time,
/// a deadline from the shell's clock, or a virtual clock in replay).
public struct UTCTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var millisecondsSince1970: Int64

    public init(millisecondsSince1970: Int64) {
        self.millisecondsSince1970 = millisecondsSince1970
    }

    public init(secondsSince1970: Double) {
        self.millisecondsSince1970 = Int64((secondsSince1970 * 1000).rounded())
    }

    public var secondsSince1970: Double { Double(millisecondsSince1970) / 1000 }

    public static func < (lhs: UTCTime, rhs: UTCTime) -> Bool {
        lhs.millisecondsSince1970 < rhs.millisecondsSince1970
    }

    public static func + (lhs: UTCTime, rhs: Duration) -> UTCTime {
        UTCTime(millisecondsSince1970: lhs.millisecondsSince1970 + rhs.wholeMilliseconds)
    }

    public static func - (lhs: UTCTime, rhs: Duration) -> UTCTime {
        UTCTime(millisecondsSince1970: lhs.millisecondsSince1970 - rhs.wholeMilliseconds)
    }

    public static func - (lhs: UTCTime, rhs: UTCTime) -> Duration {
        .milliseconds(lhs.millisecondsSince1970 - rhs.millisecondsSince1970)
    }

    /// RFC 3339 in UTC with millisecond precision when needed: `2024-05-01T12:00:00Z`,
    /// `2024-05-01T12:00:00.250Z`.
    public var rfc3339: String {
        // Floor division by the day, without an intermediate that could overflow: any stored
        // value, however damaged, is written (years far out of range included).
        var days = millisecondsSince1970 / 86_400_000
        var msOfDay = millisecondsSince1970 % 86_400_000
        if msOfDay < 0 {
            msOfDay += 86_400_000
            days -= 1
        }
        // Civil from days (Howard Hinnant's algorithm).
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let doe = days - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        var year = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        if month <= 2 { year += 1 }
        let hour = msOfDay / 3_600_000
        let minute = (msOfDay / 60_000) % 60
        let second = (msOfDay / 1000) % 60
        let milli = msOfDay % 1000
        var text = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))"
        if milli != 0 { text += ".\(pad(milli, 3))" }
        return text + "Z"
    }

    /// Parses RFC 3339 (`YYYY-MM-DDTHH:MM:SS[.fff][Z|±HH:MM]`, `t`/space separator accepted),
    /// and the offsets of ISO 8601's basic format (`±HHMM`, `±HH`) that many libraries write.
    public init?(rfc3339 text: String) {
        var text = text
        let parsed = text.withUTF8 { UTCTime(rfc3339Bytes: $0) }
        guard let parsed else { return nil }
        self = parsed
    }

    /// `init?(rfc3339:)` over the text's UTF-8 bytes.
    public init?(rfc3339Bytes b: UnsafeBufferPointer<UInt8>) {
        func num(_ from: Int, _ count: Int) -> Int64? {
            guard from + count <= b.count else { return nil }
            var v: Int64 = 0
            for i in from..<(from + count) {
                let c = b[i]
                guard c >= 48, c <= 57 else { return nil }
                v = v * 10 + Int64(c - 48)
            }
            return v
        }
        guard b.count >= 19, b[4] == 45, b[7] == 45, b[13] == 58, b[16] == 58,
              b[10] == 84 || b[10] == 116 || b[10] == 32,
              let year = num(0, 4), let month = num(5, 2), let day = num(8, 2),
              let hour = num(11, 2), let minute = num(14, 2), let second = num(17, 2),
              (1...12).contains(month), day >= 1, day <= UTCTime.daysInMonth(year: year, month: month), hour < 24, minute < 60, second <= 60
        else { return nil }
        var i = 19
        var millis: Int64 = 0
        if i < b.count, b[i] == 46 {
            i += 1
            var scale: Int64 = 100
            let start = i
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                millis += Int64(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
            if i == start { return nil }
        }
        var offsetMinutes: Int64 = 0
        guard i < b.count else { return nil }
        if b[i] == 90 || b[i] == 122 {
            i += 1
        } else if b[i] == 43 || b[i] == 45, let oh = num(i + 1, 2), oh < 24 {
            // `±HH:MM` (RFC 3339), or ISO 8601's basic `±HHMM` and `±HH` (Java and .NET
            // libraries write `+0000`).
            let sign: Int64 = b[i] == 45 ? -1 : 1
            var om: Int64 = 0
            if b.count == i + 3 {
                i += 3
            } else if b.count > i + 3, b[i + 3] == 58, let m = num(i + 4, 2) {
                om = m
                i += 6
            } else if let m = num(i + 3, 2) {
                om = m
                i += 5
            } else {
                return nil
            }
            guard om < 60 else { return nil }
            offsetMinutes = (oh * 60 + om) * sign
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        // A leap second (`:60`) is the last millisecond of its minute: counted as the next
        // minute's first, it would take the instant of the fix after it.
        if second == 60 { millis = 999 }
        let days = UTCTime.daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86400 + hour * 3600 + minute * 60 + min(second, 59) - offsetMinutes * 60
        // A leap second or an offset must not carry the instant out of the years 0000–9999,
        // which `rfc3339` could not write back (`9999-12-31T23:59:60Z`).
        let first = UTCTime.daysFromCivil(year: 0, month: 1, day: 1) * 86400
        let last = UTCTime.daysFromCivil(year: 9999, month: 12, day: 31) * 86400 + 86399
        guard seconds >= first, seconds <= last else { return nil }
        self.millisecondsSince1970 = seconds * 1000 + millis
    }

    /// Days since 1970-01-01 for a proleptic Gregorian date.
    /// The days of `month` (1–12) in `year` (proleptic Gregorian; `CivilDate`'s rule).
    public static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        Int64(CivilDate.daysIn(month: Int(month), year: Int(year)))
    }

    public static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    public var description: String { rfc3339 }
}

private func pad(_ value: Int64, _ width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
}

extension Duration {
    /// Whole milliseconds, truncated toward zero.
    public var wholeMilliseconds: Int64 {
        let c = components
        return c.seconds * 1000 + c.attoseconds / 1_000_000_000_000_000
    }

    /// The duration in seconds as a floating-point value.
    public var secondsValue: Double {
        let c = components
        return Double(c.seconds) + Double(c.attoseconds) / 1e18
    }
}
