/// The power policy: when to switch the GNSS receiver and the coarse source on and off.
///
/// A pure state machine in the NIO style: each event method takes the input and `now` and
/// returns the actions the shell must perform; `nextDeadline` says when to call
/// `deadlineReached(now:)`. A loop drives it like this:
///
/// 1. `start(now:)` once.
/// 2. For each fix from a source: `screen(fix)`; for every fix it passes (held outliers are
///    released when a second fix confirms them), feed the transition engine, build a
///    `FixContext`, and call `fixReceived(_:context:now:)`.
/// 3. When `nextDeadline` comes first: `deadlineReached(now:)` (scheduled wakes and fix timeouts).
///
/// `Monitor` is that loop's body: nothing else drives the policy.
///
/// Modes (see docs/power.md): `regions` sleeps as long as no boundary can be reached;
/// `continuous` stays on while moving and duty-cycles while stationary; `significant-change`
/// runs only the coarse source and wakes GNSS near a fence when the profile configures `gnss`.
public struct PowerPolicy: Sendable {
    /// The profile's settings, with the bounds in effect (`bounds`) kept current: the declared
    /// activity's, a sensed one's, or those widened after a violation.
    public private(set) var configuration: PowerConfiguration
    /// `wake_margin` as the profile sets it (a sensed activity adds its switch reserve).
    private var baseWakeMarginMeters: Double
    /// The switch reserve in effect (0 without a sensed activity): added to the wake margin,
    /// and taken off the distances the latency budget's sleeps rest on.
    private var switchReserveMeters = 0.0
    /// `ttff_hot` as the profile (or the power method) sets it; the measured one may replace it.
    private var baseTTFFHot: Duration
    private var state: State
    private var memory: Memory
    /// The reason of the last regions or continuous decision after a GNSS fix (staying on or
    /// sleeping): why the receiver is on between fixes, for logs and the report's breakdown.
    public private(set) var lastDecision: PowerReason?

    /// What the receiver is doing, as far as the policy is concerned.
    private enum State: Hashable, Sendable {
        /// Before `start(now:)`.
        case idle
        /// GNSS off; wake (or check back) at the given time, if any.
        case off(wakeAt: UTCTime?, wakeReason: PowerReason.Kind)
        /// GNSS on since `since`; `timeoutBase` is the last time a fix came (or the switch-on).
        case on(since: UTCTime, timeoutBase: UTCTime)
    }

    /// Everything else the policy remembers (plain values).
    private struct Memory: Hashable, Sendable {
        var coarseOn = false
        var lastGnssOffAt: UTCTime?
        /// The last GNSS fix: the receiver's ephemerides are as fresh as it (`expectedTTFF`).
        var lastGnssFixAt: UTCTime?
        var lastAccepted: Fix?
        /// The last GNSS fix the screen accepted: what a GNSS fix is judged against when coarse
        /// fixes came since (`screen`).
        var lastAcceptedGNSS: Fix?
        /// The previous usable GNSS fix a regions decision was made on (course trust).
        var previousDecided: Fix?
        var heldJump: Fix?
        var anchor: Coordinate?
        var anchorSince: UTCTime?
        /// The current stationary check interval; nil while not stationary.
        var checkInterval: Duration?
        /// The retry interval after the last fix timeout; nil once a fix came.
        var timeoutRetry: Duration?
        /// Retries after a fix timeout that got no fix either (reset by a fix).
        var failedRetries = 0
        /// The switch-on of the last listen in this run of fix timeouts that was not a probe
        /// (`probing`); nil once a fix came.
        var lastLongListenAt: UTCTime?
        /// The current listen is a short one (`retryFixTimeout`): a hot start, or waiting for
        /// the next fix with nothing undecided.
        var shortListen = false
        /// No boundary is reachable before this time, from the last fix the policy slept on
        /// (max-speed and kinematic bounds, the distance beyond the search radius included);
        /// the fix's own time after a fix that kept the receiver on. Continuous: from the last
        /// usable fix. nil before the first fix.
        var safeUntil: UTCTime?
        /// What the motion sensor says; nil without one (or once it went silent).
        var motion: Motion?
        /// Where the device stands while the sensor says still: a usable GNSS fix since it
        /// stopped (`still_after` before the word), else the first usable fix after the word
        /// (`standsFrom`).
        var stillAnchor: Coordinate?
        /// The last GNSS fix left nothing to confirm (no transition pending).
        var settled = false
        /// The last usable GNSS fix's time, and its clearance: the best known distance to a
        /// boundary less its accuracy and the wake margin; or, when the sensor said still long
        /// after that fix, when the device stopped and what the way it may have gone since
        /// left of it (`standsFrom`). A device the sensor says is still may drift from there
        /// (`stillCheckAt`).
        var clearanceAt: UTCTime?
        var clearanceMeters: Double = 0
        /// The last usable GNSS fix (a still anchor, and how long a garage's check-backs wait).
        var usableFix: Fix?
        /// The switch-on of the listen under way when it is a still check-back (`still-check`);
        /// nil once a usable fix came, or for any other listen.
        var stillCheckSince: UTCTime?
        /// What a bounded sleep had left when the still sensor took over (resumed on moving).
        var sleepLeft: Duration?
        /// The time to first fix the sleep under way wakes ahead of its horizon for (`apply`).
        var sleepTTFF: Duration?
        /// The bound of the sleep under way (`apply`): only a max-speed or kinematic one holds
        /// from wherever the device stood still (`boundedSleepLeft`).
        var sleepBound: PowerReason.SleepBound?
        /// The activity the motion source senses (nil: none sensed; the declared one applies).
        var sensed: Activity?
        /// Bounds widened for the rest of the trip, and the violations seen.
        var assumptions = AssumptionState()
        /// The reachability bound and the wake margin in effect when the receiver last went off:
        /// what the off time relied on (the bounds may narrow meanwhile: a slower activity sensed).
        var offReach: ReachabilityBound?
        var offWakeMarginMeters: Double?
        /// The speed bound the off time relied on.
        var offMaxSpeed: Double? { offReach?.maxSpeedMetersPerSecond }
        /// The speed the last decision in regions planned with (`withoutContradictedSpeed`: nil
        /// where the fix before contradicted the report), and that fix's time.
        var decidedAt: UTCTime?
        var decidedSpeed: Double?
        /// When the bounds last widened (this run; a restart counts the stop from its anchor).
        var widenedAt: UTCTime?
        /// `assumptions` changed since the shell last took them (`takeAssumptions`).
        var assumptionsChanged = false
        /// Violations not yet taken by the shell (`takeViolations`).
        var violations: [AssumptionViolation] = []
        /// The last usable GNSS fix reported a speed above the bound (a second one confirms).
        var fastFix: Fix?
        /// Times to first fix measured after hot wakes, the latest last (at most `ttffSampleCount`).
        var ttffSamples: [Duration] = []
        /// `ttff_hot` changed since the shell last took it (`takeTTFFChange`).
        var ttffChange: TTFFChange?
    }

    /// `ttff_hot` replaced by what the receiver measures (`PowerPolicy.learnTTFF`).
    public struct TTFFChange: Hashable, Sendable {
        public var from: Duration
        public var to: Duration
        /// The median of the last measured first fixes, and how many there were.
        public var measured: Duration
        public var samples: Int
        public init(from: Duration, to: Duration, measured: Duration, samples: Int) {
            self.from = from
            self.to = to
            self.measured = measured
            self.samples = samples
        }
    }

    public init(configuration: PowerConfiguration, assumptions: AssumptionState = AssumptionState()) {
        self.configuration = configuration
        self.baseWakeMarginMeters = configuration.wakeMarginMeters
        self.baseTTFFHot = configuration.ttffHot
        self.state = .idle
        self.memory = Memory()
        memory.assumptions = assumptions
        // GNSS's verdict is on the sensor that said still: another one (a restart on an edited
        // profile) starts believed.
        if assumptions.stillDistrusted, let sensor = assumptions.stillDistrustedSensor, sensor != configuration.motionSensor {
            distrustStill(false)
        }
        applyBounds()
    }

    // MARK: - Bounds and the watch on them

    /// The bounds the planning uses now.
    public var bounds: MotionBounds {
        MotionBounds(maxSpeedMetersPerSecond: configuration.maxSpeedMetersPerSecond,
                     maxAccelerationMetersPerSecondSquared: configuration.maxAccelerationMetersPerSecondSquared)
    }

    /// The activity sensed by the motion source (nil: none; the declared one applies).
    public var sensedActivity: Activity? { memory.sensed }

    /// Bounds widened for this trip and the violations counted so far.
    public var assumptions: AssumptionState { memory.assumptions }

    /// The violations detected since the last call, oldest first.
    public mutating func takeViolations() -> [AssumptionViolation] {
        defer { memory.violations.removeAll() }
        return memory.violations
    }

    /// The assumption state when it changed since the last call (for the store), else nil.
    public mutating func takeAssumptions() -> AssumptionState? {
        guard memory.assumptionsChanged else { return nil }
        memory.assumptionsChanged = false
        return memory.assumptions
    }

    /// The bounds for the sensed (else the declared) activity, at least the widened ones; with
    /// a sensed activity the wake margin grows by the switch reserve
    /// (`PowerConfiguration.switchReserveMeters`).
    private mutating func applyBounds() {
        let sensed = memory.sensed.map { configuration.bounds(for: $0) }
        let b = widened(sensed ?? configuration.plannedBounds)
        configuration.maxSpeedMetersPerSecond = b.maxSpeedMetersPerSecond
        configuration.maxAccelerationMetersPerSecondSquared = b.maxAccelerationMetersPerSecondSquared
        switchReserveMeters = sensed.map { configuration.switchReserveMeters(sensed: $0) } ?? 0
        configuration.wakeMarginMeters = baseWakeMarginMeters + switchReserveMeters
    }

    /// `bounds`, at least the ones widened for this trip.
    private func widened(_ bounds: MotionBounds) -> MotionBounds {
        guard let w = memory.assumptions.widened else { return bounds }
        return MotionBounds(maxSpeedMetersPerSecond: max(bounds.maxSpeedMetersPerSecond, w.maxSpeedMetersPerSecond),
                            maxAccelerationMetersPerSecondSquared: max(bounds.maxAccelerationMetersPerSecondSquared, w.maxAccelerationMetersPerSecondSquared))
    }

