public import GeomonCore

/// Derives coarse fixes from a recorded track for replay (when no coarse track is given).
///
/// Every `interval` from the track's first fix to its last: the recorded position at that time
/// (interpolated between the recorded fixes around it), moved by a random offset uniform in a disk of radius
/// `offsetMeters` (default: `accuracyMeters`; distance `offset·√u₁`, bearing `360°·u₂`, with
/// `u₁, u₂` drawn in that order from `SplitMix64(seed)`), reported with accuracy
/// `accuracyMeters`, no speed or course, source `.coarse`. The same track, interval, accuracy,
/// offset and seed give the same fixes. Inside a recorded gap longer than `maxGap` (the receiver
/// model's outage) the position is unknown and no fix is derived (the draws are made all the same).
public struct CoarseFixGenerator: IteratorProtocol, Sequence {
    public static func derive(track: [Fix], interval: Duration, accuracyMeters: Double, offsetMeters: Double? = nil,
                              maxGap: Duration = .seconds(60), seed: UInt64) -> [Fix] {
        guard let first = track.first, let last = track.last else { return [] }
        return Array(CoarseFixGenerator(track: FixFeed(track), start: first.time, end: last.time, interval: interval,
                                        accuracyMeters: accuracyMeters, offsetMeters: offsetMeters, maxGap: maxGap, seed: seed))
    }

    private var track: FixFeed
    /// The last recorded fix at or before `t` (the first one before `t` reaches it), and the one after it.
    private var before: Fix?
    private var after: Fix?
    private var t: UTCTime
    private let end: UTCTime
    private let interval: Duration
    private let accuracyMeters: Double
    private let offsetMeters: Double
    private let maxGap: Duration
    private var rng: SplitMix64

    /// The derived fixes over a recording read once (`track`, in time order) whose first and
    /// last fixes are at `start` and `end`.
    public init(track: FixFeed, start: UTCTime, end: UTCTime, interval: Duration, accuracyMeters: Double,
                offsetMeters: Double? = nil, maxGap: Duration = .seconds(60), seed: UInt64) {
        self.track = track
        before = self.track.next()
        after = self.track.next()
        t = start
        self.end = interval > .zero ? end : start - .seconds(1)
        self.interval = interval
        self.accuracyMeters = accuracyMeters
        self.offsetMeters = offsetMeters ?? accuracyMeters
        self.maxGap = maxGap
        rng = SplitMix64(seed: seed)
    }

    public mutating func next() -> Fix? {
        while t <= end, var base = before {
            while let next = after, next.time <= t {
                base = next
                after = track.next()
            }
            before = base
            let u1 = rng.nextUnit(), u2 = rng.nextUnit()
            let time = t
            t = t + interval
            var origin = base.coordinate
            if base.time < time, let later = after {
                let gap = later.time - base.time
                guard gap <= maxGap else { continue }
                let f = (time - base.time).secondsValue / gap.secondsValue
                origin = Coordinate(
                    latitude: base.coordinate.latitude + (later.coordinate.latitude - base.coordinate.latitude) * f,
                    longitude: base.coordinate.longitude + Geodesy.longitudeDelta(base.coordinate.longitude, later.coordinate.longitude) * f)
            }
            let point = Geodesy.sphericalDestination(from: origin, bearingDegrees: 360 * u2, distanceMeters: offsetMeters * u1.squareRoot())
            return Fix(time: time, coordinate: point, horizontalAccuracyMeters: accuracyMeters, source: .coarse)
        }
        return nil
    }
}
