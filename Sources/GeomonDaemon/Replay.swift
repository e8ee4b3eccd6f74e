public import GeomonCore
public import GeomonStore
import Foundation

/// What a replay did.
public struct ReplaySummary: Sendable, Equatable {
    /// Fixes the engine processed in this run.
    public var processed = 0
    /// Fixes skipped because they are at or before the resume point, or not newer than the
    /// previous fix.
    public var skipped = 0
    /// Fixes the receiver model withheld (the power policy had the receiver off).
    public var withheld = 0
    public var events = 0
    public init() {}
}

/// Replays recorded fixes through a `Monitor` on a virtual clock driven by the fixes' times.
///
/// Before each fix, deadlines that fall strictly before it fire at their own instant (a dwell
/// in a gap is reported at its time). With `speed` the loop sleeps the scaled real time between
/// fixes; without it, it runs as fast as possible. Fixes at or before the monitor's resume
/// point are skipped, so a replay into an existing database resumes.
public final class Replay {
    public let monitor: Monitor
    public var speed: Double?
    /// Called with (fixes done, total) about every 1 % (for a progress bar).
    public var progress: ((Int, Int) -> Void)?
    /// Waits between fixes with `speed` (default: sleeps); hook delivery waits here instead,
    /// recording finished hooks and starting due retries meanwhile.
    public var pause: (Duration) throws -> Void = { Thread.sleep(forTimeInterval: $0.secondsValue) }

    public init(monitor: Monitor, speed: Double? = nil) {
        self.monitor = monitor
        self.speed = speed
    }

    /// Replays recorded fixes as they are (receiver always on).
    public func run(_ fixes: [Fix], onEvents: ([StoredEvent]) throws -> Void) throws -> ReplaySummary {
        try run(source: RecordedFixes(fixes), total: fixes.count, onEvents: onEvents)
    }

    /// Replays what `source` delivers; `total` (fixes in the recording) scales the progress.
    public func run(source: any ReplayFixSource, total: Int, onEvents: ([StoredEvent]) throws -> Void) throws -> ReplaySummary {
        var summary = ReplaySummary()
        let resumeAfter = monitor.lastCommittedFixTime
        var previous: UTCTime?
        let step = max(1, total / 100)
        var seen = 0
        func emit(_ events: [StoredEvent]) throws {
            guard !events.isEmpty else { return }
            summary.events += events.count
            source.observe(events)
            try onEvents(events)
        }
        while let fix = source.peekFix() {
            // Deadlines and wake-ups strictly before the fix come first, in time order.
            if let deadline = monitor.nextDeadline, deadline < fix.time, deadline <= (source.nextWake ?? deadline) {
                try emit(monitor.deadlineReached(at: deadline))
                continue
            }
            if let wake = source.nextWake, wake < fix.time {
                source.wakeReached(at: wake)
                continue
            }
            source.advance()
            seen += 1
            if let progress, seen % step == 0 { progress(seen, total) }
            if let resumeAfter, fix.time <= resumeAfter {
                summary.skipped += 1
                continue
            }
            if let speed, let previous, fix.time > previous {
                let seconds = (fix.time - previous).secondsValue / speed
                if seconds > 0 { try pause(.milliseconds(Int64((seconds * 1000).rounded()))) }
            }
            let result = try monitor.fixReceived(fix, now: fix.time)
            if result.accepted {
                summary.processed += 1
                previous = fix.time
            } else {
                summary.skipped += 1
            }
            try emit(result.events)
        }
        try emit(monitor.flush(now: monitor.lastFixTime ?? UTCTime(millisecondsSince1970: 0)))
        summary.withheld = source.withheldCount
        progress?(total, total)
        return summary
    }
}