    /// A bound the plan relied on broke: counted, reported once, and the bounds widen for the
    /// rest of the trip (`MotionBounds.widened`).
    private mutating func violated(_ kind: AssumptionViolation.Kind, at time: UTCTime, observed: Double,
                                   distance: Double? = nil, seconds: Double? = nil, acceleration: Double? = nil) {
        let planned = bounds
        let widened = acceleration.map { planned.widened(observedAcceleration: $0) } ?? planned.widened(observedMetersPerSecond: observed)
        memory.assumptions.widened = widened
        memory.widenedAt = time
        memory.assumptions.violations += 1
        memory.assumptionsChanged = true
        memory.violations.append(AssumptionViolation(kind: kind, time: time, observedMetersPerSecond: observed,
                                                     distanceMeters: distance, seconds: seconds, observedAcceleration: acceleration,
                                                     planned: planned, widened: widened))
        applyBounds()
    }

    /// Two consecutive GNSS fixes that break the speed bound together: both report more than
    /// `max_speed` plus the speed error, and their positions moved faster than `max_speed`
    /// (less both accuracies).
    private func fastPair(_ a: Fix, _ b: Fix) -> Bool {
        guard a.source == .gnss, b.source == .gnss,
              a.horizontalAccuracyMeters <= configuration.minAccuracyMeters, b.horizontalAccuracyMeters <= configuration.minAccuracyMeters,
              let u = a.speedMetersPerSecond, let v = b.speedMetersPerSecond, u.isFinite, v.isFinite else { return false }
        let limit = configuration.maxSpeedMetersPerSecond + configuration.speedErrorMetersPerSecond
        let dt = (b.time - a.time).secondsValue
        guard u > limit, v > limit, dt > 0 else { return false }
        let moved = Self.separationMeters(a, b)
        return moved > configuration.maxSpeedMetersPerSecond * dt
    }

    /// The speed at which `held` and `fix`, each a jump the bound does not allow, bear each
    /// other out; nil when they do not. With reported speeds: `fastPair`. Otherwise (no
    /// speeds, or speeds that do not show it: a receiver reporting 0 or nothing useful while
    /// the positions race on), the implied speeds (less both accuracies) of `last → held` and
    /// `held → fix` are both above `max_speed`, agree within a factor of 2, and `fix` lies
    /// farther from `last` than `held` does (progress, not the way back of an out-and-back
    /// glitch).
    private func fastChain(_ last: Fix, _ held: Fix, _ fix: Fix) -> Double? {
        if fastPair(held, fix), let u = held.speedMetersPerSecond, let v = fix.speedMetersPerSecond {
            return min(u, v)
        }
        guard last.source == .gnss, held.source == .gnss, fix.source == .gnss else { return nil }
        let dt1 = (held.time - last.time).secondsValue, dt2 = (fix.time - held.time).secondsValue
        guard dt1 > 0, dt2 > 0 else { return nil }
        let d1 = Geodesy.haversineMeters(last.coordinate, held.coordinate)
        let d2 = Geodesy.haversineMeters(held.coordinate, fix.coordinate)
        let v1 = (d1 - last.horizontalAccuracyMeters - held.horizontalAccuracyMeters) / dt1
        let v2 = (d2 - held.horizontalAccuracyMeters - fix.horizontalAccuracyMeters) / dt2
        let vmax = configuration.maxSpeedMetersPerSecond
        guard v1 > vmax, v2 > vmax, max(v1, v2) <= 2 * min(v1, v2),
              Geodesy.haversineMeters(last.coordinate, fix.coordinate) > d1 else { return nil }
        return min(v1, v2)
    }

    /// Every usable GNSS fix checks the speed bound: two consecutive fixes reporting more than
    /// `max_speed` plus the speed error, and positions that moved faster than `max_speed`
    /// between them (less both accuracies), break it. One report alone may be a glitch, and a
    /// speed derived from a position error is not borne out by the next position.
    /// A trip ends once the device stood within `stationary.radius` for `stationary.timeout`:
    /// widened bounds then return to the planned ones.
    private mutating func watchAssumptions(_ fix: Fix) {
        guard fix.source == .gnss, fix.horizontalAccuracyMeters <= configuration.minAccuracyMeters else { return }
        let limit = configuration.maxSpeedMetersPerSecond + configuration.speedErrorMetersPerSecond
        if let v = fix.speedMetersPerSecond, v.isFinite, v > limit {
            if let previous = memory.fastFix, let u = previous.speedMetersPerSecond, fastPair(previous, fix) {
                memory.fastFix = nil
                violated(.speed, at: fix.time, observed: min(u, v))
            } else {
                memory.fastFix = fix
            }
        } else {
            memory.fastFix = nil
        }
        // Stood still for the timeout since the bounds widened (a device setting off from a long
        // stop breaks them while still within the stop's radius: that is no end of the trip).
        if memory.assumptions.widened != nil, let since = memory.anchorSince,
           fix.time - max(since, memory.widenedAt ?? since) >= configuration.stationaryTimeout {
            memory.assumptions.widened = nil
            memory.assumptionsChanged = true
            applyBounds()
        }
    }

    /// How many measured first fixes `learnTTFF` keeps, and how many it needs to decide.
    public static let ttffSampleCount = 20
    public static let ttffMinimumSamples = 10

    /// A first fix after a hot wake took `ttff`. Once at least 10 of the last 20 are known,
    /// their median replaces `ttff_hot` when it differs from the one in effect by at least
    /// 0.25 s and a tenth of the profile's: the receiver is consistently faster or slower than
    /// planned. The median is held within half and twice the profile's `ttff_hot` (a receiver
    /// far outside them is failing, not faster or slower, and the profile should say so).
    private mutating func learnTTFF(_ ttff: Duration) {
        memory.ttffSamples.append(ttff)
        if memory.ttffSamples.count > Self.ttffSampleCount { memory.ttffSamples.removeFirst() }
        guard let learned = learnedTTFF(), let median = measuredTTFF else { return }
        memory.ttffChange = TTFFChange(from: configuration.ttffHot, to: learned, measured: median, samples: memory.ttffSamples.count)
        configuration.setTTFFHot(learned)
        // The switch reserve covers the source's latency plus a hot start.
        applyBounds()
    }

    /// The measured hot start that replaces the `ttff_hot` in effect: with at least 10 known,
    /// their median held within half and twice the profile's, when that differs from the one in
    /// effect by at least 0.25 s and a tenth of the profile's (nil: keep it).
    private func learnedTTFF() -> Duration? {
        guard memory.ttffSamples.count >= Self.ttffMinimumSamples, let median = measuredTTFF else { return nil }
        return Self.replacingTTFFHot(median: median, profile: baseTTFFHot, inEffect: configuration.ttffHot)
    }

    /// The rule of `learnTTFF` for a median of measured hot starts: the median held within half
    /// and twice the profile's `ttff_hot`, when that differs from the one in effect by at least
    /// 0.25 s and a tenth of the profile's (nil: keep the one in effect). `geomon receiver test
    /// --cycles` says with it what the policy will plan once it has measured such starts.
    public static func replacingTTFFHot(median: Duration, profile: Duration, inEffect: Duration) -> Duration? {
        let learned = min(max(median, profile / 2), profile * 2)
        let step = max(.milliseconds(250), profile / 10)
        return abs((learned - inEffect).secondsValue) >= step.secondsValue ? learned : nil
    }

    /// The median of `samples` (nil when empty).
    public static func median(_ samples: [Duration]) -> Duration? {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        let n = sorted.count
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2
    }

    /// What the policy a reload replaces learnt of what stays: the same receiver's measured
    /// hot starts (and the `ttff_hot` learnt from them), and the same sensor's still GNSS
    /// showed wrong (not believed until it has said moving).
    public mutating func keepLearned(from previous: PowerPolicy, sameReceiver: Bool, sameSensor: Bool) {
        // The store's (this machine's start) may be older than the one it replaces; another
        // sensor starts believed.
        distrustStill(sameSensor && previous.memory.assumptions.stillDistrusted)
        guard sameReceiver else { return }
        memory.ttffSamples = previous.memory.ttffSamples
        guard let learned = learnedTTFF() else { return }
        configuration.setTTFFHot(learned)
        applyBounds()
    }

    /// The median of the last measured first fixes after hot wakes (nil before any).
    public var measuredTTFF: Duration? { Self.median(memory.ttffSamples) }

    /// First fixes measured after hot wakes so far (at most 20 kept).
    public var ttffSampleCount: Int { memory.ttffSamples.count }

    /// The change of `ttff_hot` since the last call, if any.
    public mutating func takeTTFFChange() -> TTFFChange? {
        defer { memory.ttffChange = nil }
        return memory.ttffChange
    }

    /// The motion source's activity (nil: it says none, or went silent). Wider bounds than
    /// those a sleep was planned with wake the receiver at once: the switch reserve covered the
    /// device only until the source could notice (docs/power.md, "The latency argument").
    public mutating func activitySensed(_ activity: Activity?, now: UTCTime) -> [PowerAction] {
        guard memory.sensed != activity else { return [] }
        let before = bounds
        memory.sensed = activity
        applyBounds()
        let wider = bounds.maxSpeedMetersPerSecond > before.maxSpeedMetersPerSecond
            || bounds.maxAccelerationMetersPerSecondSquared > before.maxAccelerationMetersPerSecondSquared
        // A sleep kept for `moving` was planned on the slower bounds: woken on it instead. No
        // boundary was out of reach for longer than those bounds said: the retries after a
        // fix timeout no longer back off towards that time.
        if wider {
            memory.sleepLeft = nil
            if let safe = memory.safeUntil { memory.safeUntil = min(safe, now) }
        }
        guard !configuration.alwaysOn, configuration.mode != .significantChange, wider,
              case let .off(wake, kind) = state, wake != nil, kind == .sleep || kind == .bandSleep || kind == .fixTimeout else { return [] }
        let ttff = expectedTTFF(at: now)
        state = .on(since: now, timeoutBase: now)
        memory.shortListen = ttff == configuration.ttffHot
        memory.checkInterval = nil
        return [.gnssOn(PowerReason(.activity, ttff: ttff))]
    }

