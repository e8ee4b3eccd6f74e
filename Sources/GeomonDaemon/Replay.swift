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

/// Decides which recorded fixes the receiver delivers in replay: the power policy's seam.
/// The default delivers every fix (receiver always on).
public protocol ReplayReceiver: AnyObject {
    /// True when the receiver would deliver this recorded fix.
    func delivers(_ fix: Fix) -> Bool
    /// Events just committed (a policy may react, e.g. stay on near a boundary).
    func observe(_ events: [StoredEvent])
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
    public weak var receiver: (any ReplayReceiver)?
    /// Called with (fixes done, total) about every 1 % (for a progress bar).
    public var progress: ((Int, Int) -> Void)?

    public init(monitor: Monitor, speed: Double? = nil) {
        self.monitor = monitor
        self.speed = speed
    }

    public func run(_ fixes: [Fix], onEvents: ([StoredEvent]) throws -> Void) throws -> ReplaySummary {
        var summary = ReplaySummary()
        let resumeAfter = monitor.lastCommittedFixTime
        var previous: UTCTime?
        let step = max(1, fixes.count / 100)
        func emit(_ events: [StoredEvent]) throws {
            guard !events.isEmpty else { return }
            summary.events += events.count
            receiver?.observe(events)
            try onEvents(events)
        }
        for (n, fix) in fixes.enumerated() {
            if let progress, n % step == 0 { progress(n, fixes.count) }
            if let resumeAfter, fix.time <= resumeAfter {
                summary.skipped += 1
                continue
            }
            if let receiver, !receiver.delivers(fix) {
                summary.withheld += 1
                continue
            }
            while let deadline = monitor.nextDeadline, deadline < fix.time {
                try emit(monitor.deadlineReached(at: deadline))
            }
            if let speed, let previous, fix.time > previous {
                let seconds = (fix.time - previous).secondsValue / speed
                if seconds > 0 { Thread.sleep(forTimeInterval: seconds) }
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
        progress?(fixes.count, fixes.count)
        return summary
    }
}
