public import GeomonCore

/// What a motion sensor would have said over a recording, for replay (`--motion`, or a profile
/// with `sources.motion`; docs/power.md, "Wake on motion"):
///
/// - **still** at `s + still_after`, where `s` starts a run of recorded fixes all slower than
///   `threshold` (0.5 m/s) that lasts at least `still_after`: the sensor saw no movement for
///   that long;
/// - **moving** `moving_delay` (2.5 s) after the movement began: the sensor's own detection
///   time. The movement is taken to begin at the last slow fix before the first fix at or
///   above `threshold`, where the two are at most `movementGap` apart (the receiver model's
///   interpolation gap: its track moves from there on), else at that first fix. A logger that
///   keeps a fix every 35 s shows a departure only up to 35 s after it began, and a sensor
///   detects it within seconds: early rather than late.
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
    /// The longest recording gap across which a departure is dated back to the fix before it.
    public var movementGap: Duration = .seconds(60)

    public init(stillAfter: Duration = .seconds(60), movementGap: Duration = .seconds(60)) {
        self.stillAfter = stillAfter
        self.movementGap = movementGap
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
                    let began = previous.map { fix.time - $0.time <= movementGap ? $0.time : fix.time } ?? fix.time
                    out.append(Change(time: began + movingDelay, motion: .moving))
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
