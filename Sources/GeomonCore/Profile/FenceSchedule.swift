/// `active:` of a fence: the local-time windows in which it reports events (docs/engine.md,
/// "Schedules"). Outside them the fence's state is still tracked, but it reports nothing and
/// the power policy does not wake the receiver for it.
public struct FenceSchedule: Hashable, Sendable {
    /// One window: on each of `days` (0 = Monday … 6 = Sunday), from `start` to `end` minutes
    /// after local midnight. `end <= start` runs past midnight into the next day (a night
    /// shift, 22:00–06:00, is listed under the day it starts).
    public struct Window: Hashable, Sendable {
        public var days: Set<Int>
        public var start: Int
        public var end: Int

        public init(days: Set<Int>, start: Int, end: Int) {
            self.days = days
            self.start = start
            self.end = end
        }

        /// Whether the window ends after local midnight.
        public var crossesMidnight: Bool { end <= start }
    }

    public var windows: [Window]

    public init(windows: [Window]) {
        self.windows = windows
    }

    /// Whether the fence is active at `time` in `zone`: local wall-clock time inside a window
    /// (the start included, the end not).
    public func isActive(at time: UTCTime, zone: TimeZoneRules) -> Bool {
        isActive(localSeconds: zone.localSeconds(time))
    }

    func isActive(localSeconds local: Int64) -> Bool {
        let days = TimeZoneRules.floorDiv(local, 86_400)
        let weekday = CivilDate.isoWeekday(daysSince1970: days)
        let minute = Int((local - days * 86_400) / 60)
        let yesterday = (weekday + 6) % 7
        for window in windows {
            if window.crossesMidnight {
                if window.days.contains(weekday) && minute >= window.start { return true }
                if window.days.contains(yesterday) && minute < window.end { return true }
            } else if window.days.contains(weekday) && minute >= window.start && minute < window.end {
                return true
            }
        }
        return false
    }

    /// The first instant after `time` at which the fence's activity changes, within 8 days;
    /// nil when it never does (always or never active). The activity changes only where the
    /// wall clock reaches a window's edge (whole local minutes: each instant that reads it,
    /// both in the hour repeated when clocks go back; in a gap, the jump) or jumps (the zone's
    /// offset changes): the answer is the first of those whose activity differs.
    public func nextChange(after time: UTCTime, zone: TimeZoneRules) -> UTCTime? {
        let now = isActive(at: time, zone: zone)
        let local = zone.localSeconds(time)
        let today = TimeZoneRules.floorDiv(local, 86_400)
        let seconds = TimeZoneRules.floorDiv(time.millisecondsSince1970, 1000)
        var candidates = zone.offsetChanges(after: seconds, through: seconds + 9 * 86_400)
        for day in (today - 1)...(today + 8) {
            let weekday = CivilDate.isoWeekday(daysSince1970: day)
            for window in windows where window.days.contains(weekday) {
                let edges = [day * 86_400 + Int64(window.start) * 60,
                             (window.crossesMidnight ? day + 1 : day) * 86_400 + Int64(window.end) * 60]
                for edge in edges { candidates += zone.utcInstants(fromLocal: edge) }
            }
        }
        var best: Int64?
        for utc in candidates where utc * 1000 > time.millisecondsSince1970 && (best.map { utc < $0 } ?? true) {
            if isActive(localSeconds: zone.localSeconds(UTCTime(millisecondsSince1970: utc * 1000))) != now { best = utc }
        }
        return best.map { UTCTime(millisecondsSince1970: $0 * 1000) }
    }
}
