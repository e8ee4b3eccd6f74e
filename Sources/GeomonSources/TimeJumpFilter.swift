import GeomonCore

/// Drops a recorded fix whose time is far from its neighbours' (`maxJumpMilliseconds`): a
/// receiver's wrong date (a GPS week-rollover RMC dated 1999 between 2019 fixes, a clock reset
/// to 1980, a year typed as 2204), which would make a replay simulate the years between. Fixes
/// go through in order, each held until the fix after it has been seen:
///
/// - A fix within the limit of the last fix let through, or of the fix after it, is let through:
///   two consecutive fixes that agree confirm a new time (two captures concatenated, a logger
///   switched off for a while).
/// - The first fix has no fix before it: it is dropped when the next two fixes agree with each
///   other and not with it, and let through otherwise (a lone pair far apart keeps its first).
/// - The last fix has no fix after it: it is dropped when it is far from the one before.
///
/// What is dropped is counted (`dropped`); the rest of the track is kept in file order.
struct TimeJumpFilter: Sendable {
    /// The largest jump between neighbouring fixes taken as real, 7 days. Wrong receiver dates
    /// are off by much more: 1024 GPS weeks (19.6 years) after a week-number rollover, decades
    /// after a clock reset to 1980 or 2000, a year or more for a wrong year or century digit.
    /// Real recordings jump further only across a silence, and a fix is dropped only when it is
    /// alone across a week of silence on both sides; a sparse logger (a phone in
    /// significant-change mode, a tracker off for a weekend) keeps every fix.
    static let maxJumpMilliseconds: Int64 = 7 * 86_400_000

    /// Fixes dropped so far.
    private(set) var dropped = 0
    /// The time of the last fix let through.
    private var lastTimeMs: Int64?
    /// Fixes not judged yet, in order (at most three: the first fix waits for two more).
    private var waiting: [Fix] = []

    /// A fix in file order; appends the fixes that could be judged to `fixes`.
    mutating func add(_ fix: Fix, into fixes: inout [Fix]) {
        waiting.append(fix)
        judge(atEnd: false, into: &fixes)
    }

    /// The input ended: the fixes still waiting are judged.
    mutating func finish(into fixes: inout [Fix]) {
        judge(atEnd: true, into: &fixes)
    }

    private static func near(_ a: Int64, _ b: Int64) -> Bool {
        a > b ? a - b <= maxJumpMilliseconds : b - a <= maxJumpMilliseconds
    }

    private mutating func judge(atEnd: Bool, into fixes: inout [Fix]) {
        while let fix = waiting.first {
            let t = fix.time.millisecondsSince1970
            let next = waiting.count > 1 ? waiting[1].time.millisecondsSince1970 : nil
            let keep: Bool
            if let last = lastTimeMs {
                if Self.near(t, last) {
                    keep = true
                } else if let next {
                    keep = Self.near(t, next)
                } else if atEnd {
                    keep = false
                } else {
                    return
                }
            } else if let next {
                if Self.near(t, next) {
                    keep = true
                } else if waiting.count > 2 {
                    keep = !Self.near(next, waiting[2].time.millisecondsSince1970)
                } else if atEnd {
                    keep = true
                } else {
                    return
                }
            } else if atEnd {
                keep = true
            } else {
                return
            }
            waiting.removeFirst()
            if keep {
                lastTimeMs = t
                fixes.append(fix)
            } else {
                dropped += 1
            }
        }
    }
}