    /// The mode changed (`modes:`): plan with `configuration` from now on. What the policy
    /// learnt carries over (the last fix, the motion source's word, the sensed activity,
    /// widened bounds, the measured hot starts); what belonged to the old mode's plan does not
    /// (a scheduled wake, a stationary schedule, a retry backoff). Continuous and regions
    /// switch the receiver on if it is off — the new plan starts from a fix, as at start —
    /// and regions runs the coarse source when the profile has one; significant-change
    /// switches the receiver off and runs the coarse source. Before `start(now:)`, only the
    /// settings change.
    public mutating func switchMode(to configuration: PowerConfiguration, now: UTCTime) -> [PowerAction] {
        self.configuration = configuration
        baseWakeMarginMeters = configuration.wakeMarginMeters
        baseTTFFHot = configuration.ttffHot
        if let learned = learnedTTFF() { self.configuration.setTTFFHot(learned) }
        applyBounds()
        guard state != .idle else { return [] }
        memory.checkInterval = nil
        memory.timeoutRetry = nil
        memory.failedRetries = 0
        memory.sleepLeft = nil
        var actions: [PowerAction] = []
        let wantsCoarse: Bool
        if configuration.alwaysOn || configuration.mode != .significantChange {
            if case .off = state {
                let ttff = expectedTTFF(at: now)
                state = .on(since: now, timeoutBase: now)
                memory.shortListen = ttff == self.configuration.ttffHot
                actions.append(.gnssOn(PowerReason(.mode, ttff: ttff)))
            }
            wantsCoarse = !configuration.alwaysOn && configuration.mode == .regions && configuration.coarseConfigured
        } else {
            if case .on = state {
                switchedOff(at: now)
                actions.append(.gnssOff(PowerReason(.mode)))
            }
            state = .off(wakeAt: nil, wakeReason: .mode)
            wantsCoarse = true
        }
        if wantsCoarse != memory.coarseOn {
            memory.coarseOn = wantsCoarse
            actions.append(wantsCoarse ? .coarseOn(PowerReason(.mode)) : .coarseOff(PowerReason(.mode)))
        }
        return actions
    }

    // MARK: - Events

    /// Starts the policy: the first actions for the mode.
    public mutating func start(now: UTCTime) -> [PowerAction] {
        guard case .idle = state else { return [] }
        if configuration.alwaysOn {
            state = .on(since: now, timeoutBase: now)
            return [.gnssOn(PowerReason(.alwaysOn, ttff: expectedTTFF(at: now)))]
        }
        switch configuration.mode {
        case .regions, .continuous:
            state = .on(since: now, timeoutBase: now)
            var actions: [PowerAction] = [.gnssOn(PowerReason(.start, ttff: expectedTTFF(at: now)))]
            if configuration.mode == .regions, configuration.coarseConfigured {
                memory.coarseOn = true
                actions.append(.coarseOn(PowerReason(.start)))
            }
            return actions
        case .significantChange:
            state = .off(wakeAt: nil, wakeReason: .start)
            memory.coarseOn = true
            return [.coarseOn(PowerReason(.start))]
        }
    }

    /// Outcome of screening one fix for implausible jumps.
    public enum Screening: Hashable, Sendable {
        /// Feed these fixes to the engine, in order (a confirmed held fix comes first).
        case pass([Fix])
        /// The fix implies a speed above `max_speed`: held until a second fix confirms it.
        case held
    }

    /// Screens a fix before the engine sees it: a jump faster than `max_speed` (after allowing
    /// for both accuracies), or across an off time farther than the kinematic bound reaches
    /// from the fix before it (`kinematicExcess`), is held; the next fix either confirms it
    /// (plausible from the held fix: both pass, and the bound it broke is watched,
    /// `watchAcrossSleep`) or shows it was an outlier (plausible from the last accepted fix:
    /// the held one is dropped). "The fix before" and "the last accepted fix" of a GNSS fix
    /// are the last GNSS fix accepted; of a coarse fix, the last of any source.
    public mutating func screen(_ fix: Fix) -> Screening {
        guard let latest = memory.lastAccepted else { return accept([fix]) }
        // A GNSS fix is judged against the last GNSS fix, as one held is: a coarse fix since
        // (one during a sleep) is too imprecise to bear out or refute the bounds the sleep
        // relied on, and judged against it a GNSS fix would never be checked across the sleep.
        let judged = memory.heldJump ?? fix
        let last = judged.source == .gnss ? memory.lastAcceptedGNSS ?? latest : latest
        if let held = memory.heldJump {
            let heldForSpeed = !plausible(from: last, to: held)
            // Only a GNSS fix bears out or refutes one held for the kinematic bound: a coarse
            // fix in between lets it pass unjudged rather than lose it.
            if !heldForSpeed, fix.source != .gnss { return accept([held, fix]) }
            // A fix held only for the kinematic bound is borne out by one that lies beyond what
            // was reachable from `last` by the held fix's time too: a position glitch within
            // `max_speed` of both is not.
            if plausible(from: held, to: fix),
               heldForSpeed || !plausible(from: last, to: fix) || kinematicExcess(from: last, to: fix, reachAt: held.time) != nil {
                // A jump a second fix confirmed, across a sleep: the device may have covered
                // more than the bound the sleep relied on allows (`plausible` held it at that
                // bound, or at a wider one in effect now).
                watchAcrossSleep(from: last, to: held)
                return accept([held, fix])
            }
            if !beyondBounds(from: last, to: fix) { return accept([fix]) }
            // Two jumps in a row that bear each other out: the device moves faster than the
            // bound (a walker boarded a bus). The speed bound is broken and widens; both pass
            // if the widened bound allows them.
            if let observed = fastChain(last, held, fix) {
                violated(.speed, at: fix.time, observed: observed)
                if plausible(from: last, to: held), plausible(from: held, to: fix) { return accept([held, fix]) }
            }
            memory.heldJump = fix
            return .held
        }
        if !beyondBounds(from: last, to: fix) { return accept([fix]) }
        memory.heldJump = fix
        return .held
    }

    /// The screen passes `fixes`, in order: nothing is held any more, and the last of them (and
    /// the last GNSS one) is what the next fix is judged against.
    private mutating func accept(_ fixes: [Fix]) -> Screening {
        memory.heldJump = nil
        memory.lastAccepted = fixes.last
        if let gnss = fixes.last(where: { $0.source == .gnss }) { memory.lastAcceptedGNSS = gnss }
        return .pass(fixes)
    }

    /// Whether the screen holds `fix` coming after `last`: a jump faster than the speed bound,
    /// or across an off time beyond the kinematic bound.
    private func beyondBounds(from last: Fix, to fix: Fix) -> Bool {
        !plausible(from: last, to: fix) || kinematicExcess(from: last, to: fix) != nil
    }

    /// A jump a second fix confirmed, across an off time, checks the bounds the off time relied
    /// on, from the fix before it (`last`): a displacement (less both accuracies) faster than
    /// `max_speed` is a `reach` violation; one within it but beyond the kinematic bound by more
    /// than the wake margin (`kinematicExcess`) an `acceleration` violation. A reported speed
    /// alone may be a glitch, and so may one position; one the next position bears out is not.
    private mutating func watchAcrossSleep(from last: Fix, to fix: Fix) {
        guard gnssAcrossOffTime(from: last, to: fix) else { return }
        let dt = (fix.time - last.time).secondsValue
        let d = Self.separationMeters(last, fix)
        if dt > 0, d > 0, d / dt > memory.offMaxSpeed ?? configuration.maxSpeedMetersPerSecond {
            violated(.reach, at: fix.time, observed: d / dt, distance: d, seconds: dt)
        } else if let needed = kinematicExcess(from: last, to: fix) {
            violated(.acceleration, at: fix.time, observed: d / dt, distance: d, seconds: dt, acceleration: needed)
        }
    }

    /// Across an off time, whether `fix` lies farther from `last` (less both accuracies) than
    /// the kinematic bound reaches in the time between them (until `reachAt`, when given) from
    /// the speed the plan took from `last` (its report, unless the fix before contradicted it:
    /// then the plan rested on `max_speed` alone, and so does this check), by more than the
    /// wake margin, yet within `max_speed` (beyond it, the speed bound decides): the least
    /// acceleration bound that would have covered it, or nil. The bounds and the margin are the
    /// wider of those in effect when the receiver went off (what the off time relied on: a
    /// slower activity sensed during it narrows the bounds for the next plan, not for the time
    /// already slept) and those now (a faster one sensed wakes the receiver, and the switch
    /// reserve covered it until then). Between fixes a tracking receiver delivers, position and
    /// timing noise decide the implied speed, not motion: not checked.
    private func kinematicExcess(from last: Fix, to fix: Fix, reachAt: UTCTime? = nil) -> Double? {
        guard gnssAcrossOffTime(from: last, to: fix),
              let v = memory.decidedAt == last.time ? memory.decidedSpeed : last.speedMetersPerSecond, v.isFinite, v >= 0,
              last.horizontalAccuracyMeters <= configuration.minAccuracyMeters,
              fix.horizontalAccuracyMeters <= configuration.minAccuracyMeters,
              var reach = memory.offReach else { return nil }
        // The wider of the bounds at switch-off and now, as the jump screen (`plausible`).
        reach.maxSpeedMetersPerSecond = max(reach.maxSpeedMetersPerSecond, configuration.maxSpeedMetersPerSecond)
        reach.maxAccelerationMetersPerSecondSquared = max(reach.maxAccelerationMetersPerSecondSquared, configuration.maxAccelerationMetersPerSecondSquared)
        let margin = max(memory.offWakeMarginMeters ?? 0, configuration.wakeMarginMeters)
        let dt = ((reachAt ?? fix.time) - last.time).secondsValue
        let d = Self.separationMeters(last, fix)
        guard dt > 0, d > reach.reachMeters(seconds: dt, speedMetersPerSecond: v) + margin else { return nil }
        return reach.leastAcceleration(covering: d, seconds: dt, speedMetersPerSecond: v)
    }

