public import GeomonCore

/// What a motion sensor would have said over a recording, for replay (`--motion`, or a profile
/// with `sources.motion`; docs/power.md, "Wake on motion"):
///
/// - **still** at `s + still_after`, where `s` starts a run of recorded fixes all slower than
///   `threshold` (0.5 m/s) that lasts at least `still_after`: the sensor saw no movement for
///   that long;
/// - **moving** `moving_delay` (2.5 s) after the first fix at or above `threshold` that follows:
///   the sensor's own detection time, counted from the fix that shows the movement (it may have
///   begun up to one recording interval before it, so this is late rather than early).
///
/// A fix without a speed gets the speed of the segment from the fix before it. The result is
/// sorted and alternates, starting with `still`. (`scripts/power-eval.sh --motion` measures the
/// on-time within the stretches where the recording stands, by the same threshold.)
public struct MotionSignal: Sendable {
    public struct Change: Hashable, Sendable {
        public var time: UTCTime
        public var motion: Motion
        public init(time: UTCTime, motion: Motion) {
            self.time = time
            self.motion = motion
        }
    }

    public var thresholdMetersPerSecond: Double = 0.5
    public var stillAfter: Duration = .seconds(60)
    public var movingDelay: Duration = .milliseconds(2_500)

    public init(stillAfter: Duration = .seconds(60)) {
        self.stillAfter = stillAfter
    }

    /// The sensor's changes over `track` (in time order).
    public func changes(_ track: some Sequence<Fix>) -> [Change] {
        var out: [Change] = []
        var still = false
        var slowSince: UTCTime?
        var previous: Fix?
        for fix in track {
            defer { previous = fix }
            let speed = fix.speedMetersPerSecond ?? previous.map { Self.segmentSpeed(from: $0, to: fix) } ?? 0
            if speed < thresholdMetersPerSecond {
                let since = slowSince ?? fix.time
                slowSince = since
                if !still, fix.time - since >= stillAfter {
                    still = true
                    out.append(Change(time: since + stillAfter, motion: .still))
                }
            } else {
                slowSince = nil
                if still {
                    still = false
                    out.append(Change(time: fix.time + movingDelay, motion: .moving))
                }
            }
        }
        return out
    }

    static func segmentSpeed(from a: Fix, to b: Fix) -> Double {
        let dt = (b.time - a.time).secondsValue
        guard dt > 0 else { return 0 }
        return Geodesy.haversineMeters(a.coordinate, b.coordinate) / dt
    }
}
