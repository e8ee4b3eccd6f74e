/// The power policy's knobs, taken from a `Profile` plus the reachability assumptions.
public struct PowerConfiguration: Hashable, Sendable {
    public var mode: MonitoringMode
    /// Forces the receiver on (`--always-on`, the comparison baseline).
    public var alwaysOn: Bool = false
    /// The profile configures a GNSS source (significant-change mode may wake it near a fence).
    public var gnssConfigured: Bool = true
    /// The profile configures a coarse source (regions mode then uses it beside GNSS).
    public var coarseConfigured: Bool = false
    /// The bounds in effect: the declared activity's (`plannedBounds`), a sensed activity's,
    /// or widened after a violation (`PowerPolicy` keeps these two fields current).
    public var maxSpeedMetersPerSecond: Double
    public var wakeMarginMeters: Double
    /// The profile's `policy.activity` and the bounds it plans with (`PolicySettings.plannedBounds`).
    public var declaredActivity: Activity = .any
    public var plannedBounds: MotionBounds
    /// `activity: any`'s bounds (the profile's `max_speed` and `max_acceleration`).
    public var anyBounds: MotionBounds
    /// How long the motion source may take to notice a change of activity (`sources.motion.latency`).
    public var activityLatency: Duration = .seconds(10)
    /// How fast the device may drift while the motion sensor says still (`sources.motion.creep_speed`):
    /// a still device is checked back on when a boundary could be reached at it; 0: never.
    public var stillCreepMetersPerSecond: Double = MotionSourceSettings.defaultCreepSpeedMetersPerSecond
    /// How long the motion source feels no movement before it says still (`sources.motion.still_after`).
    public var stillAfter: Duration = MotionSourceSettings().stillAfter
    /// The motion sensor's identity (`MotionSourceSettings.identity`; nil: none).
    public var motionSensor: String?
    public var minSleep: Duration
    public var maxSleep: Duration
    public var fixTimeout: Duration
    public var stationaryRadiusMeters: Double
    public var stationaryTimeout: Duration
    /// The hot start in effect: the profile's, or the one the policy has learnt (`setTTFFHot`,
    /// which moves the defaults that follow from it).
    public private(set) var ttffHot: Duration
    public var ttffWarm: Duration
    public var hotWindow: Duration
    /// The break-even off time: a budget sleep (`band-sleep`) that would switch the receiver
    /// off for less is not taken (`ReceiverSettings.effectiveMinOff`).
    public var minOff: Duration = .zero
    /// How long the receiver may go on tracking after the policy switched it off: with
    /// `power: watch`, gpsd closes an unwatched device only after 60 s (`RELEASE_TIMEOUT`), so
    /// a wake within that finds it tracking and measures no restart. Only first fixes after a
    /// longer off time are measured for `ttff_hot`.
    public var tracksOnAfterOff: Duration = .zero
    /// GNSS fixes worse than this decide nothing (the receiver stays on).
    public var minAccuracyMeters: Double
    /// Largest change of the velocity vector per second apart from braking (turns, speeding up).
    public var maxAccelerationMetersPerSecondSquared: Double = 1.0
    /// Largest error of a fix's reported speed.
    public var speedErrorMetersPerSecond: Double = 1.0
    /// Hardest braking outside a collision, used only to judge a fix's reported speed against
    /// the fix before (`PowerPolicy.withoutContradictedSpeed`): 1 g, about what tyres grip on
    /// dry asphalt (friction coefficient 0.8–1.0) and beyond what a runner stopping or an
    /// aircraft in flight reaches. A harder stop makes a plan more cautious, never less.
    public var maxDecelerationMetersPerSecondSquared: Double = 9.81
    /// Largest error of a fix's reported course.
    public var courseErrorDegrees: Double = 20
    /// Cap of the retry interval after fix timeouts (it doubles from `min_sleep`;
    /// `policy.retry_max_interval`): bounds how late the return of the signal is seen,
    /// compared with a receiver left on. Profile default `max_latency − ttff_hot`
    /// (docs/power.md, "Fix timeout and listens").
    /// A value set here is the caller's own: it no longer follows the learnt hot start.
    public var maxFixTimeoutRetry: Duration {
        get { retryCap }
        set { retryCap = newValue; retryCapFollowsTTFF = false }
    }
    private var retryCap: Duration = .seconds(10)
    /// Whether `maxFixTimeoutRetry` is the profile's default, `max_latency − ttff_hot`: it then
    /// follows the `ttff_hot` the policy learns (`setTTFFHot`), so that the sky's return is
    /// still seen within `max_latency` with a receiver slower than planned.
    public private(set) var retryCapFollowsTTFF = false