    /// A fix the engine has processed, with what the engine and index know about it.
    public mutating func fixReceived(_ fix: Fix, context: FixContext, now: UTCTime) -> [PowerAction] {
        let usable = fix.source == .gnss && fix.horizontalAccuracyMeters <= configuration.minAccuracyMeters
        if fix.source == .gnss, case let .on(since, timeoutBase) = state {
            // The first fix since a hot wake (no fix and no timeout since the switch-on, and
            // none before it: a retry's first fix times the sky's return, not the receiver),
            // after an off time the receiver did not track through: its TTFF. (A still
            // check-back's poor fixes leave `timeoutBase` at the switch-on.)
            if timeoutBase == since, memory.timeoutRetry == nil, let last = memory.lastGnssFixAt, last < since, since - last < configuration.hotWindow,
               fix.time >= since, memory.lastGnssOffAt.map({ since - $0 >= configuration.tracksOnAfterOff }) ?? false {
                learnTTFF(fix.time - since)
            }
            // A still check-back listens for a usable fix within its own timeout: fixes too poor
            // to tell (a car park's sky) neither keep it on nor lengthen its listen.
            let checkingBackPoorly = memory.stillCheckSince == since && !usable
            // The first GNSS fix makes the clock a GNSS clock: a switch-on timed on the system
            // clock before it (set wrong, years ahead) would leave every later fix "measured
            // before the switch-on" and dropped as stale while the receiver stays on.
            let on = memory.lastGnssFixAt == nil ? min(since, fix.time) : since
            state = .on(since: on, timeoutBase: checkingBackPoorly ? timeoutBase : now)
            memory.lastGnssFixAt = max(memory.lastGnssFixAt ?? fix.time, fix.time)
            memory.timeoutRetry = nil
            memory.failedRetries = 0
            memory.lastLongListenAt = nil
            // Continuous tracking waits the full `fix_timeout` between fixes (a gap under trees
            // is no reason to give up); its checks and retries after an outage listen briefly.
            if !checkingBackPoorly {
                memory.shortListen = configuration.mode != .continuous && !context.transitionPending && context.allCertain
            }
        }
        updateStationary(with: fix)
        watchAssumptions(fix)
        if configuration.alwaysOn { return [] }
        checkStillAgainst(fix)
        if usable {
            memory.stillCheckSince = nil
            memory.usableFix = fix
            memory.clearanceAt = fix.time
            memory.clearanceMeters = min(context.creepDistanceMeters ?? .infinity, context.outageDistanceMeters)
                - fix.horizontalAccuracyMeters - baseWakeMarginMeters
        }
        switch configuration.mode {
        case .regions:
            guard fix.source == .gnss else { return coarseInRegions(fix, context: context, now: now) }
            let planned = withoutContradictedSpeed(fix)
            memory.decidedAt = fix.time
            memory.decidedSpeed = planned.speedMetersPerSecond
            let decision = regionsDecision(planned, context: context, now: now)
            if fix.horizontalAccuracyMeters <= configuration.minAccuracyMeters { memory.previousDecided = fix }
            // A fix that keeps the receiver on leaves a boundary reachable at once.
            memory.safeUntil = fix.time
            if case let .sleep(_, reason) = decision, reason.kind == .sleep {
                memory.safeUntil = fix.time + outageHorizon(planned, context: context)
            }
            return apply(whileStill(decision, fix, context: context, now: now), now: now)
        case .continuous:
            guard fix.source == .gnss else { return [] }
            if fix.horizontalAccuracyMeters <= configuration.minAccuracyMeters {
                memory.safeUntil = fix.time + outageHorizon(fix, context: context)
            }
            return apply(whileStill(continuousDecision(fix, now: now), fix, context: context, now: now), now: now)
        case .significantChange:
            return significantChange(fix, context: context, now: now)
        }
    }

    /// The motion sensor's word (`sources.motion`), or nil: it went silent and counts as absent.
    ///
    /// - `still`: a receiver that is on goes off once the engine has nothing to confirm (at
    ///   once when it is settled, else after the fix that settles it); a planned wake is
    ///   replaced by the still check-back (`stillCheckAt`: a drift at `creep_speed` may have
    ///   reached a boundary by then). The fence states hold: the position has not changed but
    ///   for that drift.
    /// - `moving`: a receiver kept off by `still`, or sleeping on the stationary check
    ///   interval, is woken at once (`motion`), unless `still` interrupted a sleep planned from
    ///   the max-speed or kinematic bound: that sleep goes on for what it had left (the device
    ///   starts from where it stood, at rest: `boundedSleepLeft`); such a sleep not interrupted
    ///   stands too (the bounds already assume the device may move).
    /// - nil: as without a sensor; a receiver kept off by it is woken (`motion-lost`).
    ///
    /// Regions and continuous modes switch the receiver on it; always-on and significant-change
    /// only keep the word (`moving:` modes choose on it, and a switch back to regions starts
    /// from it).
    public mutating func motionReported(_ motion: Motion?, now: UTCTime) -> [PowerAction] {
        let was = memory.motion
        guard keep(motion, now: now), !configuration.alwaysOn, configuration.mode != .significantChange, state != .idle else { return [] }
        switch motion {
        case .still:
            guard memory.lastAccepted != nil, stillPlans else { return [] }
            switch state {
            case let .off(wakeAt, kind):
                guard let wakeAt, kind != .motionStill else { return [] }
                // The planned wake is dropped; what remained of a bounded sleep is resumed on
                // `moving`. The receiver is off already: the off action says why it now stays
                // off (the log, the receiver's record and the picture show the sensor took over).
                memory.sleepLeft = Self.boundedSleepLeft(kind, bound: memory.sleepBound, until: wakeAt, now: now)
                let check = stillCheckAt(now: now)
                state = .off(wakeAt: check, wakeReason: .motionStill)
                memory.checkInterval = nil
                let reason = PowerReason(.motionStill, sleep: check.map { $0 - now })
                return [.gnssOff(reason)] + (check.map { [.wakeAt($0, reason)] } ?? [])
            case .on:
                guard memory.settled else { return [] }
                memory.sleepLeft = nil
                let check = stillCheckAt(now: now)
                return apply(.sleep(until: check, PowerReason(.motionStill, sleep: check.map { $0 - now })), now: now)
            case .idle:
                return []
            }
        case .moving:
            // A max-speed or kinematic sleep the still sensor interrupted goes on for what it
            // had left: the device starts from where it stood, at rest. It woke a time to first
            // fix ahead of its horizon; a stop longer than `hot_window` makes that wake warm,
            // which must come earlier by the difference.
            if case .off(_, .motionStill) = state, var left = memory.sleepLeft {
                left -= max(.zero, expectedTTFF(at: now + left) - (memory.sleepTTFF ?? configuration.ttffHot))
                // It stood, but may have drifted at `creep_speed` since the last usable fix:
                // that far nearer a boundary, the rest of the sleep is shorter by the time
                // `max_speed` takes to cover it.
                if let at = memory.clearanceAt, configuration.maxSpeedMetersPerSecond > 0 {
                    let drift = configuration.stillCreepMetersPerSecond * (now - at).secondsValue
                    left -= .milliseconds(Int64((drift / configuration.maxSpeedMetersPerSecond * 1000).rounded(.up)))
                }
                if left > expectedTTFF(at: now) {
                    memory.sleepLeft = nil
                    state = .off(wakeAt: now + left, wakeReason: .sleep)
                    return [.wakeAt(now + left, PowerReason(.motion, sleep: left))]
                }
            }
            return wakeIfKeptOff(by: [.motionStill, .stationary], PowerReason.Kind.motion, now: now)
        case nil:
            guard was == .still else { return [] }
            return wakeIfKeptOff(by: [.motionStill], .motionLost, now: now)
        }
    }

    /// Keeps the sensor's word, in every mode (`moving:` modes read it); false for a `still`
    /// GNSS has shown wrong (not believed until the sensor has said moving again).
    private mutating func keep(_ motion: Motion?, now: UTCTime) -> Bool {
        switch motion {
        case .still:
            guard !memory.assumptions.stillDistrusted else { return false }
            if memory.motion != .still {
                if movedUnfelt(now: now) {
                    distrustStill(true)
                    return false
                }
                standsFrom(now)
            }
        case .moving:
            distrustStill(false)
            memory.stillCheckSince = nil
        case nil:
            // Silence is no word of moving: a still GNSS showed wrong stays unbelieved.
            memory.stillCheckSince = nil
        }
        memory.motion = motion
        return true
    }

    /// A fix is wanted now (`reportLocation`): a receiver that is off, for whatever reason, is
    /// woken (`requested`) and the next fix is decided as any other (the policy then sleeps as
    /// the geometry allows). On already, or idle: nothing. Significant-change mode wakes GNSS
    /// the same way.
    public mutating func wakeRequested(now: UTCTime) -> [PowerAction] {
        guard case .off = state else { return [] }
        let ttff = expectedTTFF(at: now)
        state = .on(since: now, timeoutBase: now)
        memory.shortListen = ttff == configuration.ttffHot
        memory.checkInterval = nil
        return [.gnssOn(PowerReason(.requested, ttff: ttff))]
    }

    private mutating func wakeIfKeptOff(by kinds: Set<PowerReason.Kind>, _ kind: PowerReason.Kind, now: UTCTime) -> [PowerAction] {
        guard case let .off(_, reason) = state, kinds.contains(reason) else { return [] }
        let ttff = expectedTTFF(at: now)
        state = .on(since: now, timeoutBase: now)
        memory.shortListen = ttff == configuration.ttffHot
        memory.checkInterval = nil
        return [.gnssOn(PowerReason(kind, ttff: ttff))]
    }

    /// GNSS wins at the word too: the last usable GNSS fix came within `still_after` before a
    /// new still word, when the sensor felt no movement, and reported a speed beyond the drift
    /// it cannot feel and the report's error (`creep_speed + speed_error`). An accelerometer
    /// feels changes of velocity, not velocity: a train running smoothly, or pulling away from
    /// a station more gently than its vibration, feels still. The word is then not believed
    /// until the sensor has said moving again, as when a check-back's fix refutes it.
    private func movedUnfelt(now: UTCTime) -> Bool {
        guard let fix = memory.usableFix, now - fix.time < configuration.stillAfter,
              let speed = fix.speedMetersPerSecond, speed.isFinite else { return false }
        return speed > configuration.stillCreepMetersPerSecond + configuration.speedErrorMetersPerSecond
    }

    /// A new still word at `now`: where the device stands, and how far from a boundary. The
    /// sensor says still only after `still_after` without movement, so the device stopped by
    /// `now − still_after`. A usable GNSS fix since shows where it stands: the anchor GNSS is
    /// checked against (`checkStillAgainst`). An older one may lie far behind: the device may
    /// have gone on from it at `max_speed` (the bound the receiver went off on, if wider)
    /// until it stopped. Its clearance is then that much less, counted from then, and the
    /// first usable fix sets the anchor.
    private mutating func standsFrom(_ now: UTCTime) {
        memory.stillAnchor = nil
        guard let at = memory.clearanceAt else { return }
        let stopped = now - configuration.stillAfter
        guard at < stopped else {
            memory.stillAnchor = memory.usableFix?.coordinate
            return
        }
        let speed = max(configuration.maxSpeedMetersPerSecond, memory.offMaxSpeed ?? 0)
        memory.clearanceMeters -= speed * (stopped - at).secondsValue
        memory.clearanceAt = stopped
    }

    /// Whether the sensor's still plans the receiver: trusted outright (`creep_speed: 0`), or
    /// from a usable GNSS fix to count the drift from. Before the first such fix, still changes
    /// nothing (the fence states may not be known, and nothing bounds the drift).
    private var stillPlans: Bool {
        configuration.stillCreepMetersPerSecond <= 0 || memory.clearanceAt != nil
    }

    /// GNSS wins over a sensor that says still: a usable fix farther from where the device
    /// stood than the stationary radius and both accuracies means it moves.
    private mutating func checkStillAgainst(_ fix: Fix) {
        guard memory.motion == .still, fix.source == .gnss, fix.horizontalAccuracyMeters <= configuration.minAccuracyMeters else { return }
        guard let anchor = memory.stillAnchor else {
            memory.stillAnchor = fix.coordinate
            return
        }
        let moved = Geodesy.haversineMeters(anchor, fix.coordinate)
        if moved > configuration.stationaryRadiusMeters + fix.horizontalAccuracyMeters {
            memory.motion = .moving
            distrustStill(true)
        }
    }

