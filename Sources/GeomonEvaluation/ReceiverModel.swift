public import GeomonCore

/// The GNSS receiver in replay: which recorded fix is delivered when, given on/off commands.
///
/// The model (docs/power.md, "Receiver model"):
/// - The recording starts with the receiver on and its first fix in hand (`start(at:)`): the
///   first recorded fix is the moment a receiver already had one.
/// - While off, nothing is delivered.
/// - After `turnOn(at: T)` the first fix is due at `T + TTFF`: hot (`ttff_hot`) when the receiver
///   was off for less than `hot_window`, else warm (`ttff_warm`, also when it was never on).
///   It is the recorded fix at that instant, or one interpolated (`interpolated`: position,
///   speed and course evenly between them, accuracy the earlier fix's) between the recorded
///   fixes around it when they are at most `interpolationMaxGap` apart. Across a longer gap
///   the receiver waits, on, until the next recorded fix (the policy's `fix_timeout` may
///   switch it off first). Before the track's first fix it waits for that one; after the last
///   there is nothing.
/// - After the first fix, every recorded fix later than the last delivered one, at its time;
///   with a `trackingInterval` (a receiver tracking at 1 Hz: 1 s), also one every interval
///   between them, interpolated the same way, where the recorded fixes around it are at most
///   `interpolationMaxGap` apart.
///
/// It also accounts for the time on: acquiring (switch-on to first fix) and tracking.
/// The recording is read once, forwards (the driver's clock never goes back): the model keeps
/// only the next recorded fix not yet passed and the one before it.
public struct ReceiverModel {
    public let settings: ReceiverSettings
    public let interpolationMaxGap: Duration
    /// How long the receiver stays powered after a switch-off (`GNSSPowerMethod.releaseDelay`):
    /// each off period's first `releaseDelay` is charged as tracking (`ReceiverUsage.unreleased`).
    public let releaseDelay: Duration?
    /// While tracking, a fix at least this often (interpolated between recorded fixes); nil:
    /// the recorded fixes only.
    public let trackingInterval: Duration?
    private var feed: FixFeed
    /// The first recorded fix not yet passed (nil at the end of the recording), and the last
    /// one passed before it.
    private var upcoming: Fix?
    private var passed: Fix?
    private var onSince: UTCTime?
    private var firstFixAt: UTCTime?
    private var lastOffAt: UTCTime?
    private var pending: Fix?
    /// `pending` is interpolated, not a recorded fix.
    private var pendingInterpolated = false
    public private(set) var usage = ReceiverUsage()

    /// - Parameter track: recorded fixes, sorted by time.
    public init(track: [Fix], settings: ReceiverSettings, interpolationMaxGap: Duration = .seconds(60),
                releaseDelay: Duration? = nil, trackingInterval: Duration? = nil) {
        self.init(feed: FixFeed(track), settings: settings, interpolationMaxGap: interpolationMaxGap, releaseDelay: releaseDelay,
                  trackingInterval: trackingInterval)
    }

    /// - Parameter feed: recorded fixes in time order, read once.
    public init(feed: FixFeed, settings: ReceiverSettings, interpolationMaxGap: Duration = .seconds(60),
                releaseDelay: Duration? = nil, trackingInterval: Duration? = nil) {
        self.feed = feed
        self.trackingInterval = trackingInterval.flatMap { $0 > .zero ? $0 : nil }
        upcoming = self.feed.next()
        self.settings = settings
        self.interpolationMaxGap = interpolationMaxGap
        self.releaseDelay = releaseDelay
    }

    public var isOn: Bool { onSince != nil }

    /// The TTFF the receiver would have if switched on at `now`.
    public func ttff(at now: UTCTime) -> Duration {
        guard let off = lastOffAt, now - off < settings.hotWindow else { return settings.ttffWarm }
        return settings.ttffHot
    }

    /// The recording begins: the receiver is on and its first fix is the first recorded one.
    public mutating func start(at now: UTCTime) {
        guard onSince == nil else { return }
        onSince = now
        firstFixAt = nil
        usage.wakeups += 1
        pass { $0 < now }
        pending = upcoming
        pendingInterpolated = false
    }

    /// Moves past the recorded fixes whose time satisfies `before`.
    private mutating func pass(while before: (UTCTime) -> Bool) {
        while let fix = upcoming, before(fix.time) {
            passed = fix
            upcoming = feed.next()
        }
    }

    public mutating func turnOn(at now: UTCTime) {
        guard onSince == nil else { return }
        chargeRelease(until: now)
        let due = now + ttff(at: now)
        onSince = now
        firstFixAt = nil
        usage.wakeups += 1
        pending = firstFix(due: due)
    }

    public mutating func turnOff(at now: UTCTime) {
        guard let since = onSince else { return }
        let first = firstFixAt.map { min($0, now) }
        usage.acquire += (first ?? now) - since
        if let first { usage.track += now - first }
        onSince = nil
        firstFixAt = nil
        pending = nil
        lastOffAt = now
    }

