public import GeomonCore

/// What a motion source that reports activities would have said over a recording, for replay
/// (`--activity derive`; docs/power.md, "The latency argument"), from the speeds a receiver
/// reports (a fix without one gets its segment's):
///
/// - **up**: at the first fix faster than the activity in effect allows (its `max_speed` plus
///   the speed error), the slowest of `foot`, `vehicle`, `air` whose bound covers the speed is
///   reported `latency` later. Until that fix the slower bound held, whatever carried the
///   device; from it, the switch reserve covers the `latency` the source takes to notice.
/// - **down**: once every fix for `settle` (2 min) was within a slower activity's bound, that
///   one is reported `latency` after the last faster fix plus `settle` (a bus at a stop is not
///   taken for a walker at once).
/// - **first**: the activity of the first fix's speed, `latency` after it.
/// - **gaps**: a sensor keeps sensing where the recording has no fix. Across a gap of more than
///   10 s the mean speed from the fix before counts too, and a faster class found so is
///   reported `latency` after the fix before the gap: the receiver model replays the gap at that
///   mean speed from its start, and the sensor senses what the replay does.
///
/// A classifier cannot tell a runner from a cyclist by speed alone, nor does it need to: both
/// are within `vehicle`'s bound, and `foot`'s holds while the speed does.
public struct ActivitySignal: Sendable {
    public struct Change: Hashable, Sendable {
        public var time: UTCTime
        public var activity: Activity
        public init(time: UTCTime, activity: Activity) {
            self.time = time
            self.activity = activity
        }
    }

    public var latency: Duration
    public var settle: Duration = MotionDetector.defaultSettle
    public var speedErrorMetersPerSecond: Double = 1

    /// Across a recording gap longer than this the mean speed counts too.
    static let gap: Duration = .seconds(10)

    /// The classes the speeds are sorted into, slowest first.
    static let classes: [Activity] = [.foot, .vehicle, .air]

    public init(latency: Duration) {
        self.latency = latency
    }

    /// The source's changes over `track` (in time order; reported times strictly increase).
    public func changes(_ track: some Sequence<Fix>) -> [Change] {
        var out: [Change] = []
        var current: Activity?
        var previous: Fix?
        /// Since when every fix was within each class's bound (by index in `classes`).
        var within: [UTCTime?] = Array(repeating: nil, count: Self.classes.count)
        func report(_ activity: Activity, at time: UTCTime) {
            let time = max(time, out.last.map { $0.time + .milliseconds(1) } ?? time)
            out.append(Change(time: time, activity: activity))
            current = activity
        }
        for fix in track {
            defer { previous = fix }
            var speed = fix.speedMetersPerSecond ?? previous.map { MotionSignal.segmentSpeed(from: $0, to: fix) } ?? 0
            var began = fix.time
            if let previous, fix.time - previous.time > Self.gap {
                let mean = MotionSignal.segmentSpeed(from: previous, to: fix)
                if mean > speed {
                    speed = mean
                    began = previous.time
                }
            }
            let fits = Self.classes.firstIndex { speed <= $0.bounds!.maxSpeedMetersPerSecond + speedErrorMetersPerSecond } ?? Self.classes.count - 1
            for k in within.indices { within[k] = k >= fits ? (within[k] ?? fix.time) : nil }
            guard let now = current, let level = Self.classes.firstIndex(of: now) else {
                report(Self.classes[fits], at: fix.time + latency)
                continue
            }
            if fits > level {
                report(Self.classes[fits], at: began + latency)
            } else if fits < level, let since = within[fits], fix.time - since >= settle {
                report(Self.classes[fits], at: fix.time + latency)
            }
        }
        return out
    }
}