    /// While the sensor says still: after a fix that leaves nothing to confirm, off until the
    /// still check-back, keeping what the usual `decision` would have slept (resumed on
    /// `moving`). Otherwise the usual decision (also for a check-back's fix too poor to tell:
    /// it listens on, up to its timeout).
    private mutating func whileStill(_ decision: Decision, _ fix: Fix, context: FixContext, now: UTCTime) -> Decision {
        memory.settled = !context.transitionPending
        guard memory.motion == .still, !context.transitionPending, stillPlans else { return decision }
        // A check-back whose fixes are too poor to tell listens on, up to its timeout.
        if case let .on(since, _) = state, memory.stillCheckSince == since {
            return .stayOn(PowerReason(.poorAccuracy, accuracyMeters: fix.horizontalAccuracyMeters))
        }
        if case let .sleep(until?, reason) = decision {
            memory.sleepLeft = Self.boundedSleepLeft(reason.kind, bound: reason.bound, until: until, now: now)
            memory.sleepTTFF = reason.ttff
        } else {
            memory.sleepLeft = nil
        }
        let check = stillCheckAt(now: now)
        return .sleep(until: check, PowerReason(.motionStill, distanceMeters: context.nearestBoundaryMeters,
                                                accuracyMeters: fix.horizontalAccuracyMeters, sleep: check.map { $0 - now }))
    }

    /// When a device the sensor says is still is looked at again. An accelerometer feels
    /// changes of velocity, not a steady drift (a boat dragging its anchor, a ship swinging
    /// round it), so the device may have moved at `creep_speed` since the last usable GNSS fix:
    /// a boundary is within reach `clearance / creep_speed` after it. The first fix must come by
    /// then, plus, with `max_latency`, what the budget gives a change that starts then
    /// (`max_latency` less the confirming fixes), but no more than an excursion (`2h` there and
    /// back) takes at that speed; the wake is a time to first fix before, and not sooner than
    /// `min_sleep` from now. nil: no check-back (`creep_speed: 0`, no usable fix yet, no
    /// boundary within a year's drift).
    private func stillCheckAt(now: UTCTime) -> UTCTime? {
        let creep = configuration.stillCreepMetersPerSecond
        guard creep > 0, let at = memory.clearanceAt else { return nil }
        var seconds = max(0, memory.clearanceMeters) / creep
        if configuration.maxLatency > .zero {
            let budget = (configuration.maxLatency - configuration.confirmSpan).secondsValue
            seconds += max(0, min(budget, 2 * configuration.hysteresisMeters / creep))
        }
        guard seconds < 366 * 86_400 else { return nil }
        let fixBy = at + .milliseconds(Int64((seconds * 1000).rounded(.down)))
        return max(fixBy - expectedTTFF(at: fixBy), now + configuration.minSleep)
    }

    /// What remains at `now` of a sleep the max-speed or kinematic bound planned (not a
    /// stationary check, a retry or a still sensor's): the device used none of it while it
    /// stood still, and from rest it reaches no farther in the rest of it than it could have
    /// gone on. A sleep on the heading bound or the latency budget assumed the course or the
    /// path of the fix, which a stop undoes (the device may set off any way), and a dwell's is
    /// a deadline: on `moving` the receiver is woken instead.
    private static func boundedSleepLeft(_ kind: PowerReason.Kind, bound: PowerReason.SleepBound?, until: UTCTime, now: UTCTime) -> Duration? {
        guard kind == .sleep, bound == .maxSpeed || bound == .kinematic, until > now else { return nil }
        return until - now
    }

    /// The time in `nextDeadline` has come: a scheduled wake or a fix timeout.
    public mutating func deadlineReached(now: UTCTime) -> [PowerAction] {
        switch state {
        case .idle:
            return []
        case let .off(wakeAt, wakeReason):
            guard let wakeAt, wakeAt <= now else { return [] }
            let kind: PowerReason.Kind = switch wakeReason {
            case .stationary: .stationaryCheck
            case .fixTimeout: .retry
            case .motionStill: .stillCheck
            default: .scheduledWake
            }
            memory.stillCheckSince = kind == .stillCheck ? now : nil
            let ttff = expectedTTFF(at: now)
            state = .on(since: now, timeoutBase: now)
            memory.shortListen = ttff == configuration.ttffHot
            return [.gnssOn(PowerReason(kind, ttff: ttff))]
        case let .on(_, timeoutBase):
            guard timeoutBase + currentFixTimeout <= now else { return [] }
            return fixTimedOut(now: now)
        }
    }

    /// No fix came within `fix_timeout` while the receiver was on.
    ///
    /// Regions and continuous: switch off and retry after `min_sleep`, doubling on every further
    /// timeout without a fix in between, as long as no boundary can be reached (`safeUntil`), up
    /// to `max_sleep`; after that, `outage: retry` (regions' default, and before any fix) keeps
    /// retrying, capped by `maxFixTimeoutRetry`, and `outage: wait` (continuous' default) keeps
    /// the receiver on, as a receiver in a tunnel would. Continuous: a stationary check that got
    /// no fix keeps the check schedule (nothing says the device moved). Significant-change: back
    /// to coarse only. Always-on: keep waiting.
    public mutating func fixTimedOut(now: UTCTime) -> [PowerAction] {
        guard case let .on(since, _) = state else { return [] }
        if memory.stillCheckSince == since, memory.motion == .still, configuration.mode != .significantChange {
            // A check-back that got no usable fix: the device stands where no sky reaches (a
            // garage). The next one waits as long again as has passed since the last usable
            // fix (at least `min_sleep`).
            memory.stillCheckSince = nil
            let wait = max(configuration.minSleep, memory.usableFix.map { now - $0.time } ?? .zero)
            return apply(.sleep(until: now + wait, PowerReason(.motionStill, sleep: wait)), now: now)
        }
        if configuration.mode == .continuous, !configuration.alwaysOn, memory.checkInterval != nil {
            let interval = nextCheckInterval(now: now)
            return apply(.sleep(until: now + interval, PowerReason(.stationary, sleep: interval)), now: now)
        }
        // While no boundary can be reached yet (from the last fix slept on), the retries may
        // back off up to that time (and `max_sleep`): nothing can be missed before it.
        let slack = memory.safeUntil.map { $0 - configuration.ttffHot - now } ?? .zero
        let waits = configuration.outage == .wait && configuration.mode != .significantChange && memory.safeUntil != nil
        if configuration.alwaysOn || (waits && slack < configuration.minSleep) {
            state = .on(since: since, timeoutBase: now)    // keep waiting
            return []
        }
        var cap = max(configuration.minSleep, min(configuration.maxSleep, configuration.maxFixTimeoutRetry))
        // Whether the listen that just ended was a probe: before the two updates below, which
        // would make it one.
        let probed = probing
        // A probe shortened by the measured hot starts wakes the receiver as much sooner as it
        // listened less: a burst of sky of at least 13.5 s is caught at least as often as with
        // a full probe, and the sky's return is seen sooner (docs/power.md, "Fix timeout and
        // listens").
        if probed, let retryListen = configuration.retryFixTimeout {
            let saved = listen(probe: configuration.probeListen, retry: retryListen) - listen(probe: probeListen, retry: retryListen)
            cap = max(configuration.minSleep, cap - saved)
        }
        if !probed { memory.lastLongListenAt = since }
        if memory.timeoutRetry != nil { memory.failedRetries += 1 }
        var retry = memory.timeoutRetry.map { $0 * 2 } ?? configuration.minSleep
        retry = waits || slack > cap ? min(retry, configuration.maxSleep, slack) : min(retry, cap)
        memory.timeoutRetry = retry
        let reason = PowerReason(.fixTimeout, sleep: retry)
        switchedOff(at: now)
        switch configuration.mode {
        case .significantChange:
            state = .off(wakeAt: nil, wakeReason: .fixTimeout)
            return [.gnssOff(reason)]
        case .regions, .continuous:
            let wake = now + retry
            state = .off(wakeAt: wake, wakeReason: .fixTimeout)
            return [.gnssOff(reason), .wakeAt(wake, reason)]
        }
    }

    /// When the shell must call `deadlineReached(now:)` next; nil when nothing is scheduled.
    public var nextDeadline: UTCTime? {
        switch state {
        case .idle: nil
        case let .off(wakeAt, _): wakeAt
        case let .on(_, timeoutBase):
            configuration.alwaysOn ? nil : timeoutBase + currentFixTimeout
        }
    }

    /// How long to wait for a fix now: `retryFixTimeout` (when shorter than `fix_timeout`) while
    /// retrying after a fix timeout (no fix since), after a hot start, and after a fix that left
    /// nothing undecided; otherwise `fix_timeout` (a warm start, a pending transition, a side
    /// still uncertain); `probeListen` while `probing`. A retry that starts warm
    /// (`acquiringWarm`) listens as long beyond `ttff_warm` as a short listen does beyond
    /// `ttff_hot`.
    private var currentFixTimeout: Duration {
        guard let retry = configuration.retryFixTimeout else { return configuration.fixTimeout }
        if probing { return listen(probe: probeListen, retry: retry) }
        guard memory.timeoutRetry != nil || memory.shortListen else { return configuration.fixTimeout }
        if case let .on(since, _) = state, acquiringWarm(since: since) {
            return min(configuration.fixTimeout, configuration.ttffWarm + max(.zero, retry - configuration.ttffHot))
        }
        return min(retry, configuration.fixTimeout)
    }

    /// How long a probe listens: one tracking interval past the slowest of the hot starts
    /// measured (`learnTTFF`'s last 20, once 10 are known; never less than `ttff_hot` in
    /// effect), at most `PowerConfiguration.probeListen` (`2 × ttff_hot + 1 s`), which it
    /// listens before. A next hot start of the same receiver is slower than the slowest of 20
    /// with probability 1/21 (1/11 with 10), and then still gets its extra second: a
    /// probe is as long as this receiver's hot starts under the recent sky need, not twice the
    /// planned one. A probe too short finds the sky one retry later. The sleep after a probe is
    /// shortened by as much as the probe (`fixTimedOut`).
    private var probeListen: Duration {
        let cap = configuration.probeListen
        guard memory.ttffSamples.count >= Self.ttffMinimumSamples, let slowest = memory.ttffSamples.max() else { return cap }
        return min(cap, max(slowest, configuration.ttffHot) + configuration.trackingFixInterval)
    }

    /// How long a probe of `probe` listens: no longer than a short listen (`retry`) or
    /// `fix_timeout`.
    private func listen(probe: Duration, retry: Duration) -> Duration {
        min(retry, configuration.fixTimeout, probe)
    }

