/// Turns a motion sensor's raw input into the `Motion` the policy acts on (docs/power.md,
/// "Wake on motion"): pure, fed with times on a monotonic axis (any origin).
///
/// - An accelerometer (`sample`): the magnitude of each sample, `|a|` in m/s². Over the last
///   `window`, a standard deviation of the magnitudes above `threshold` is movement (gravity
///   alone is constant; an idling engine or a passing lorry stays under a suitable threshold,
///   a drive or a walk goes well over it).
/// - A command (`said`): the program's own word, moving or not.
///
/// Movement is reported at once (`moving`); `still` only once nothing but stillness was
/// observed for `still_after` (the hysteresis in time), which `deadline` says when to check
/// for. A command's `moving` holds until it says otherwise; a sample's holds for that sample.
public struct MotionDetector: Sendable {
    public let stillAfter: Duration
    public let window: Duration
    public let thresholdMetersPerSecondSquared: Double
    /// Above this standard deviation over a full window the movement is a walk or a run
    /// (docs/sources.md, "What the accelerometer senses").
    public let footThresholdMetersPerSecondSquared: Double
    /// How long a slower activity than the one sensed must be the majority of the full windows
    /// that moved before it is believed (a faster one is believed at once): sensing a slower
    /// activity than the truth is what plans a sleep too short of a boundary, and a phone
    /// handled in a car reads as steps for a window or two. Zero believes every window.
    public let settle: Duration
    /// `settle`'s default, 2 minutes: also how long replay's sensor (`ActivitySignal.settle`)
    /// waits before it reports a slower activity.
    public static let defaultSettle: Duration = .seconds(120)
    /// What was reported last (nil before the first report).
    public private(set) var reported: Motion?
    /// What carries the device, from the full windows that moved (each one `foot` above
    /// `footThreshold`, `vehicle` between the two thresholds): the first one's at once, a
    /// vehicle at once, and foot after a vehicle once foot was the majority of the windows
    /// over `settle` (`settled`); nil before such a window. A still window leaves it as it
    /// was (standing says nothing about what carries the device next).
    public private(set) var activity: Activity?
    /// Since when only stillness was observed (nil: the last observation was movement, or
    /// nothing was observed yet).
    public private(set) var quietSince: Duration?
    private var samples: [(at: Duration, magnitude: Double)] = []
    /// The full windows that moved within the last `settle`: when, and whether each said foot.
    private var verdicts: [(at: Duration, foot: Bool)] = []

    public init(stillAfter: Duration, window: Duration = .seconds(10), thresholdMetersPerSecondSquared: Double = 0.15,
                footThresholdMetersPerSecondSquared: Double = 2, settle: Duration = defaultSettle) {
        self.stillAfter = stillAfter
        self.window = window
        self.thresholdMetersPerSecondSquared = thresholdMetersPerSecondSquared
        self.footThresholdMetersPerSecondSquared = footThresholdMetersPerSecondSquared
        self.settle = settle
    }

    /// One accelerometer sample's magnitude at `at`; the change to report, if any. Once the
    /// samples cover 90 % of a window, the window also classifies the activity (`activity`).
    public mutating func sample(magnitude: Double, at: Duration) -> Motion? {
        guard magnitude.isFinite else { return tick(at: at) }
        samples.append((at, magnitude))
        while let first = samples.first, at - first.at > window { samples.removeFirst() }
        let spread = samples.count >= 2 ? Self.standardDeviation(samples.map(\.magnitude)) : 0
        let moving = samples.count >= 2 && spread > thresholdMetersPerSecondSquared
        isMoving = moving
        if moving, let first = samples.first, (at - first.at) * 10 >= window * 9, movedThroughout(at: at) {
            classify(foot: spread > footThresholdMetersPerSecondSquared, at: at)
        }
        return observe(moving: moving, at: at)
    }

    /// Each half of the window up to `at` moved (its spread above `threshold`). A window that
    /// moved only in part is a start or a stop, not a way of moving: the steps of a walk that
    /// begins or ends, diluted by the stillness beside them, spread like a vehicle's vibration.
    private func movedThroughout(at: Duration) -> Bool {
        let middle = at - window / 2
        let early = samples.prefix { $0.at < middle }.map(\.magnitude)
        let late = samples.dropFirst(early.count).map(\.magnitude)
        return early.count >= 2 && late.count >= 2
            && Self.standardDeviation(early) > thresholdMetersPerSecondSquared
            && Self.standardDeviation(late) > thresholdMetersPerSecondSquared
    }

    /// One full window's verdict at `at`: foot, else vehicle.
    private mutating func classify(foot: Bool, at: Duration) {
        verdicts.append((at, foot))
        while let first = verdicts.first, at - first.at > settle { verdicts.removeFirst() }
        guard foot else {
            activity = .vehicle
            return
        }
        if activity == nil || settled(at: at) { activity = .foot }
    }

    /// Foot has been the majority of the verdicts over (90 % of) `settle` up to `at`.
    private func settled(at: Duration) -> Bool {
        guard let first = verdicts.first, (at - first.at) * 10 >= settle * 9 else { return false }
        return verdicts.count(where: \.foot) * 2 > verdicts.count
    }

    /// The command's word at `at`; the change to report, if any.
    public mutating func said(moving: Bool, at: Duration) -> Motion? {
        observe(moving: moving, at: at)
    }

    /// Whether the last sample's window moved (its spread above `threshold`).
    public private(set) var isMoving = false

    /// When `still` becomes due if nothing moves before (nil: nothing due).
    public var deadline: Duration? {
        guard reported != .still, let quietSince else { return nil }
        return quietSince + stillAfter
    }

    /// The clock reached `at`: `still` when it is due.
    public mutating func tick(at: Duration) -> Motion? {
        guard let due = deadline, at >= due else { return nil }
        reported = .still
        return .still
    }

    /// Forgets what was seen (the sensor went silent or restarts): the next report starts afresh.
    public mutating func reset() {
        reported = nil
        quietSince = nil
        activity = nil
        samples.removeAll()
        verdicts.removeAll()
    }

    private mutating func observe(moving: Bool, at: Duration) -> Motion? {
        if moving {
            quietSince = nil
            guard reported != .moving else { return nil }
            reported = .moving
            return .moving
        }
        if quietSince == nil { quietSince = at }
        return tick(at: at)
    }

    static func standardDeviation(_ values: [Double]) -> Double {
        let mean = values.reduce(0, +) / Double(values.count)
        let variance = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(values.count)
        return variance.squareRoot()
    }
}
