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
public enum CoarseFixGenerator {
    public static func derive(track: [Fix], interval: Duration, accuracyMeters: Double, offsetMeters: Double? = nil,
                              maxGap: Duration = .seconds(60), seed: UInt64) -> [Fix] {
        let offsetMeters = offsetMeters ?? accuracyMeters
        guard let first = track.first, let last = track.last, interval > .zero else { return [] }
        var rng = SplitMix64(seed: seed)
        var out: [Fix] = []
        var index = 0
        var t = first.time
        while t <= last.time {
            while index + 1 < track.count, track[index + 1].time <= t { index += 1 }
            let u1 = rng.nextUnit(), u2 = rng.nextUnit()
            defer { t = t + interval }
            var origin = track[index].coordinate
            if track[index].time < t, index + 1 < track.count {
                let before = track[index], after = track[index + 1]
                let gap = after.time - before.time
                guard gap <= maxGap else { continue }
                let f = (t - before.time).secondsValue / gap.secondsValue
                origin = Coordinate(
                    latitude: before.coordinate.latitude + (after.coordinate.latitude - before.coordinate.latitude) * f,
                    longitude: before.coordinate.longitude + Geodesy.longitudeDelta(before.coordinate.longitude, after.coordinate.longitude) * f)
            }
            let point = Geodesy.sphericalDestination(from: origin, bearingDegrees: 360 * u2, distanceMeters: offsetMeters * u1.squareRoot())
            out.append(Fix(time: t, coordinate: point, horizontalAccuracyMeters: accuracyMeters, source: .coarse))
        }
        return out
    }
}
