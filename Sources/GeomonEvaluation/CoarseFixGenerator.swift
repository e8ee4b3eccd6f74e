public import GeomonCore

/// Derives coarse fixes from a recorded track for replay (when no coarse track is given).
///
/// Every `interval` from the track's first fix to its last: the position of the latest recorded
/// fix at or before that time, moved by a random offset uniform in a disk of radius
/// `offsetMeters` (default: `accuracyMeters`; distance `offset·√u₁`, bearing `360°·u₂`, with
/// `u₁, u₂` drawn in that order from `SplitMix64(seed)`), reported with accuracy
/// `accuracyMeters`, no speed or course, source `.coarse`. The same track, interval, accuracy,
/// offset and seed give the same fixes.
public enum CoarseFixGenerator {
    public static func derive(track: [Fix], interval: Duration, accuracyMeters: Double, offsetMeters: Double? = nil, seed: UInt64) -> [Fix] {
        let offsetMeters = offsetMeters ?? accuracyMeters
        guard let first = track.first, let last = track.last, interval > .zero else { return [] }
        var rng = SplitMix64(seed: seed)
        var out: [Fix] = []
        var index = 0
        var t = first.time
        while t <= last.time {
            while index + 1 < track.count, track[index + 1].time <= t { index += 1 }
            let u1 = rng.nextUnit(), u2 = rng.nextUnit()
            let point = Geodesy.sphericalDestination(
                from: track[index].coordinate, bearingDegrees: 360 * u2, distanceMeters: offsetMeters * u1.squareRoot()
            )
            out.append(Fix(time: t, coordinate: point, horizontalAccuracyMeters: accuracyMeters, source: .coarse))
            t = t + interval
        }
        return out
    }
}