    /// Whether `retryFixTimeout` is the profile's default, `ttff_hot + 15 s`: it then follows the
    /// `ttff_hot` the policy learns (`setTTFFHot`), so that a short listen waits 15 s beyond the
    /// hot start this receiver has shown, not beyond the one planned.
    public private(set) var retryListenFollowsTTFF = false

    /// Puts `ttff` in effect as the hot start, with the defaults that follow from it: the retry
    /// cap (`max_latency − ttff`) and the short listen (`ttff + 15 s`, at most `fix_timeout`),
    /// each where the profile does not set it.
    public mutating func setTTFFHot(_ ttff: Duration) {
        ttffHot = ttff
        if retryCapFollowsTTFF {
            retryCap = PolicySettings.defaultRetryMaxInterval(maxLatency: maxLatency, ttffHot: ttff, minSleep: minSleep)
        }
        if retryListenFollowsTTFF {
            shortListen = min(fixTimeout, PolicySettings.defaultRetryFixTimeout(ttffHot: ttff))
        }
    }
    /// How late a state change may be seen (`policy.max_latency`): the policy may then sleep
    /// where a boundary is within reach, as long as no full excursion fits in the sleep and a
    /// change starting now is still confirmed within it (docs/power.md, "Sleeping within a
    /// latency budget"). Zero: never.
    public var maxLatency: Duration = .zero
    /// The engine's hysteresis (`transitions.hysteresis`): a change is confirmed only by fixes
    /// at least this far (plus their accuracy) past the boundary.
    public var hysteresisMeters: Double = 10
    /// Consecutive certain fixes that confirm a change (`transitions.confirm`).
    public var confirmFixes: Int = 2
    /// How long the new side must have been seen to confirm a change (`transitions.confirm.time`).
    public var confirmTime: Duration = .zero
    /// The receiver's interval between fixes while it tracks (gpsd's default rate, 1 Hz): when
    /// the fixes after the first one that confirm a change come.
    public var trackingFixInterval: Duration = .seconds(1)
    /// How long a short listen waits for a fix (`policy.retry_fix_timeout`, default
    /// `ttff_hot + 15 s`, at most `fix_timeout`): a retry after a fix timeout, a hot start, and
    /// the wait for the next fix while nothing is undecided. A receiver that had a fix minutes
    /// ago and gets none within this is in a tunnel or indoors; re-checking in short listens
    /// costs less than full `fix_timeout` waits and sees the signal's return about as soon.
    /// nil: always `fix_timeout` (the behaviour before short listens). A value set here is the
    /// caller's own: it no longer follows the learnt hot start.
    public var retryFixTimeout: Duration? {
        get { shortListen }
        set { shortListen = newValue; retryListenFollowsTTFF = false }
    }
    private var shortListen: Duration? = nil
    /// With `max_latency`, how long each retry listens once a retry's short listen has also got
    /// no fix: the receiver is in an outage, and the retries only probe whether the sky is
    /// back; a hot start then gives a fix within `ttff_hot`. `2 × ttff_hot` and one tracking
    /// interval (at most the short listen) until the policy has measured the receiver's hot
    /// starts, then at most this (`PowerPolicy.probeListen`).
    public var probeListen: Duration {
        ttffHot * 2 + trackingFixInterval
    }

