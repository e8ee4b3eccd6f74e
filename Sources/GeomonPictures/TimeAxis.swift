import GeomonCore

/// Maps a time range onto pixels and picks round UTC ticks (seconds to days).
struct TimeAxis {
    let start: UTCTime
    let end: UTCTime
    let x0: Double
    let x1: Double

    init(start: UTCTime, end: UTCTime, x0: Double, x1: Double) {
        self.start = start
        // A zero-length run still gets a one-minute axis.
        self.end = end > start ? end : start + .seconds(60)
        self.x0 = x0
        self.x1 = x1
    }

    var spanMilliseconds: Int64 { end.millisecondsSince1970 - start.millisecondsSince1970 }

    func x(_ t: UTCTime) -> Double {
        x0 + Double(t.millisecondsSince1970 - start.millisecondsSince1970) / Double(spanMilliseconds) * (x1 - x0)
    }

    /// Round steps in seconds, from 1 s to 2 weeks.
    static let steps: [Int64] = [
        1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200,
        86400, 172_800, 604_800, 1_209_600,
    ]

    /// The smallest round step giving at most `maxTicks` ticks, in milliseconds.
    var stepMilliseconds: Int64 {
        let maxTicks = max(Int64((x1 - x0) / 90), 2)
        for s in Self.steps where spanMilliseconds / (s * 1000) <= maxTicks {
            return s * 1000
        }
        let days = (spanMilliseconds / 86_400_000) / maxTicks + 1
        return days * 86_400_000
    }

    /// Tick times: multiples of the step since the epoch (so hours and days fall on UTC
    /// midnights), inside [start, end].
    var ticks: [UTCTime] {
        let step = stepMilliseconds
        let s = start.millisecondsSince1970
        var t = s % step == 0 ? s : (s >= 0 ? (s / step + 1) * step : (s / step) * step)
        var out: [UTCTime] = []
        while t <= end.millisecondsSince1970 && out.count < 200 {
            out.append(UTCTime(millisecondsSince1970: t))
            t += step
        }
        return out
    }

    /// Tick label: seconds when the step is below a minute, dates at day steps, and the date in
    /// front of the first tick and of every tick that starts a new day.
    func label(_ t: UTCTime, previous: UTCTime?) -> String {
        let text = t.rfc3339
        let date = String(text.prefix(10))
        let hhmm = Self.slice(text, 11, 16)
        let step = stepMilliseconds
        if step >= 86_400_000 { return date }
        let clock = step < 60_000 ? Self.slice(text, 11, 19) : hhmm
        let newDay = previous.map { String($0.rfc3339.prefix(10)) != date } ?? true
        return newDay ? "\(Self.slice(text, 5, 10)) \(clock)" : clock
    }

    /// A short time for event labels, precise enough for the run's length.
    static func shortTime(_ t: UTCTime, span: Int64) -> String {
        let text = t.rfc3339
        if span <= 3_600_000 { return slice(text, 11, 19) }
        if span <= 86_400_000 { return slice(text, 11, 16) }
        return slice(text, 5, 10) + " " + slice(text, 11, 16)
    }

    /// Human duration: "42 s", "12 min", "3 h 05 min", "6 d 4 h".
    static func duration(milliseconds ms: Int64) -> String {
        let s = max(ms, 0) / 1000
        if s < 60 { return "\(s) s" }
        if s < 3600 { return "\(s / 60) min" }
        if s < 86400 {
            let m = (s % 3600) / 60
            return "\(s / 3600) h \(m < 10 ? "0" : "")\(m) min"
        }
        return "\(s / 86400) d \((s % 86400) / 3600) h"
    }

    static func slice(_ s: String, _ from: Int, _ to: Int) -> String {
        let chars = Array(s)
        guard from < to, to <= chars.count else { return s }
        return String(chars[from..<to])
    }
}
