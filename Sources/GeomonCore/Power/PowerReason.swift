/// Why the power policy did something: a kind plus the numbers behind it, for logs and reports
/// (`GeomonFormat` words it as one line of `key=value` pairs, e.g.
/// `sleep bound=heading d=812m acc=5m v=13.2m/s sleep=74.2s ttff=2s`).
public struct PowerReason: Hashable, Sendable {
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        /// The policy started.
        case start
        /// The profile (or `--always-on`) forces the receiver on.
        case alwaysOn = "always-on"
        /// A scheduled wake-up: the earliest time a boundary could be reached.
        case scheduledWake = "scheduled-wake"
        /// No boundary reachable before the wake-up time: the receiver sleeps.
        case sleep
        /// A boundary is too close to sleep at least `min_sleep`.
        case boundaryNear = "boundary-near"
        /// The engine is not certain on which side of a nearby boundary the device is.
        case uncertain
        /// A transition waits for confirming fixes.
        case confirming
        /// Inside a fence with `speed_limit:`, moving fast enough to pass it before the next
        /// fix could come (docs/engine.md, "Speed in a zone").
        case speedLimit = "speed-limit"
        /// The fix is too inaccurate to decide anything.
        case poorAccuracy = "poor-accuracy"
        /// A fix implied a speed above `max_speed`; it is held until a second fix confirms it.
        case implausibleJump = "implausible-jump"
        /// A dwell timer is due soon: stay on or wake in time for it.
        case dwellDue = "dwell-due"
        /// The device stayed within `stationary.radius` for `stationary.timeout`.
        case stationary
        /// A check-back while stationary.
        case stationaryCheck = "stationary-check"
        /// The device left the stationary radius (continuous mode tracks again).
        case moving
        /// No fix within `fix_timeout` after the receiver was switched on.
        case fixTimeout = "fix-timeout"
        /// A retry after a fix timeout: listening for the signal's return.
        case retry
        /// A coarse fix came near a fence: GNSS is woken to decide.
        case coarseNearFence = "coarse-near-fence"
        /// Regions mode: a coarse fix whose accuracy circle is far from every boundary moved
        /// the next wake later (no boundary can be reached from anywhere in the circle sooner).
        case coarseFar = "coarse-far"
        /// A sleep within `max_latency` where a boundary may be within reach (uncertain side,
        /// boundary near, a change to confirm): no full excursion fits before the next fix.
        case bandSleep = "band-sleep"
        /// The engine is certain again: the GNSS path goes back to sleep (significant-change mode).
        case certain
        /// The motion sensor says the device stands still: the receiver stays off until it says
        /// moving, or until a boundary could have been reached at `creep_speed` (`still-check`).
        case motionStill = "motion-still"
        /// A check-back while the motion sensor says still: the device may have drifted at
        /// `creep_speed` as far as a boundary since the last fix (docs/power.md, "Wake on motion").
        case stillCheck = "still-check"
        /// The motion sensor says the device moves again: the receiver is woken at once.
        case motion
        /// The motion sensor went silent (nothing for `stale_after`): the policy goes on as
        /// without one, and a receiver kept off by it is woken.
        case motionLost = "motion-lost"
        /// Someone asked for a fix now (an OwnTracks `reportLocation` command): the receiver is
        /// woken once; its fix is decided as any other.
        case requested
        /// The motion source sensed an activity with wider bounds than the sleep was planned
        /// with: the receiver is woken at once (docs/power.md, "The latency argument").
        case activity
        /// The mode changed (`modes:`): the receiver and the coarse source as the new
        /// monitoring mode needs them.
        case mode
    }

    /// Which reachability bound decided a sleep.
    public enum SleepBound: String, Hashable, Sendable, CaseIterable {
        /// `(d − accuracy − wake_margin) / max_speed`.
        case maxSpeed = "max-speed"
        /// Reported speed plus an acceleration limit, any direction.
        case kinematic
        /// Reported velocity (speed and course) plus an acceleration limit.
        case heading
        /// Capped by `max_sleep`.
        case maxSleep = "max-sleep"
        /// A shorter safe sleep clamped up to `min_sleep` (`ShortSleepRule.clampToMinSleep`).
        case minSleep = "min-sleep"
        /// Capped by a pending dwell deadline.
        case dwell
        /// `max_latency`: the next fix comes before a full excursion (a change confirmed and
        /// its reverse) could be completed.
        case excursion
        /// `max_latency`: the next fix comes in time to confirm, within `max_latency`, a change
        /// starting now (or the one pending).
        case latency
    }

    public var kind: Kind
    public var bound: SleepBound?
    /// Distance to the nearest boundary (metres).
    public var distanceMeters: Double?
    public var accuracyMeters: Double?
    public var speedMetersPerSecond: Double?
    /// The sleep (or check interval) decided.
    public var sleep: Duration?
    /// The time to first fix that was expected on waking.
    public var ttff: Duration?

    public init(
        _ kind: Kind,
        bound: SleepBound? = nil,
        distanceMeters: Double? = nil,
        accuracyMeters: Double? = nil,
        speedMetersPerSecond: Double? = nil,
        sleep: Duration? = nil,
        ttff: Duration? = nil
    ) {
        self.kind = kind
        self.bound = bound
        self.distanceMeters = distanceMeters
        self.accuracyMeters = accuracyMeters
        self.speedMetersPerSecond = speedMetersPerSecond
        self.sleep = sleep
        self.ttff = ttff
    }
}

/// What the policy asks the shell to do. The shell performs these; the policy never does.
public enum PowerAction: Hashable, Sendable {
    case gnssOn(PowerReason)
    case gnssOff(PowerReason)
    /// Call `deadlineReached(now:)` at this time (also available as `nextDeadline`).
    case wakeAt(UTCTime, PowerReason)
    case coarseOn(PowerReason)
    case coarseOff(PowerReason)

    public var reason: PowerReason {
        switch self {
        case let .gnssOn(r), let .gnssOff(r), let .wakeAt(_, r), let .coarseOn(r), let .coarseOff(r): r
        }
    }
}