    /// In an outage once a boundary could be reached: retry with short listens, or wait on
    /// (`policy.outage`; default `retry` in regions, `wait` in continuous).
    public var outage: OutageRule = .retry
    /// What to do when the safe sleep is shorter than `min_sleep` (and the engine is certain).
    public var shortSleep: ShortSleepRule = .clampToMinSleep
    /// The course error assumed for a trusted course (`PowerPolicy` trusts a course when the
    /// fix and the previous one decided on agree: docs/power.md, "Heading and road speed").
    public var trustedCourseErrorDegrees: Double = 5
    /// Both fixes move at least this fast for their courses to be trusted.
    public var trustedCourseMinSpeedMetersPerSecond: Double = 5
    /// Their courses and the bearing between them agree within this.
    public var trustedCourseAgreementDegrees: Double = 10
    /// They are at most this far apart in time.
    public var trustedCourseWindow: Duration = .seconds(60)
    /// Below this speed a fix's course is ignored.
    public var minSpeedForCourseMetersPerSecond: Double = 3

    public init(profile: Profile) {
        mode = profile.mode
        gnssConfigured = profile.sources.gnss != nil || profile.mode != .significantChange
        coarseConfigured = profile.sources.coarse != nil
        // The receiver's figures as the power method's restart class makes them; the listens
        // and retry caps derived from `ttff_hot` follow.
        var p = profile.policy
        p.receiver = profile.receiver
        declaredActivity = p.activity
        plannedBounds = p.plannedBounds
        anyBounds = p.bounds(for: .any)
        activityLatency = profile.sources.motion?.activityLatency ?? activityLatency
        stillCreepMetersPerSecond = profile.sources.motion?.creepSpeedMetersPerSecond ?? stillCreepMetersPerSecond
        stillAfter = profile.sources.motion?.stillAfter ?? stillAfter
        motionSensor = profile.sources.motion?.identity
        maxSpeedMetersPerSecond = plannedBounds.maxSpeedMetersPerSecond
        wakeMarginMeters = p.wakeMarginMeters
        minSleep = p.minSleep
        maxSleep = p.maxSleep
        fixTimeout = p.fixTimeout
        stationaryRadiusMeters = p.stationary.radiusMeters
        stationaryTimeout = p.stationary.timeout
        ttffHot = p.receiver.ttffHot
        ttffWarm = p.receiver.ttffWarm
        hotWindow = p.receiver.hotWindow
        minOff = p.receiver.effectiveMinOff
        if profile.powerMethod == .watch { tracksOnAfterOff = .seconds(60) }
        minAccuracyMeters = profile.sources.gnss?.minAccuracyMeters ?? GNSSSourceSettings().minAccuracyMeters
        maxAccelerationMetersPerSecondSquared = plannedBounds.maxAccelerationMetersPerSecondSquared
        shortListen = p.effectiveRetryFixTimeout
        retryCap = p.effectiveRetryMaxInterval
        retryCapFollowsTTFF = p.retryMaxInterval == nil && p.maxLatency > .zero
        retryListenFollowsTTFF = p.retryFixTimeout == nil
        hysteresisMeters = max(0, profile.transitions.hysteresisMeters)
        confirmFixes = max(1, profile.transitions.confirm)
        confirmTime = max(.zero, profile.transitions.confirmTime)
        maxLatency = p.maxLatency
        outage = p.effectiveOutage(mode: profile.mode)
    }

    /// From the first fix that shows a change to the one that confirms it, while tracking: the
    /// `confirm − 1` fixes after it, one `trackingFixInterval` apart, and at least `confirmTime`.
    public var confirmSpan: Duration {
        max(trackingFixInterval * (confirmFixes - 1), confirmTime)
    }