    /// Whether the current listen only probes for the sky (`probeListen`, sized for a hot
    /// start): with a latency budget, once a retry's listen has also got no fix. A receiver
    /// the probe is too short for (a degraded sky, a slower unit than planned, ephemerides
    /// gone stale in an outage longer than `hot_window`) would never be caught by probes
    /// alone, so once `max_sleep` has passed since the last longer listen, a retry listens as
    /// its start needs again (`currentFixTimeout`: short when hot, longer when warm).
    private var probing: Bool {
        guard memory.failedRetries > 0, configuration.maxLatency > .zero, case let .on(since, _) = state else { return false }
        guard let long = memory.lastLongListenAt else { return true }
        return since - long < configuration.maxSleep
    }

    /// Whether the receiver, on since `since`, is acquiring from a warm start: no fix since,
    /// and none within `hot_window` before (none at all since the start: nothing says its
    /// ephemerides are current). Ephemerides age from the last fix, not from a switch-off: a
    /// receiver that retried through an outage longer than `hot_window` starts warm.
    private func acquiringWarm(since: UTCTime) -> Bool {
        guard let last = memory.lastGnssFixAt else { return true }
        return last < since && since - last >= configuration.hotWindow
    }

    /// Whether the policy currently wants the GNSS receiver on.
    public var isGNSSOn: Bool {
        if case .on = state { return true }
        return false
    }

    /// Whether the policy currently wants the coarse source on.
    public var isCoarseOn: Bool { memory.coarseOn }

    /// When the receiver was switched on (nil while it is off).
    public var onSince: UTCTime? {
        if case let .on(since, _) = state { return since }
        return nil
    }

    /// What the motion sensor says, as the policy believes it (nil: no sensor, or silent).
    public var motion: Motion? { memory.assumptions.stillDistrusted ? nil : memory.motion }

    /// GNSS has shown the sensor's still wrong: its still is not believed until it has said
    /// moving again.
    public var stillDistrusted: Bool { memory.assumptions.stillDistrusted }

    /// GNSS has shown the sensor's `still` wrong (true), or the sensor said moving (false):
    /// part of the watch's state, stored with the next commit and kept across restarts.
    private mutating func distrustStill(_ distrusted: Bool) {
        guard memory.assumptions.stillDistrusted != distrusted else { return }
        memory.assumptions.stillDistrusted = distrusted
        memory.assumptions.stillDistrustedSensor = distrusted ? configuration.motionSensor : nil
        memory.assumptionsChanged = true
    }

    /// Whether any fix has passed the screen yet.
    public var hasTakenFix: Bool { memory.lastAccepted != nil }

    /// The last fix that passed the screen.
    public var lastFix: Fix? { memory.lastAccepted }

    /// The time to first fix to expect when switching on at `now`: hot within `hot_window` of
    /// the last GNSS fix, else warm (also before the first fix).
    public func expectedTTFF(at now: UTCTime) -> Duration {
        guard let last = memory.lastGnssFixAt, now - last < configuration.hotWindow else { return configuration.ttffWarm }
        return configuration.ttffHot
    }

    // MARK: - Decisions

    private enum Decision {
        case stayOn(PowerReason)
        case sleep(until: UTCTime?, PowerReason)
    }

    /// The regions decision after a GNSS fix: the rules without a latency budget, then, with
    /// `max_latency`, a later wake where the budget allows one (`latencyHorizon`): never an
    /// earlier one, so the budget only ever saves.
    private func regionsDecision(_ fix: Fix, context: FixContext, now: UTCTime) -> Decision {
        // Speed in a zone needs fixes while the device could pass the limit (no latency budget
        // sleeps through it).
        if context.speedWatch, fix.horizontalAccuracyMeters <= configuration.minAccuracyMeters {
            return .stayOn(PowerReason(.speedLimit, distanceMeters: context.boundaryDistanceMeters,
                                       accuracyMeters: fix.horizontalAccuracyMeters, speedMetersPerSecond: fix.speedMetersPerSecond))
        }
        let reach = reachability(for: fix)
        let declared = declaredReachability(for: fix)
        let base = boundedRegionsDecision(fix, context: context, reach: reach, declared: declared, now: now)
        // Fixes that settle the engine come sooner by staying on than a wake's first fix.
        if case .stayOn = base, let left = context.fixesToSettle,
           configuration.trackingFixInterval * left <= configuration.ttffHot { return base }
        // A side the engine has not established yet: a crossing from it would be confirmed
        // silently (under `initial: silent`), an event always-on, having established the side
        // first, reports. The budget sleeps only where the engine knows where the device is.
        guard fix.horizontalAccuracyMeters <= configuration.minAccuracyMeters, !context.sideUnknown,
              let horizon = latencyHorizon(fix, context: context, reach: reach, declared: declared) else { return base }
        let budget = Duration.milliseconds(Int64((horizon.seconds * 1000).rounded(.down)))
        var planned: UTCTime?
        switch base {
        case .stayOn: planned = nil
        case let .sleep(until, reason):
            guard let until, reason.kind == .sleep else { return base }
            // A sleep clamped up to `min_sleep` stands only if the budget allows it too.
            let clampedPastBudget = reason.bound == .minSleep && until + (reason.ttff ?? configuration.ttffHot) > fix.time + budget
            planned = clampedPastBudget ? nil : until
        }
        let next = min(budget, configuration.maxSleep + configuration.ttffHot)
        var ttff = configuration.ttffHot
        var wake = fix.time + next - ttff
        // Hot within `hot_window` of this fix, the last GNSS fix when the receiver wakes.
        if wake - fix.time >= configuration.hotWindow {
            ttff = configuration.ttffWarm
            wake = fix.time + next - ttff
        }
        var bound = horizon.bound
        if let dwell = context.earliestDwellDeadline, dwell - ttff < wake {
            wake = dwell - ttff
            bound = .dwell
        }
        // A switch-off shorter than the break-even (`min_off`) costs more than it saves.
        guard wake - now >= max(configuration.ttffHot, configuration.minOff), planned.map({ wake > $0 }) ?? true else {
            // The clamp the budget refused, with no budget sleep instead: stay on.
            if case let .sleep(_, reason) = base, planned == nil {
                return stationaryOr(.stayOn(Self.staying(.boundaryNear, reason)), now: now)
            }
            return base
        }
        // Where the rules without a budget stay on, the sleep is a `band-sleep`.
        let kind: PowerReason.Kind = planned == nil ? .bandSleep : .sleep
        return .sleep(until: wake, PowerReason(
            kind, bound: bound, distanceMeters: context.boundaryDistanceMeters, accuracyMeters: fix.horizontalAccuracyMeters,
            speedMetersPerSecond: fix.speedMetersPerSecond, sleep: wake - now, ttff: ttff
        ))
    }

    /// A sleep's reason turned into one for staying on: its distance, accuracy and speed kept.
    private static func staying(_ kind: PowerReason.Kind, _ reason: PowerReason) -> PowerReason {
        var near = reason
        near.kind = kind
        near.bound = nil
        near.sleep = nil
        near.ttff = nil
        return near
    }

    /// `declared`: `declaredReachability(for: fix)`, whose sleep is taken where longer.
    private func boundedRegionsDecision(_ fix: Fix, context: FixContext, reach: ReachabilityBound, declared: ReachabilityBound?,
                                        now: UTCTime) -> Decision {
        let distance = context.boundaryDistanceMeters
        let accuracy = fix.horizontalAccuracyMeters
        if accuracy > configuration.minAccuracyMeters {
            return stationaryOr(.stayOn(PowerReason(.poorAccuracy, distanceMeters: distance, accuracyMeters: accuracy)), now: now)
        }
        if context.transitionPending {
            return .stayOn(PowerReason(.confirming, distanceMeters: distance, accuracyMeters: accuracy))
        }
        if !context.allCertain {
            return stationaryOr(.stayOn(PowerReason(.uncertain, distanceMeters: distance, accuracyMeters: accuracy)), now: now)
        }
        // Plan for a hot start; a sleep reaching `hot_window` would end in a warm one, so then
        // either plan for the warm TTFF or wake just before the hot window closes.
        let hot = configuration.ttffHot, warm = configuration.ttffWarm
        let limit = (configuration.maxSleep + max(hot, warm)).secondsValue
        var horizon = reach.horizon(
            distanceMeters: distance,
            reserveMeters: accuracy + configuration.wakeMarginMeters,
            speedMetersPerSecond: fix.speedMetersPerSecond,
            courseDegrees: fix.courseDegrees,
            courseClearance: context.courseClearance,
            limitSeconds: limit
        )
        if let declared {
            let other = declared.horizon(distanceMeters: distance, reserveMeters: accuracy + baseWakeMarginMeters,
                                         speedMetersPerSecond: fix.speedMetersPerSecond, courseDegrees: fix.courseDegrees,
                                         courseClearance: context.courseClearance, limitSeconds: limit)
            if other.seconds > horizon.seconds { horizon = other }
        }
        let horizonDuration = Duration.milliseconds(Int64((horizon.seconds * 1000).rounded(.down)))
        var bound = horizon.bound
        var ttff = hot
        var sleep = horizonDuration - hot
        if sleep >= configuration.hotWindow {
            if horizonDuration - warm >= configuration.hotWindow {
                sleep = horizonDuration - warm
                ttff = warm
            } else {
                sleep = configuration.hotWindow - .milliseconds(1)
            }
        }
        if sleep >= configuration.maxSleep {
            sleep = configuration.maxSleep
            bound = .maxSleep
        }
        var wake = fix.time + sleep
        if let dwell = context.earliestDwellDeadline, dwell - ttff < wake {
            wake = dwell - ttff
            bound = .dwell
        }
        let reason = PowerReason(
            .sleep, bound: bound, distanceMeters: distance, accuracyMeters: accuracy,
            speedMetersPerSecond: fix.speedMetersPerSecond, sleep: wake - now, ttff: ttff
        )
        if wake - now < configuration.minSleep, bound != .dwell, configuration.shortSleep == .clampToMinSleep,
           horizon.seconds > 0
        {
            wake = now + configuration.minSleep
            let clamped = PowerReason(
                .sleep, bound: .minSleep, distanceMeters: distance, accuracyMeters: accuracy,
                speedMetersPerSecond: fix.speedMetersPerSecond, sleep: configuration.minSleep, ttff: ttff
            )
            return .sleep(until: wake, clamped)
        }
        if wake - now < configuration.minSleep, bound != .dwell, configuration.shortSleep == .exact,
           wake - now >= configuration.ttffHot
        {
            return .sleep(until: wake, reason)
        }
        if wake - now < configuration.minSleep {
            return stationaryOr(.stayOn(Self.staying(bound == .dwell ? .dwellDue : .boundaryNear, reason)), now: now)
        }
        return .sleep(until: wake, reason)
    }