    /// While off, moves past the recorded fixes before `now` (what a later switch-on would pass
    /// anyway: its first fix is due at `now` or later), so a shared reading need not hold them.
    public mutating func skip(to now: UTCTime) {
        guard onSince == nil else { return }
        pass { $0 < now }
    }

    /// The end of the recording at `end`, the receiver off: its last off period's release.
    public mutating func finish(at end: UTCTime) {
        turnOff(at: end)
        chargeRelease(until: end)
    }

    /// The part of the off period since `lastOffAt` until `now` during which the receiver was
    /// still powered (at most `releaseDelay`).
    private mutating func chargeRelease(until now: UTCTime) {
        guard let delay = releaseDelay, let off = lastOffAt, now > off else { return }
        usage.unreleased += min(now - off, delay)
    }

    /// The next fix the receiver will deliver if it stays on; nil when off or none is left.
    public var nextFix: Fix? { onSince == nil ? nil : pending }

    /// Delivers `nextFix` and moves on to the following one.
    public mutating func takeFix() -> Fix? {
        guard onSince != nil, let fix = pending else { return nil }
        if firstFixAt == nil { firstFixAt = fix.time }
        usage.fixesDelivered += 1
        if pendingInterpolated { usage.fixesInterpolated += 1 }
        pass { $0 <= fix.time }
        pending = fixAfter(fix.time)
        return fix
    }

    /// The fix that follows one delivered at `time` while tracking: the next recorded one, or
    /// with a `trackingInterval` one interpolated at `time + interval` when that comes first.
    private mutating func fixAfter(_ time: UTCTime) -> Fix? {
        pendingInterpolated = false
        guard let interval = trackingInterval, let after = upcoming, let before = passed else { return upcoming }
        let due = time + interval
        guard due < after.time, after.time - before.time <= interpolationMaxGap else { return after }
        pendingInterpolated = true
        return Self.interpolated(before, after, at: due)
    }

    private mutating func firstFix(due: UTCTime) -> Fix? {
        // First recorded fix at or after `due` (never behind what was passed: `due` is later
        // than every fix delivered so far).
        pass { $0 < due }
        pendingInterpolated = false
        guard let after = upcoming else { return nil }
        guard after.time != due, let before = passed else { return after }
        guard after.time - before.time <= interpolationMaxGap else { return after }
        pendingInterpolated = true
        return Self.interpolated(before, after, at: due)
    }

    /// The fix at `due` between two recorded fixes: the position on the straight line between
    /// them, speed and course changing evenly from the earlier fix's to the later one's (course
    /// the short way round; where either lacks one, the earlier fix's), accuracy the earlier
    /// fix's.
    static func interpolated(_ before: Fix, _ after: Fix, at due: UTCTime) -> Fix {
        let fraction = (due - before.time).secondsValue / (after.time - before.time).secondsValue
        var fix = before
        fix.time = due
        fix.coordinate = Coordinate(
            latitude: before.coordinate.latitude + (after.coordinate.latitude - before.coordinate.latitude) * fraction,
            longitude: before.coordinate.longitude + Geodesy.longitudeDelta(before.coordinate.longitude, after.coordinate.longitude) * fraction)
        if let from = before.speedMetersPerSecond, let to = after.speedMetersPerSecond {
            fix.speedMetersPerSecond = from + (to - from) * fraction
        }
        if let from = before.courseDegrees, let to = after.courseDegrees {
            let turn = (to - from + 540).truncatingRemainder(dividingBy: 360) - 180
            let course = (from + turn * fraction).truncatingRemainder(dividingBy: 360)
            fix.courseDegrees = course < 0 ? course + 360 : course
        }
        return fix
    }
}

/// Time the receiver spent on, split by phase, and how often it was switched on.
public struct ReceiverUsage: Hashable, Sendable {
    /// From switch-on to the first fix (or switch-off without one).
    public var acquire: Duration = .zero
    /// From the first fix to switch-off.
    public var track: Duration = .zero
    public var wakeups = 0
    /// Every fix delivered, recorded or interpolated.
    public var fixesDelivered = 0
    /// Of them, the ones interpolated between recorded fixes (a wake's first fix, the tracking
    /// interval's).
    public var fixesInterpolated = 0
    /// Off (for the policy) but still powered: the power method's release after each switch-off.
    public var unreleased: Duration = .zero

    public init() {}

    /// The time the policy had the receiver on.
    public var on: Duration { acquire + track }

    /// The time the receiver was powered: `on` and the release after each switch-off.
    public var powered: Duration { on + unreleased }

    /// Energy in mWh from the receiver's acquire and track powers (the release at track power).
    public func energyMilliwattHours(_ settings: ReceiverSettings) -> Double {
        (acquire.secondsValue * settings.powerAcquireMilliwatts
            + (track + unreleased).secondsValue * settings.powerTrackMilliwatts) / 3600
    }
}