    /// The bounds for a sensed `activity`: the declared one's are the profile's (`max_speed`
    /// and `max_acceleration` override them), any other's are its own.
    public func bounds(for activity: Activity) -> MotionBounds {
        if activity == declaredActivity { return plannedBounds }
        return activity.bounds ?? anyBounds
    }

    /// What a device whose motion source senses `bounds` can have covered beyond them before
    /// the source noticed a change of activity and a fix came (docs/power.md, "The latency
    /// argument"): it moved at most at these bounds' speed, and from the change on sped up at
    /// most as a vehicle (or the profile's `any`, when wider) does, for `activityLatency` plus
    /// the start of the wake that follows the report: `reach = (v + A·T/2)·T` capped at
    /// `v_max·T`, less what the sensed bounds allow in `T` anyway. That start is hot where every
    /// sleep ends within `hot_window` of the fix before it (`max_sleep ≤ hot_window`, the
    /// defaults); else it may be warm.
    public func switchReserveMeters(sensed bounds: MotionBounds) -> Double {
        let speed = switchTarget.maxSpeedMetersPerSecond
        let acceleration = switchTarget.maxAccelerationMetersPerSecondSquared
        let t = (activityLatency + (maxSleep <= hotWindow ? ttffHot : max(ttffHot, ttffWarm))).secondsValue
        let v = bounds.maxSpeedMetersPerSecond + speedErrorMetersPerSecond
        let reach = min(speed * t, v * t + acceleration * t * t / 2)
        return max(0, reach - bounds.maxSpeedMetersPerSecond * t)
    }

    /// What the switch reserve assumes a device can switch to unnoticed: a vehicle, or `any`'s
    /// bounds where those are wider.
    public var switchTarget: MotionBounds {
        let vehicle = Activity.vehicle.bounds!
        return MotionBounds(maxSpeedMetersPerSecond: max(vehicle.maxSpeedMetersPerSecond, anyBounds.maxSpeedMetersPerSecond),
                            maxAccelerationMetersPerSecondSquared: max(vehicle.maxAccelerationMetersPerSecondSquared, anyBounds.maxAccelerationMetersPerSecondSquared))
    }

    /// The reachability bound these settings define.
    public var reachability: ReachabilityBound {
        ReachabilityBound(
            maxSpeedMetersPerSecond: maxSpeedMetersPerSecond,
            maxAccelerationMetersPerSecondSquared: maxAccelerationMetersPerSecondSquared,
            speedErrorMetersPerSecond: speedErrorMetersPerSecond,
            courseErrorDegrees: courseErrorDegrees,
            minSpeedForCourseMetersPerSecond: minSpeedForCourseMetersPerSecond
        )
    }

    /// How far the index must look so that a boundary beyond it can never shorten a sleep:
    /// `max_speed × (max_sleep + ttff_warm) + min_accuracy + wake_margin`.
    public var searchRadiusMeters: Double {
        maxSpeedMetersPerSecond * (maxSleep + ttffWarm).secondsValue + minAccuracyMeters + wakeMarginMeters
    }
}

/// The rule for a safe sleep shorter than `min_sleep`.
public enum ShortSleepRule: String, Hashable, Sendable, CaseIterable {
    /// The rule: the sleep is clamped up to `min_sleep`. The device may then be up to
    /// `max_speed × (min_sleep − safe sleep)` closer to a boundary than the bound allows, so a
    /// crossing may be seen up to `min_sleep + ttff` late (never missed while the device stays
    /// on the new side for at least that long plus the engine's confirmation).
    case clampToMinSleep = "clamp"
    /// Never sleep beyond the safe horizon: the receiver stays on instead.
    case stayOn = "stay-on"
    /// Sleep exactly to the safe horizon (ignoring `min_sleep`) when that sleep is at least the
    /// hot TTFF; otherwise stay on. Never beyond the bound, and cheaper than staying on.
    case exact
}
