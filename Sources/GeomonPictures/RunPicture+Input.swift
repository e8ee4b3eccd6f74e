public import GeomonCore

extension RunPicture {
    /// What the GNSS receiver was doing at a moment of the run.
    public enum ReceiverState: String, Hashable, Sendable, CaseIterable {
        /// Powered and delivering fixes.
        case on
        /// Powered, waiting for its first fix (time to first fix).
        case acquiring
        /// Powered down: the device did not see where it went.
        case off
        /// Not recorded (a database without the receiver's history): the fixes are known, not
        /// whether the receiver was on between them.
        case unknown

        /// On or acquiring: the receiver drew power.
        public var isPowered: Bool { self == .on || self == .acquiring }
    }

    /// One recorded position, in time order.
    ///
    /// In a replay every recorded fix appears here. Points with `receiver == .off` are the ones
    /// the device did NOT see; the map draws the gap as a dashed straight line between the last
    /// seen and the next seen point, and the recorded path it missed as a faint line.
    public struct TrackPoint: Hashable, Sendable {
        public var time: UTCTime
        public var coordinate: Coordinate
        public var accuracyMeters: Double
        public var receiver: ReceiverState
        /// Distance to the nearest fence boundary; negative inside a fence when the caller
        /// knows the side (the chart uses a signed log scale), nil when unknown.
        public var nearestBoundaryMeters: Double?

        public init(
            time: UTCTime,
            coordinate: Coordinate,
            accuracyMeters: Double,
            receiver: ReceiverState,
            nearestBoundaryMeters: Double? = nil
        ) {
            self.time = time
            self.coordinate = coordinate
            self.accuracyMeters = accuracyMeters
            self.receiver = receiver
            self.nearestBoundaryMeters = nearestBoundaryMeters
        }
    }

    /// A span of time in one receiver state and why the policy chose it
    /// (e.g. "approaching home (120 m)", "stationary 5 min").
    public struct ReceiverInterval: Hashable, Sendable {
        public var start: UTCTime
        public var end: UTCTime
        public var state: ReceiverState
        public var reason: String

        public init(start: UTCTime, end: UTCTime, state: ReceiverState, reason: String = "") {
            self.start = start
            self.end = end
            self.state = state
            self.reason = reason
        }
    }

    /// Everything one picture shows. Plain values: build it from a replay or from a database.
    public struct Input: Sendable {
        /// Shown at the top, e.g. the profile name and the track file.
        public var title: String
        public var fences: [Fence]
        /// Time-ordered positions (unsorted input is sorted by time, stably).
        public var track: [TrackPoint]
        /// Receiver states over time; empty means "derive from the track points".
        public var receiverIntervals: [ReceiverInterval]
        public var events: [GeoEvent]
        /// Events of an always-on comparison run, drawn as hollow markers; nil when not compared.
        public var baselineEvents: [GeoEvent]?
        /// Set when `track` holds only the points the picture uses (`reducedInput`): what the
        /// whole track was.
        public var totals: TrackTotals?

        public init(
            title: String,
            fences: [Fence] = [],
            track: [TrackPoint] = [],
            receiverIntervals: [ReceiverInterval] = [],
            events: [GeoEvent] = [],
            baselineEvents: [GeoEvent]? = nil
        ) {
            self.title = title
            self.fences = fences
            self.track = track
            self.receiverIntervals = receiverIntervals
            self.events = events
            self.baselineEvents = baselineEvents
        }
    }

    /// Track points for recorded fixes: each fix gets the state of the receiver interval that
    /// contains its time (start inclusive, end exclusive; the last interval also includes its
    /// end), `uncovered` (`.on`: a fix means the receiver was on) when no interval covers it.
    /// `nearestBoundaryMeters` is asked once per fix, e.g. `{ index.nearestBoundary(to:
    /// $0)?.signedDistanceMeters }` with a `FenceIndex`.
    public static func trackPoints(
        fixes: [Fix],
        intervals: [ReceiverInterval],
        uncovered: ReceiverState = .on,
        nearestBoundaryMeters: (Coordinate) -> Double? = { _ in nil }
    ) -> [TrackPoint] {
        let states = IntervalLookup(intervals, uncovered: uncovered)
        return fixes.map { states.trackPoint($0, nearestBoundaryMeters: nearestBoundaryMeters($0.coordinate)) }
    }

    /// The receiver's state at a time, from its intervals (`trackPoints`).
    public struct IntervalLookup: Sendable {
        private let sorted: [ReceiverInterval]
        private let uncovered: ReceiverState

        public init(_ intervals: [ReceiverInterval], uncovered: ReceiverState = .on) {
            sorted = intervals.enumerated()
                .sorted { $0.element.start != $1.element.start ? $0.element.start < $1.element.start : $0.offset < $1.offset }
                .map(\.element)
            self.uncovered = uncovered
        }

        /// The state of the interval containing `time` (the last one starting at or before it).
        public func state(at time: UTCTime) -> ReceiverState {
            var lo = 0, hi = sorted.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if sorted[mid].start <= time { lo = mid + 1 } else { hi = mid }
            }
            guard lo > 0 else { return uncovered }
            let interval = sorted[lo - 1]
            return time < interval.end || (lo == sorted.count && time == interval.end) ? interval.state : uncovered
        }

        /// `fix` as a track point.
        public func trackPoint(_ fix: Fix, nearestBoundaryMeters: Double?) -> TrackPoint {
            TrackPoint(time: fix.time, coordinate: fix.coordinate, accuracyMeters: fix.horizontalAccuracyMeters,
                       receiver: state(at: fix.time), nearestBoundaryMeters: nearestBoundaryMeters)
        }
    }

    /// Receiver intervals read off the track: one per run of equal states, each ending where
    /// the next begins. For callers that have per-point states but no policy log.
    public static func receiverIntervals(from track: [TrackPoint]) -> [ReceiverInterval] {
        var intervals: [ReceiverInterval] = []
        for point in track {
            if var last = intervals.last, last.state == point.receiver {
                last.end = point.time
                intervals[intervals.count - 1] = last
            } else {
                if !intervals.isEmpty { intervals[intervals.count - 1].end = point.time }
                intervals.append(ReceiverInterval(start: point.time, end: point.time, state: point.receiver))
            }
        }
        return intervals
    }
}