    /// `max_latency` (docs/power.md, "Sleeping within a latency budget"): how long after `fix`
    /// the next fix may come such that
    ///
    /// - (a) no full excursion that an always-on engine would report — a change confirmed and
    ///   then its reverse — is completed before it. Confirming a side takes a fix at least `h`
    ///   (the hysteresis) past the boundary beyond its accuracy, so the true position is then at
    ///   least `h` past it: an excursion needs a path of `2h` between its two confirmations,
    ///   and, from a side the engine is certain of (the true position at least `d − a` from
    ///   every boundary), `d − a + h` before the first. The path is bounded by the max-speed and
    ///   kinematic bounds (both bound the speed); the heading bound gives when the boundary can
    ///   first be reached, after which `3h` remain at the speed reachable by then;
    /// - (b) a change that starts now (for a certain side: once the boundary can be reached),
    ///   or the one pending, is confirmed within `max_latency`: the next fix and the
    ///   `confirm − 1` after it (`trackingFixInterval` apart), held for `confirm.time`
    ///   (`PowerConfiguration.confirmSpan`), come in time.
    ///
    /// `declared`: `declaredReachability(for: fix)`, whose horizon is taken where longer. nil
    /// with `max_latency: 0`.
    private func latencyHorizon(_ fix: Fix, context: FixContext, reach: ReachabilityBound, declared: ReachabilityBound?) -> ReachabilityBound.Horizon? {
        guard configuration.maxLatency > .zero else { return nil }
        // With a sensed activity, a switch to a faster one unnoticed until the wake covers up
        // to the switch reserve more than the sensed bounds allow: every path is that much
        // shorter. The declared bounds hold as well, without it: the longer of the two.
        let sensed = latencyHorizon(fix, context: context, reach: reach, reserve: switchReserveMeters)
        guard let declared else { return sensed }
        let other = latencyHorizon(fix, context: context, reach: declared, reserve: 0)
        return other.seconds > sensed.seconds ? other : sensed
    }

    /// `latencyHorizon` for one bound, every path shortened by `r`.
    private func latencyHorizon(_ fix: Fix, context: FixContext, reach: ReachabilityBound, reserve r: Double) -> ReachabilityBound.Horizon {
        let h = configuration.hysteresisMeters
        let a = fix.horizontalAccuracyMeters
        let d = context.boundaryDistanceMeters
        let v = fix.speedMetersPerSecond
        let limit = (configuration.maxSleep + max(configuration.ttffHot, configuration.ttffWarm)).secondsValue
        let excursion: Double
        let changeStarts: Double
        if context.allCertain, !context.transitionPending {
            let path = reach.horizon(distanceMeters: d + 3 * h, reserveMeters: a + r, speedMetersPerSecond: v,
                                     courseDegrees: nil, courseClearance: nil, limitSeconds: limit).seconds
            let crossing = reach.horizon(distanceMeters: d, reserveMeters: a + r, speedMetersPerSecond: v,
                                         courseDegrees: fix.courseDegrees, courseClearance: context.courseClearance,
                                         limitSeconds: limit).seconds
            excursion = max(path, crossing + remainingPathSeconds(3 * h, after: crossing, speed: v, reach: reach))
            changeStarts = crossing
        } else {
            excursion = reach.horizon(distanceMeters: 2 * h, reserveMeters: r, speedMetersPerSecond: v,
                                      courseDegrees: nil, courseClearance: nil, limitSeconds: limit).seconds
            changeStarts = 0
        }
        let interval = configuration.trackingFixInterval.secondsValue
        let latency: Double
        if context.transitionPending, let since = context.pendingSince {
            let left = max(1, configuration.confirmFixes - context.pendingCount)
            latency = (since - fix.time).secondsValue + configuration.maxLatency.secondsValue - Double(left - 1) * interval
        } else {
            latency = changeStarts + configuration.maxLatency.secondsValue - configuration.confirmSpan.secondsValue
        }
        // Strictly before the excursion could be complete.
        let beforeExcursion = excursion - 0.001
        if latency < beforeExcursion { return ReachabilityBound.Horizon(seconds: max(0, latency), bound: .latency) }
        return ReachabilityBound.Horizon(seconds: max(0, beforeExcursion), bound: .excursion)
    }

    /// The least time to cover `meters` more after `start` seconds, at the speed the bounds
    /// allow by then: at most `max_speed`, and with a reported speed `v` at most
    /// `v + speed_error + A·t` at time `t`.
    private func remainingPathSeconds(_ meters: Double, after start: Double, speed: Double?, reach: ReachabilityBound) -> Double {
        // As `ReachabilityBound.horizon`: never below what the fix reports.
        let vmax = max(reach.maxSpeedMetersPerSecond, speed.map { $0 + reach.speedErrorMetersPerSecond } ?? 0)
        guard vmax > 0 else { return .infinity }
        let atMaxSpeed = meters / vmax
        guard let v = speed, v.isFinite, v >= 0 else { return atMaxSpeed }
        let accel = reach.maxAccelerationMetersPerSecondSquared
        let b = v + reach.speedErrorMetersPerSecond + accel * start
        // b·x + A·x²/2 = meters
        let kinematic = accel > 0 ? (-b + (b * b + 2 * accel * meters).squareRoot()) / accel : (b > 0 ? meters / b : .infinity)
        return max(atMaxSpeed, kinematic)
    }

    /// `fix` without its reported speed (and course) when the previous fix decided on shows the
    /// device moving faster than the report allows (a glitch of the receiver's velocity, or a
    /// recording's): the plan then rests on the max-speed bound alone, as for a fix that reports
    /// none, at no less than the speed the device is known to move. From the previous fix `p`,
    /// `Δ` earlier, no device short of a collision slows faster than
    /// `PowerConfiguration.maxDecelerationMetersPerSecondSquared` (`D`), so now it moves at
    /// least `v_p − speed_error − D·Δ`, and at least `(distance − both accuracies)/Δ − D·Δ/2`
    /// (the mean speed between the two, less what braking took off since); a report below that
    /// by more than its error is contradicted. Both bounds fade within seconds (`D·Δ` outgrows
    /// any speed on foot or wheels), so only fixes a tracking receiver gives in a row are
    /// compared; where `D` fails (a crash) the plan is only more cautious than it had to be.
    func withoutContradictedSpeed(_ fix: Fix) -> Fix {
        guard fix.source == .gnss, let reported = fix.speedMetersPerSecond, reported.isFinite,
              let previous = memory.previousDecided, previous.source == .gnss else { return fix }
        let dt = (fix.time - previous.time).secondsValue
        guard dt > 0 else { return fix }
        let braking = configuration.maxDecelerationMetersPerSecondSquared * dt
        var known = Self.separationMeters(previous, fix) / dt - braking / 2
        let error = configuration.speedErrorMetersPerSecond
        if let vp = previous.speedMetersPerSecond, vp.isFinite { known = max(known, vp - error - braking) }
        guard known.isFinite, known > reported + error else { return fix }
        // Without a speed the plan takes `max_speed`; a device known to move faster than that
        // is planned at what it is known to move (the report, had it been higher, would have
        // been planned at its own speed plus the error: never a longer sleep than that).
        var planned = fix
        planned.speedMetersPerSecond = known >= configuration.maxSpeedMetersPerSecond ? known - error : nil
        planned.courseDegrees = nil
        return planned
    }

    /// The reachability bound for a decision on `fix`: the configured one, with the course
    /// error of a trusted course (`PowerConfiguration.trustedCourseErrorDegrees`) when the fix
    /// and the previous one decided on agree (`courseTrusted`; with `max_latency` only, so that
    /// `max_latency: 0` keeps the rules without it).
    private func reachability(for fix: Fix) -> ReachabilityBound {
        var bound = configuration.reachability
        if courseTrusted(fix) { bound.courseErrorDegrees = min(bound.courseErrorDegrees, configuration.trustedCourseErrorDegrees) }
        return bound
    }

    /// With a sensed activity, the reachability bound of the declared bounds (widened as the
    /// sensed ones are), without the switch reserve, when they cover what the reserve assumes
    /// a device can switch to (`PowerConfiguration.switchTarget`: a vehicle): they hold then
    /// whatever the device switches to, so a sleep they allow is safe too, and a sensed walker
    /// near a boundary is never planned shorter than the declared vehicle would be (the
    /// reserve assumes a switch at the walker's top speed; the declared bounds start from the
    /// reported one). nil without a sensed activity, or with declared bounds narrower than
    /// the switch target (declared foot: a bus boarded is no foot) or than the sensed ones.
    private func declaredReachability(for fix: Fix) -> ReachabilityBound? {
        guard let sensed = memory.sensed.map({ configuration.bounds(for: $0) }) else { return nil }
        let declared = widened(configuration.plannedBounds)
        let target = configuration.switchTarget
        guard declared.maxSpeedMetersPerSecond >= max(sensed.maxSpeedMetersPerSecond, target.maxSpeedMetersPerSecond),
              declared.maxAccelerationMetersPerSecondSquared >= max(sensed.maxAccelerationMetersPerSecondSquared, target.maxAccelerationMetersPerSecondSquared)
        else { return nil }
        var bound = reachability(for: fix)
        bound.maxSpeedMetersPerSecond = declared.maxSpeedMetersPerSecond
        bound.maxAccelerationMetersPerSecondSquared = declared.maxAccelerationMetersPerSecondSquared
        return bound
    }

    /// A fix's course is trusted when it and the previous fix decided on, at most
    /// `trustedCourseWindow` apart, both move at least `trustedCourseMinSpeed`, report courses
    /// within `trustedCourseAgreementDegrees` of each other and of the bearing from the one
    /// position to the other (the displacement at least 10 × their summed accuracies), and
    /// speeds that agree with the mean speed between them within the speed error plus the
    /// accuracies' share: a device on a straight road at a steady speed.
    private func courseTrusted(_ fix: Fix) -> Bool {
        guard configuration.maxLatency > .zero, let previous = memory.previousDecided, previous.source == .gnss,
              let v1 = previous.speedMetersPerSecond, let v2 = fix.speedMetersPerSecond,
              let c1 = previous.courseDegrees, let c2 = fix.courseDegrees,
              min(v1, v2) >= configuration.trustedCourseMinSpeedMetersPerSecond else { return false }
        let dt = (fix.time - previous.time).secondsValue
        guard dt > 0, dt <= configuration.trustedCourseWindow.secondsValue else { return false }
        let accuracies = previous.horizontalAccuracyMeters + fix.horizontalAccuracyMeters
        let distance = Geodesy.haversineMeters(previous.coordinate, fix.coordinate)
        guard distance >= 10 * accuracies else { return false }
        let bearing = Geodesy.initialBearingDegrees(from: previous.coordinate, to: fix.coordinate)
        let agree = configuration.trustedCourseAgreementDegrees
        guard Self.angleBetween(c1, c2) <= agree, Self.angleBetween(c1, bearing) <= agree,
              Self.angleBetween(c2, bearing) <= agree else { return false }
        let mean = distance / dt
        let slack = configuration.speedErrorMetersPerSecond + accuracies / dt
        return abs(mean - v1) <= slack && abs(mean - v2) <= slack
    }

    private static func angleBetween(_ a: Double, _ b: Double) -> Double {
        let d = abs(Geodesy.normalizedBearing(a - b))
        return min(d, 360 - d)
    }

    /// How long after `fix` no boundary can be reached, by the max-speed and kinematic bounds,
    /// at the best known distance (beyond the search radius too), up to `hot_window` + `max_sleep`.
    private func outageHorizon(_ fix: Fix, context: FixContext) -> Duration {
        let limit = (configuration.hotWindow + configuration.maxSleep).secondsValue
        let h = configuration.reachability.horizon(
            distanceMeters: context.outageDistanceMeters,
            reserveMeters: fix.horizontalAccuracyMeters + configuration.wakeMarginMeters,
            speedMetersPerSecond: fix.speedMetersPerSecond, courseDegrees: nil, courseClearance: nil,
            limitSeconds: limit
        )
        return .milliseconds(Int64((h.seconds * 1000).rounded(.down)))
    }

    private mutating func continuousDecision(_ fix: Fix, now: UTCTime) -> Decision {
        stationaryOr(.stayOn(PowerReason(.moving, accuracyMeters: fix.horizontalAccuracyMeters,
                                         speedMetersPerSecond: fix.speedMetersPerSecond)), now: now)
    }

    /// Stationary for `stationary.timeout`: sleep for the check interval instead of staying on.
    private func stationaryOr(_ decision: Decision, now: UTCTime) -> Decision {
        guard let since = memory.anchorSince, now - since >= configuration.stationaryTimeout else { return decision }
        let interval = nextCheckInterval(now: now)
        return .sleep(until: now + interval, PowerReason(.stationary, sleep: interval))
    }

    /// `min_sleep`, then doubling up to `max_sleep`. Continuous also wakes `ttff_hot` before a
    /// boundary could be reached from the last usable fix (`safeUntil`), but not sooner than
    /// `min_sleep`: a device that drives off after a stop is checked on before it can reach a fence.
    private func nextCheckInterval(now: UTCTime) -> Duration {
        var interval = memory.checkInterval.map { min($0 * 2, configuration.maxSleep) } ?? configuration.minSleep
        if configuration.mode == .continuous, let safe = memory.safeUntil {
            interval = max(configuration.minSleep, min(interval, safe - configuration.ttffHot - now))
        }
        // Regions checks happen where a boundary may be within reach: a change that starts
        // now is still confirmed within `max_latency`.
        if configuration.mode == .regions, configuration.maxLatency > .zero {
            let budget = configuration.maxLatency - configuration.ttffHot - configuration.confirmSpan
            interval = max(configuration.minSleep, min(interval, budget))
        }
        return interval
    }

    /// Regions mode, a coarse fix while GNSS sleeps (docs/power.md, "Coarse fixes in regions
    /// mode"): when its accuracy circle (plus `wake_margin`) reaches a boundary, or a fence is
    /// uncertain from it, GNSS is woken now (unless a wake is due within a time to first fix);
    /// when the circle is far from every boundary, the wake moves to when a boundary could
    /// first be reached from anywhere in the circle at `max_speed` (less the time to first
    /// fix then: warm once the last GNSS fix is `hot_window` old), if that
    /// is later than the wake planned, capped at `max_sleep` from now. While GNSS is on, GNSS
    /// decides and coarse fixes change nothing.
    private mutating func coarseInRegions(_ fix: Fix, context: FixContext, now: UTCTime) -> [PowerAction] {
        guard fix.source == .coarse, case let .off(wakeAt, wakeReason) = state else { return [] }
        let reach = fix.horizontalAccuracyMeters + configuration.wakeMarginMeters
        let ttff = expectedTTFF(at: now)
        let nearest = context.nearestBoundaryMeters
        if !context.allCertain || context.transitionPending || (nearest.map { $0 <= reach } ?? false) {
            if let wakeAt, wakeAt <= now + ttff { return [] }
            state = .on(since: now, timeoutBase: now)
            memory.shortListen = false
            return [.gnssOn(PowerReason(.coarseNearFence, distanceMeters: nearest, accuracyMeters: fix.horizontalAccuracyMeters, ttff: ttff))]
        }
        guard let wakeAt else { return [] }
        // Beyond the index's search radius nothing can be reached within max_sleep.
        let clearance = (nearest ?? context.searchRadiusMeters) - reach
        // Clamped to [0, ~31 years] before the conversion: a circle far wider than the search
        // radius (a finite but absurd accuracy) reaches everything at once.
        let seconds = min(max(clearance / configuration.maxSpeedMetersPerSecond, 0), 1e9)
        let travel = Duration.milliseconds(Int64((seconds * 1000).rounded(.down)))
        // The wake's first fix is due when a boundary can first be reached: a time to first
        // fix before it, warm when the last GNSS fix will then be `hot_window` old (coarse
        // fixes may put GNSS off for hours).
        let reachable = fix.time + travel
        let until = min(reachable - expectedTTFF(at: reachable - configuration.ttffHot), now + configuration.maxSleep)
        guard until > wakeAt else { return [] }
        state = .off(wakeAt: until, wakeReason: wakeReason)
        return [.wakeAt(until, PowerReason(.coarseFar, distanceMeters: nearest, accuracyMeters: fix.horizontalAccuracyMeters, sleep: until - now))]
    }

    private mutating func significantChange(_ fix: Fix, context: FixContext, now: UTCTime) -> [PowerAction] {
        switch fix.source {
        case .coarse:
            guard configuration.gnssConfigured, !isGNSSOn else { return [] }
            let reach = fix.horizontalAccuracyMeters + configuration.wakeMarginMeters
            guard let nearest = context.nearestBoundaryMeters, nearest <= reach || !context.allCertain else { return [] }
            let ttff = expectedTTFF(at: now)
            state = .on(since: now, timeoutBase: now)
            memory.shortListen = false
            return [.gnssOn(PowerReason(.coarseNearFence, distanceMeters: nearest, accuracyMeters: fix.horizontalAccuracyMeters, ttff: ttff))]
        case .gnss:
            guard isGNSSOn else { return [] }
            if fix.horizontalAccuracyMeters <= configuration.minAccuracyMeters, context.allCertain, !context.transitionPending {
                switchedOff(at: now)
                state = .off(wakeAt: nil, wakeReason: .certain)
                return [.gnssOff(PowerReason(.certain, distanceMeters: context.nearestBoundaryMeters, accuracyMeters: fix.horizontalAccuracyMeters))]
            }
            return []
        }
    }

    private mutating func apply(_ decision: Decision, now: UTCTime) -> [PowerAction] {
        switch decision {
        case let .stayOn(reason), let .sleep(_, reason):
            lastDecision = reason
        }
        switch decision {
        case let .stayOn(reason):
            if reason.kind != .stationary { memory.checkInterval = nil }
            if case .on = state { return [] }
            state = .on(since: now, timeoutBase: now)
            return [.gnssOn(reason)]
        case let .sleep(until, reason):
            if reason.kind == .stationary {
                memory.checkInterval = reason.sleep
            } else {
                memory.checkInterval = nil
            }
            var actions: [PowerAction] = []
            if case .on = state {
                switchedOff(at: now)
                actions.append(.gnssOff(reason))
            }
            state = .off(wakeAt: until, wakeReason: reason.kind)
            memory.sleepBound = reason.bound
            // The still sensor's off keeps the planned sleep's (`whileStill`), for `moving`.
            if reason.kind != .motionStill { memory.sleepTTFF = reason.ttff }
            if let until { actions.append(.wakeAt(until, reason)) }
            return actions
        }
    }

    // MARK: - Helpers

    private mutating func updateStationary(with fix: Fix) {
        guard fix.source == .gnss else { return }
        guard fix.horizontalAccuracyMeters <= configuration.minAccuracyMeters else {
            // Too poor to anchor a stand, but one certainly beyond it ends it.
            if let anchor = memory.anchor,
               Geodesy.haversineMeters(anchor, fix.coordinate) - fix.horizontalAccuracyMeters > configuration.stationaryRadiusMeters {
                memory.anchor = nil
                memory.anchorSince = nil
                memory.checkInterval = nil
            }
            return
        }
        if let anchor = memory.anchor, Geodesy.haversineMeters(anchor, fix.coordinate) <= configuration.stationaryRadiusMeters {
            return
        }
        memory.anchor = fix.coordinate
        memory.anchorSince = fix.time
        memory.checkInterval = nil
    }

    /// Whether the receiver last went off between `a` (at or before) and `b` (after).
    private func spansOffTime(from a: Fix, to b: Fix) -> Bool {
        guard let off = memory.lastGnssOffAt else { return false }
        return a.time <= off && off < b.time
    }

    /// Two GNSS fixes outside always-on with the last off time between them: what the watch
    /// across a sleep judges (between fixes a tracking receiver delivers, position and timing
    /// noise decide the implied speed, not motion).
    private func gnssAcrossOffTime(from a: Fix, to b: Fix) -> Bool {
        a.source == .gnss && b.source == .gnss && !configuration.alwaysOn && spansOffTime(from: a, to: b)
    }

    /// How far apart `a` and `b` certainly are: their distance less both accuracies.
    private static func separationMeters(_ a: Fix, _ b: Fix) -> Double {
        Geodesy.haversineMeters(a.coordinate, b.coordinate) - a.horizontalAccuracyMeters - b.horizontalAccuracyMeters
    }

    /// Whether `b` is plausible from `a` at the speed bound: the one in effect, or across an
    /// off time the one it relied on where that was larger.
    private func plausible(from a: Fix, to b: Fix) -> Bool {
        let dt = (b.time - a.time).secondsValue
        let d = Self.separationMeters(a, b)
        if d <= 0 { return true }
        guard dt > 0 else { return false }
        var limit = configuration.maxSpeedMetersPerSecond
        if spansOffTime(from: a, to: b), let relied = memory.offMaxSpeed { limit = max(limit, relied) }
        return d / dt <= limit
    }

    /// The receiver goes off at `now`, on the bounds in effect.
    private mutating func switchedOff(at now: UTCTime) {
        memory.lastGnssOffAt = now
        memory.offReach = configuration.reachability
        memory.offWakeMarginMeters = configuration.wakeMarginMeters
    }
}
