#if canImport(Glibc)
import Glibc
#endif

/// The one decision machine: for one profile it owns the jump screen, the transition engine and
/// the power policy, and turns every input into the effects the shell must perform.
///
/// A driver calls `start(now:)` once, then `fixReceived(_:now:)` for each fix a source delivers
/// and `deadlineReached(now:)` whenever `nextDeadline` comes first (a fix at the same instant
/// goes first). Nothing else decides anything: `geomon run` and `geomon replay` are the same
/// machine on a real and a virtual clock.
///
/// For each fix: GNSS fixes while the policy has the receiver off, or measured before it was
/// switched on, are dropped (late reports);
/// the screen holds implausible jumps until a second fix confirms them; each passed fix is
/// looked up in the fence index once (`FenceIndex.probe`: containing fences, the fences within
/// the fix's band, the nearest boundary), and that one answer feeds the engine, the certainty
/// test and the policy's distances. When the policy does not need distances (always-on, coarse
/// fixes in `regions` and `continuous`) and the last probe proves the answer unchanged (the fix
/// is closer to the last probe's point than the clearance found there, minus the band), no
/// lookup is made at all.
public struct Monitor: Sendable {
    /// What the shell must do, in order.
    public enum Effect: Hashable, Sendable {
        /// Write these fixes, fence state changes and events in one transaction, then act on
        /// the events (hooks, publishing).
        case commit(Commit)
        /// Switch the GNSS receiver or the coarse source, or note the policy's next wake.
        case power(PowerAction)
        /// A fix was screened as an implausible jump and is held until a second fix confirms it.
        case held(Fix)
        /// A fix was not used.
        case dropped(Fix, DropReason)
        /// The policy took this fix (the last one the screen passed); `decision` is its regions
        /// or continuous decision (why the receiver stays on, or sleeps), nil in always-on and
        /// significant-change. Comes after the fix's other effects.
        case took(Fix, decision: PowerReason?)
        /// A bound the last plan relied on broke; the bounds are widened for the rest of the
        /// trip (`PowerPolicy.bounds`). Comes after the commit that stores the new state.
        case violated(AssumptionViolation)
        /// The receiver's first fixes after hot wakes were consistently faster or slower than
        /// `ttff_hot`: their median replaces it (`PowerPolicy.learnTTFF`).
        case ttffLearned(PowerPolicy.TTFFChange)
    }

    public enum DropReason: String, Hashable, Sendable {
        /// A GNSS report while the policy has the receiver off.
        case receiverOff = "receiver-off"
        /// Not newer than the last fix the engine took, or not a valid position.
        case notNewer = "not-newer"
        /// A GNSS fix measured before the receiver was switched on.
        case stale
    }

    /// One decision's writes: everything the store must commit together.
    public struct Commit: Hashable, Sendable {
        /// Fixes the engine took, in order.
        public var fixes: [Fix] = []
        public var changes = EngineChanges()
        public var events: [GeoEvent] = []
        /// The engine's scalars after the decision.
        public var usableFixCount = 0
        public var lastFixTime: UTCTime?
        public var location: LocationReference?
        /// The state of fences without a record.
        public var implicitState: FenceState = .unknown
        /// Ids of the fences the device is inside after the decision, sorted.
        public var inside: [String] = []
        /// The watch on assumptions, when it changed (widened bounds, violations counted).
        public var assumptions: AssumptionState?
        /// The movement rules' state, when it changed.
        public var movement: MovementState? {
            get { movementBox?.value }
            set { movementBox = newValue.map(Boxed.init) }
        }
        private var movementBox: Boxed<MovementState>?
        /// The fences' cooldown records, when they changed (all of them).
        public var cooldowns: [CooldownRecord]?
        /// Speeding in progress in fences with `speed_limit:`, when it changed (all of it).
        public var speeding: [SpeedingRecord]?
        /// The mode in effect and its inputs (`modes:`), when they changed.
        public var mode: ModeState? {
            get { modeBox?.value }
            set { modeBox = newValue.map(Boxed.init) }
        }
        private var modeBox: Boxed<ModeState>?
        /// The MQTT location stream the mode in effect asks for (nil: the profile's).
        public var locations: MQTTSettings.Locations?

        public init() {}

        public var isEmpty: Bool { fixes.isEmpty && changes.isEmpty && events.isEmpty && assumptions == nil && movementBox == nil && cooldowns == nil && speeding == nil && modeBox == nil }
    }

    /// Index lookups made, for `replay --stats` and the benchmarks.
    public struct Lookups: Hashable, Sendable {
        /// Fixes the engine was given.
        public var fixes = 0
        /// `FenceIndex.probe` calls (at most one per fix).
        public var probes = 0
        /// Boundary distances sampled ahead along a fix's course (the heading bound).
        public var courseSamples = 0
        public init() {}
    }

    public let profile: Profile
    /// The policy's settings with the bounds in effect now (`PowerPolicy.configuration`).
    public var configuration: PowerConfiguration { policy.configuration }
    public private(set) var engine: TransitionEngine
    public private(set) var policy: PowerPolicy
    /// The movement rules (`movement:`): motion, trips, visits, the odometer.
    public private(set) var movement: MovementTracker
    /// The fences' cooldowns (`cooldown:`).
    public private(set) var cooldown: Cooldown
    /// Speed in fences with `speed_limit:`.
    public private(set) var speedWatch: SpeedWatch
    /// The mode in effect (`modes:`).
    public private(set) var modes: ModeSelector
    /// The policy's settings in each mode, by name (`ModeRule.fallbackName`: the profile's).
    private let modeConfigurations: [String: PowerConfiguration]
    public private(set) var lookups = Lookups()
    private var cache: ProbeCache?
    /// The fences the device is inside after the last commit.
    private var inside: [String] = []
    private var probe = FenceProbe()
    /// The motion source has spoken since this machine was made (`movingMayHaveChanged`).
    private var motionHeard = false

    /// The last probe's answer, valid for points within `clearance − band` of its point.
    private struct ProbeCache: Sendable {
        var point: Coordinate
        var cosLatitude: Double
        var clearanceMeters: Double
        var containing: [Int]
    }

    /// How far a probe made only for the engine looks for the nearest boundary (its clearance).
    static let engineClearanceMeters = 1000.0

    /// A machine for `profile` continuing from `snapshot` (the store's engine state).
    public init(profile: Profile, index: FenceIndex? = nil, snapshot: EngineSnapshot = EngineSnapshot(),
                configuration: PowerConfiguration? = nil) {
        self.profile = profile
        engine = TransitionEngine(profile: profile, index: index, snapshot: snapshot)
        let base = configuration ?? PowerConfiguration(profile: profile)
        var configurations = [ModeRule.fallbackName: base]
        for rule in profile.modes {
            var c = PowerConfiguration(profile: profile.applying(rule))
            c.alwaysOn = base.alwaysOn
            configurations[rule.name] = c
        }
        modeConfigurations = configurations
        modes = ModeSelector(rules: profile.modes, zone: profile.timeZone, state: snapshot.mode)
        policy = PowerPolicy(configuration: configurations[modes.current?.name ?? ModeRule.fallbackName] ?? base, assumptions: snapshot.assumptions)
        movement = MovementTracker(settings: profile.movement, profileName: profile.name, state: snapshot.movement)
        cooldown = Cooldown(profile: profile, records: snapshot.cooldowns)
        speedWatch = SpeedWatch(profile: profile, records: snapshot.speeding)
        inside = reportedInside()
        if modes.isEnabled { engine.locationEvents = locationEventsWanted }
        inputDone()
    }

    /// The fences consumers are told the device is inside: the engine's open stays (not one an
    /// `active:` window closed), less those a cooldown holds back.
    private func reportedInside() -> [String] {
        let ids = engine.openInsideFenceIDs
        guard cooldown.isEnabled else { return ids }
        let held = cooldown.suppressedFences
        return held.isEmpty ? ids : ids.filter { !held.contains($0) }
    }

    public var index: FenceIndex { engine.index }

    /// When `deadlineReached(now:)` is due next (a dwell, a scheduled wake, a fix timeout).
    /// A stored value, current after every input (so reading it never copies the machine).
    public private(set) var nextDeadline: UTCTime?
    /// Whether the policy wants the GNSS receiver on (current after every input).
    public private(set) var isReceiverOn = false
    public var isCoarseOn: Bool { policy.isCoarseOn }

    private mutating func inputDone() {
        // Without an array: this runs after every fix.
        func earliest(_ a: UTCTime?, _ b: UTCTime?) -> UTCTime? {
            guard let a else { return b }
            guard let b else { return a }
            return min(a, b)
        }
        nextDeadline = earliest(earliest(engine.nextDeadline, policy.nextDeadline), earliest(movement.nextDeadline, cooldown.nextDeadline))
        if modes.isEnabled { nextDeadline = earliest(nextDeadline, modes.nextDeadline) }
        isReceiverOn = policy.isGNSSOn
    }

    /// The speed rule for a GNSS fix in the fences it is inside, and whether the policy must
    /// keep fixes coming: the speed could pass a limit (plus tolerance) within the shortest
    /// sleep and its first fix, at the planned acceleration, or speeding is under way.
    private mutating func watchSpeed(_ fix: Fix) -> (events: [GeoEvent], wantsFixes: Bool) {
        var watched: [(id: String, limit: SpeedLimit)] = []
        for id in engine.insideFenceIDs {
            if let entry = speedWatch.limit(of: id), engine.isActive(fence: entry.index, at: fix.time) { watched.append((id, entry.limit)) }
        }
        let gap = (configuration.minSleep + configuration.ttffHot).secondsValue
        let reachable = (fix.speedMetersPerSecond ?? 0) + configuration.maxAccelerationMetersPerSecondSquared * gap
        let wantsFixes = watched.contains { reachable > $0.limit.thresholdMetersPerSecond } || !speedWatch.records.isEmpty
        return (speedWatch.fixTaken(fix, watched: watched, profileName: profile.name), wantsFixes)
    }

    /// Arrivals among `events` named after a fence the device is inside (the first by id).
    private mutating func named(_ events: [GeoEvent], insideBefore: String? = nil) -> [GeoEvent] {
        guard let arrival = events.firstIndex(where: { $0.kind == .arrival }) else { return events }
        // An arrival with its departure on one fix: the visit is over. Both are named after
        // the fence the device was in before this fix; the stay the fix begins is not named.
        if events[arrival...].contains(where: { $0.kind == .departure }) {
            guard let id = insideBefore else { return events }
            let fence = (id: id, name: profile.fences.first { $0.id == id }?.name)
            return events.map { $0.kind == .arrival || $0.kind == .departure ? movement.named($0, fence) : $0 }
        }
        guard let id = engine.insideFenceIDs.first else { return events }
        let fence = (id: id, name: profile.fences.first { $0.id == id }?.name)
        movement.nameVisit(fence)
        return events.map { $0.kind == .arrival ? movement.named($0, fence) : $0 }
    }

    // MARK: - Inputs

    /// Starts the machine: stays in fences that are gone, changed or outside their windows
    /// since the snapshot are closed (`TransitionEngine.start(at:)`: a commit with their exits
    /// first), then the policy switches the receiver (or the coarse source) on.
    public mutating func start(now: UTCTime) -> [Effect] {
        defer { inputDone() }
        var effects: [Effect] = []
        var commit = Commit()
        commit.events = engine.start(at: now)
        if speedWatch.isEnabled { commit.events += speedWatch.start(at: now, profileName: profile.name) }
        commit.events += movement.start(at: now)
        // The mode the stored inputs choose, before the policy starts in it (an idle policy
        // only takes the settings: no actions).
        if modes.isEnabled, let change = modes.start(now: now) { _ = switchMode(change, now: now, at: now, into: &commit.events) }
        modes.forgetWhenDisabled()
        if cooldown.isEnabled {
            cooldown.filter(&commit.events)
            cooldown.dropRemoved()
        }
        finish(&commit, into: &effects, filtered: true)
        return effects + policy.start(now: now).map { .power($0) }
    }

    /// Before `start` in a new process: the motion source's word the store holds was heard by
    /// the process that stored it; this one waits for the source to speak again (GNSS decides
    /// motion until it does), and the store forgets it with the start's commit.
    public mutating func forgetMotionSourceWord() {
        movement.forgetSensor()
    }

    /// Before `start`, what the machine a reload replaces learnt of the receiver and the motion
    /// sensor that stay (`PowerPolicy.keepLearned`; a still GNSS showed wrong is then believed
    /// neither by the policy nor by the movement rules).
    public mutating func keepLearned(from previous: Monitor, sameReceiver: Bool, sameSensor: Bool) {
        policy.keepLearned(from: previous.policy, sameReceiver: sameReceiver, sameSensor: sameSensor)
    }

    /// The power supply's reading (`run`: the kernel's power-supply class; `replay
    /// --power-supply`): the mode may change.
    public mutating func supplyReported(_ supply: PowerSupplyReading, now: UTCTime) -> [Effect] {
        defer { inputDone() }
        guard modes.isEnabled else { return [] }
        let edges = modeEdgesPassed(before: now, now: now)
        return edges + modeChanged(modes.supplyReported(supply, now: now), now: now)
    }

    /// Window edges of `modes:` that passed before an input at `time` (the host suspended, the
    /// loop late, an input ready before the overdue tick): decided first, each at its edge, as
    /// replay, which reaches every deadline before the input after it, decides them; the input
    /// then changes the mode they chose (`ModeTests.anInputAfterAPassedEdgeComesAfterTheEdgesChange`).
    private mutating func modeEdgesPassed(before time: UTCTime, now: UTCTime) -> [Effect] {
        var effects: [Effect] = []
        var edges = 0
        while modes.isEnabled, let due = modes.nextDeadline, due < time, edges < 8 {
            effects += modeChanged(modes.deadlineReached(now: due), now: now, at: due)
            edges += 1
        }
        return effects
    }

    /// The mode in effect: its entry, nil for the profile's own settings.
    public var mode: ModeRule? { modes.current }

    /// Whether the device moves, for `moving:` conditions: the movement rules' motion state
    /// when they run, else the motion source's word.
    private var movingNow: Bool? {
        if movement.isEnabled, let motion = movement.state.motion { return motion == .moving }
        return policy.motion.map { $0 == .moving }
    }

    /// `location` events: with `hooks.location`, MQTT's `significant` stream, or in
    /// significant-change mode (the profile's or the mode's).
    private var locationEventsWanted: Bool {
        guard configuration.mode != .significantChange, profile.hooks.location.isEmpty else { return true }
        guard let mqtt = profile.publish.mqtt else { return false }
        return (modes.current?.mqttLocations ?? mqtt.locations) == .significant
    }

    /// After an input that may change whether the device moves (with `moving:` conditions).
    /// The mode `moving:` conditions choose now, when it changed: switched to, its event added
    /// to `events` (the input's own commit: one input, one transaction, so a kill between two
    /// cannot keep the first and lose the mode), the policy's switches returned.
    private mutating func movingMayHaveChanged(now: UTCTime, into events: inout [GeoEvent]) -> [PowerAction] {
        // Until the motion source speaks in this process (or the movement rules decide), the
        // stored word stands: a restart's first fix is no word of the sensor.
        let moving = movingNow
        guard moving != nil || motionHeard, let change = modes.movingChanged(moving, now: now) else { return [] }
        return switchMode(change, now: now, at: now, into: &events)
    }

    /// A change of mode: its event and state committed, then the policy's switches.
    /// `at`: when the change happened, if before `now` (a window's edge a late tick reached).
    /// An input that changed no mode is committed too (the reading, the battery's hysteresis):
    /// a restart after a kill decides on what this process knew.
    private mutating func modeChanged(_ change: ModeChange?, now: UTCTime, at: UTCTime? = nil) -> [Effect] {
        var effects: [Effect] = []
        var commit = Commit()
        guard let change else {
            finish(&commit, into: &effects)
            return effects
        }
        let actions = switchMode(change, now: now, at: at ?? now, into: &commit.events)
        finish(&commit, into: &effects)
        return effects + actions.map { .power($0) }
    }

    /// Switches the policy to the mode `change` chose and adds the `mode` event, dated `at`: at
    /// the last fix's position (none before the first fix: infinite accuracy).
    private mutating func switchMode(_ change: ModeChange, now: UTCTime, at: UTCTime, into events: inout [GeoEvent]) -> [PowerAction] {
        var figures = EventFigures()
        figures.mode = change.to
        figures.modeFrom = change.from
        figures.modeCause = change.cause
        figures.batteryPercent = change.supply?.capacity
        figures.externalPower = change.supply?.online
        let last = policy.lastFix.map { TrackPoint(time: $0.time, coordinate: $0.coordinate, accuracyMeters: $0.horizontalAccuracyMeters) } ?? movement.state.last
        var event = GeoEvent(id: EventID.make(profile: profile.name, fenceID: change.to, kind: .mode, time: at),
                             kind: .mode, fenceID: nil, time: at,
                             coordinate: last?.coordinate ?? Coordinate(latitude: 0, longitude: 0),
                             accuracyMeters: last?.accuracyMeters ?? .infinity, rule: .movement(.mode, figures))
        event.figures = figures
        events.append(event)
        let configuration = modeConfigurations[change.to] ?? modeConfigurations[ModeRule.fallbackName]!
        let actions = policy.switchMode(to: configuration, now: now)
        engine.locationEvents = locationEventsWanted
        return actions
    }

    /// One fix from any source.
    public mutating func fixReceived(_ fix: Fix, now: UTCTime) -> [Effect] {
        defer { inputDone() }
        if fix.source == .gnss, !policy.isGNSSOn {
            return [.dropped(fix, .receiverOff)]
        }
        // A report measured before the receiver was switched on (gpsd's last fix, sent again
        // on a new watch) says nothing about now. Only once the clock is a GNSS clock: the
        // start of a recording or of a daemon is the moment it had its first fix.
        if fix.source == .gnss, policy.hasTakenFix, let since = policy.onSince, fix.time < since {
            return [.dropped(fix, .stale)]
        }
        guard case let .pass(passed) = policy.screen(fix), let last = passed.last else {
            // A violation the screen found while it holds the fix is reported and stored now.
            var effects: [Effect] = policy.takeViolations().map { .violated($0) }
            var commit = Commit()
            finish(&commit, into: &effects)
            return effects + [.held(fix)]
        }
        // A cooldown that ended before this fix delivers its held-back stay first, as replay,
        // which reaches every deadline before the fix after it, does (a fix queued while the
        // host was suspended is taken before the deadlines that passed meanwhile); the fix's
        // own events would otherwise end the stay unseen. A fix at the deadline's very instant
        // goes first, as the driver and replay take it. The engine decides its own overdue
        // dwells and window edges within the fix.
        var overdue: [Effect] = []
        if let due = cooldown.nextDeadline, let first = passed.first, due < first.time {
            overdue = eventDeadlinesReached(now: due)
        }
        if let first = passed.first { overdue += modeEdgesPassed(before: first.time, now: now) }
        var effects: [Effect] = []
        var commit = Commit()
        var accepted = false
        var exact = false
        // The speed rule wants the receiver kept on (`watchSpeed`), as of the last fix.
        var speedWatchWantsFixes = false
        for f in passed {
            // Where the device was before this fix, for a visit this fix both confirms and ends.
            let insideBefore = movement.isEnabled && movement.mayArriveLeaving(at: f.time) ? engine.insideFenceIDs.first : nil
            exact = needsDistances(f)
            let geometry = lookUp(f, exact: exact)
            let outcome = engine.fixReceived(f, geometry: geometry)
            lookups.fixes += 1
            accepted = outcome.accepted
            if outcome.accepted {
                commit.fixes.append(f)
            } else {
                effects.append(.dropped(f, .notNewer))
            }
            commit.events += outcome.events
            if outcome.accepted, engine.isUsable(f) {
                if movement.isEnabled { commit.events += named(movement.fixTaken(f), insideBefore: insideBefore) }
                if speedWatch.isEnabled, f.source == .gnss {
                    let (events, wantsFixes) = watchSpeed(f)
                    commit.events += events
                    speedWatchWantsFixes = wantsFixes
                }
            }
        }
        // `probe` holds the last fix's answer when it was looked up exactly.
        let context = makeContext(for: last, probe: exact ? probe : nil, accepted: accepted, speedWatch: speedWatchWantsFixes && last.source == .gnss)
        let believedStill = policy.motion == .still
        let actions = policy.fixReceived(last, context: context, now: now)
        // GNSS won over a sensor that says still: the movement rules no longer go by its word
        // either (until it speaks again), as when it falls silent.
        if believedStill, policy.stillDistrusted, movement.isEnabled { commit.events += movement.motionReported(nil, now: now) }
        effects += policy.takeViolations().map { .violated($0) }
        if let change = policy.takeTTFFChange() { effects.append(.ttffLearned(change)) }
        let took = Effect.took(last, decision: decides(last) ? policy.lastDecision : nil)
        let modeBefore = modes.current
        let modeActions = modes.readsMoving ? movingMayHaveChanged(now: now, into: &commit.events) : []
        finish(&commit, into: &effects, locationsFrom: modeBefore)
        effects += actions.map { .power($0) }
        effects.append(took)
        return overdue + effects + modeActions.map { .power($0) }
    }

    /// The motion sensor's word (`PowerPolicy.motionReported`); nil: it went silent.
    public mutating func motionReported(_ motion: Motion?, now: UTCTime) -> [Effect] {
        defer { inputDone() }
        motionHeard = true
        var effects = modeEdgesPassed(before: now, now: now)
        var commit = Commit()
        // Before the commit: what the word changes of the watch (a verdict lifted, or a still
        // the last fix refutes) goes with it.
        let actions = policy.motionReported(motion, now: now)
        // A still GNSS has shown wrong, before or at this word, is not believed until the
        // sensor has said moving again.
        commit.events = movement.motionReported(motion == .still && policy.stillDistrusted ? nil : motion, now: now)
        let modeBefore = modes.current
        let modeActions = modes.readsMoving ? movingMayHaveChanged(now: now, into: &commit.events) : []
        finish(&commit, into: &effects, locationsFrom: modeBefore)
        effects += actions.map { .power($0) }
        return effects + modeActions.map { .power($0) }
    }

    /// The motion source's activity (`PowerPolicy.activitySensed`); nil: none, or it went silent.
    public mutating func activitySensed(_ activity: Activity?, now: UTCTime) -> [Effect] {
        defer { inputDone() }
        let edges = modeEdgesPassed(before: now, now: now)
        let actions: [Effect] = policy.activitySensed(activity, now: now).map { .power($0) }
        guard modes.isEnabled else { return actions }
        return edges + actions + modeChanged(modes.activitySensed(policy.sensedActivity, now: now), now: now)
    }

    /// A fix is wanted now (`PowerPolicy.wakeRequested`).
    public mutating func wakeRequested(now: UTCTime) -> [Effect] {
        defer { inputDone() }
        return policy.wakeRequested(now: now).map { .power($0) }
    }

    /// What the motion sensor says, as the policy believes it.
    public var motion: Motion? { policy.motion }

    /// The clock reached `now`: due dwells, scheduled wakes, fix timeouts.
    public mutating func deadlineReached(now: UTCTime) -> [Effect] {
        defer { inputDone() }
        var effects = eventDeadlinesReached(now: now)
        if let due = policy.nextDeadline, due <= now {
            effects += policy.deadlineReached(now: now).map { .power($0) }
        }
        // A window's edge is decided at the edge, however late the tick (one edge per call:
        // the next is due at once when it has passed too).
        if modes.isEnabled, let due = modes.nextDeadline, due <= now {
            effects += modeChanged(modes.deadlineReached(now: due), now: now, at: due)
        }
        return effects
    }

    /// The deadlines of events due by `now` (the engine's dwells and window edges, movement's,
    /// the cooldown's ends), committed together.
    private mutating func eventDeadlinesReached(now: UTCTime) -> [Effect] {
        var effects: [Effect] = []
        var commit = Commit()
        if let due = engine.nextDeadline, due <= now {
            commit.events = engine.deadlineReached(at: now)
        }
        if let due = movement.nextDeadline, due <= now {
            commit.events += named(movement.deadlineReached(now: now))
        }
        if cooldown.isEnabled {
            // In time order: the events up to a cooldown's end (an exit at that very instant
            // ends the held-back stay before the cooldown could deliver it), the stays it
            // delivers then, the events after it (a late tick covering several deadlines: a
            // dwell after the end is the delivered stay's).
            var pending = commit.events
            var ordered: [GeoEvent] = []
            let engine = self.engine
            while let due = cooldown.nextDeadline, due <= now {
                var upTo = pending.filter { $0.time <= due }
                pending.removeAll { $0.time <= due }
                cooldown.filter(&upTo)
                ordered += upTo
                // Inside at `due`: no fix came between then and now, and a window may have
                // closed after it (its exit is among the events after `due`).
                ordered += cooldown.deadlineReached(now: now, through: due, profileName: profile.name) { engine.isInsideActive($0, at: due) }
            }
            cooldown.filter(&pending)
            commit.events = ordered + pending
        }
        finish(&commit, into: &effects, filtered: true)
        return effects
    }

    /// `filtered`: the cooldown rule has already seen `commit.events`.
    /// `finish` for an input that may have switched the mode: its own messages (a leave and the
    /// location after it) follow the `locations:` of `mode`, the one in effect when it came.
    private mutating func finish(_ commit: inout Commit, into effects: inout [Effect], locationsFrom mode: ModeRule?) {
        let count = effects.count
        finish(&commit, into: &effects)
        guard modes.isEnabled, effects.count > count, case var .commit(committed) = effects[0] else { return }
        committed.locations = mode?.mqttLocations
        effects[0] = .commit(committed)
    }

    private mutating func finish(_ commit: inout Commit, into effects: inout [Effect], filtered: Bool = false) {
        commit.changes = engine.takeChanges()
        commit.assumptions = policy.takeAssumptions()
        commit.movement = movement.takeState()
        if cooldown.isEnabled || filtered {
            if !filtered { cooldown.filter(&commit.events) }
            commit.cooldowns = cooldown.takeRecords()
        }
        if speedWatch.isEnabled { commit.speeding = speedWatch.takeRecords() }
        // Changed only while enabled, or when a profile without modes forgot the stored one.
        commit.mode = modes.takeState()
        guard !commit.isEmpty else { return }
        commit.usableFixCount = engine.usableFixCount
        commit.lastFixTime = engine.lastFixTime
        commit.location = engine.location
        commit.implicitState = engine.implicitState
        if modes.isEnabled { commit.locations = modes.current?.mqttLocations }
        // Recomputed only when fence records changed (a commit of fixes alone keeps it), and
        // with `active:` windows on every commit (a window's edge changes no record).
        if !commit.changes.isEmpty || commit.cooldowns != nil || engine.hasSchedules { inside = reportedInside() }
        commit.inside = inside
        effects.insert(.commit(commit), at: 0)
    }

    // MARK: - Looking fixes up

    /// The policy reads distances for every GNSS fix outside always-on, every fix in
    /// significant-change mode, and coarse fixes in regions mode (they move wakes).
    private func needsDistances(_ fix: Fix) -> Bool {
        !configuration.alwaysOn && (configuration.mode != .continuous || fix.source == .gnss)
    }

    /// Regions and continuous decide after every GNSS fix (outside always-on).
    private func decides(_ fix: Fix) -> Bool {
        !configuration.alwaysOn && fix.source == .gnss && configuration.mode != .significantChange
    }

    /// The fences containing `fix` and those within its band: from a fresh probe when `exact`
    /// (then `probe` holds its answer) or when the cache cannot prove them, else from the cache.
    private mutating func lookUp(_ fix: Fix, exact: Bool) -> FixGeometry {
        let band = engine.bandMeters(for: fix)
        let point = fix.coordinate
        guard fix.coordinate.isValid, band.isFinite else {
            probe = FenceProbe(searchRadiusMeters: configuration.searchRadiusMeters)
            return FixGeometry()
        }
        if !exact, let cache {
            // Equirectangular distance around the cached point (within 0.1 % of the geodesic
            // at these ranges), with 1 m and 1 % to spare for the difference in models.
            let dy = (point.latitude - cache.point.latitude) * Self.metersPerDegree
            let dx = Geodesy.longitudeDelta(cache.point.longitude, point.longitude) * Self.metersPerDegree * cache.cosLatitude
            if (dx * dx + dy * dy).squareRoot() + band < cache.clearanceMeters * 0.99 - 1 {
                return FixGeometry(containing: cache.containing)
            }
        }
        let radius: Double
        if exact {
            // Regions GNSS fixes want the nearest boundary anywhere (how long an outage may go
            // unwatched); the other modes look as far as a sleep could reach.
            radius = configuration.mode == .regions && fix.source == .gnss ? .infinity : max(configuration.searchRadiusMeters, band)
        } else {
            radius = max(Self.engineClearanceMeters, band)
        }
        index.probe(point, within: radius, band: band, into: &probe)
        lookups.probes += 1
        cache = ProbeCache(point: point, cosLatitude: cos(point.latitude * Double.pi / 180),
                           clearanceMeters: probe.nearestDistanceMeters.map { min($0, probe.searchRadiusMeters) } ?? probe.searchRadiusMeters,
                           containing: probe.containing)
        return FixGeometry(containing: probe.containing, band: probe.band)
    }

    private static let metersPerDegree = 6_371_008.8 * Double.pi / 180

    /// What the policy needs to know after the engine took `fix`, from the fix's probe.
    ///
    /// Certainty: the fix is *certain* when the engine has left its start-up `unknown` state,
    /// the fix is usable (coarse, or GNSS with `a ≤ min_accuracy`), no fence boundary is
    /// strictly within `a + h` of it, and no fence record is `unknown`. `allCertain` also
    /// needs no transition pending. Distances: the nearest boundary within the search radius;
    /// for a regions GNSS fix with none there, the nearest anywhere (`.infinity` without one);
    /// for a certain regions GNSS fix with a speed and a course, the clearance sampled ahead.
    /// `speedWatch`: the speed rule wants the receiver kept on (`watchSpeed`).
    private mutating func makeContext(for fix: Fix, probe: FenceProbe?, accepted: Bool, speedWatch: Bool) -> FixContext {
        let earliestPending = engine.earliestPending(activeAt: fix.time)
        let pending = earliestPending != nil
        // Certain on every side from where the fix is, whatever the engine has confirmed; and
        // certain for every fence whose change waits, so the fix counted towards each.
        var placed = accepted && engine.isUsable(fix)
        var counted = placed
        if placed, let probe {
            let band = engine.bandMeters(for: fix)
            // A fence outside its `active:` windows leaves no side in doubt that matters.
            let doubted = probe.band.filter { abs($0.signedDistanceMeters) < band && engine.isActive(fence: $0.fence, at: fix.time) }
            placed = doubted.isEmpty
            counted = !doubted.contains { engine.isPending(fence: $0.fence) }
        }
        let startingUp = engine.implicitState == .unknown
        let certain = placed && !startingUp && !engine.anyRecordUnknown
        let allCertain = certain && !pending
        var context = FixContext(fix: fix, probe: probe, configuration: configuration, allCertain: allCertain,
                                 transitionPending: pending, earliestDwellDeadline: engine.nextDeadline)
        context.speedWatch = speedWatch
        context.sideUnknown = startingUp || engine.anyRecordUnknown
        if let first = earliestPending {
            context.pendingSince = first.firstTime
            context.pendingCount = first.count
        }
        // A change waits only for confirming fixes (`transitions.confirm.time` has passed by
        // the last of them): how many (the earliest change's count). Another fence in doubt
        // does not stop them coming at the tracking rate.
        if counted, pending, !startingUp, !engine.anyRecordUnknown, let first = earliestPending {
            let left = max(1, engine.confirmFixes - first.count)
            if fix.time + configuration.trackingFixInterval * left - first.firstTime >= configuration.confirmTime {
                context.fixesToSettle = left
            }
        }
        let radius = configuration.searchRadiusMeters
        let regionsGNSS = !configuration.alwaysOn && configuration.mode == .regions && fix.source == .gnss
        if engine.hasSchedules, probe != nil { scheduledDistances(&context, fix: fix) }
        if regionsGNSS, allCertain, let course = fix.courseDegrees, let speed = fix.speedMetersPerSecond, speed > 0 {
            let length = min(FixContext.courseLengthMeters, speed * (configuration.maxSleep + configuration.ttffHot).secondsValue)
            let clearance = CourseClearance.sample(
                index: index, from: fix.coordinate, courseDegrees: course,
                lengthMeters: length, stepMeters: FixContext.courseStepMeters, searchRadiusMeters: radius
            )
            lookups.courseSamples += clearance.clearanceMeters.count
            context.courseClearance = clearance
        }
        return context
    }

    /// With `active:` windows (docs/power.md, "Schedules"): the policy plans with each fence's
    /// distance as it matters — an active fence's as it is; an inactive one's as if it were at
    /// least as far as the device can go until it opens (a crossing reported comes no sooner
    /// than the opening, nor sooner than the device can reach the boundary: it may wait at the
    /// edge); a fence never active again not at all. So the receiver is not woken for a fence
    /// outside its windows, and is woken in time for one about to open.
    private func scheduledDistances(_ context: inout FixContext, fix: Fix) {
        let radius = configuration.searchRadiusMeters
        let reach = configuration.reachability
        var nearest: Double?, creep: Double?
        for candidate in index.near(fix.coordinate, within: radius) {
            var d = abs(candidate.signedDistanceMeters), c = d
            if !engine.isActive(fence: candidate.fence, at: fix.time) {
                guard let opens = engine.nextActivityChange(fence: candidate.fence, after: fix.time) else { continue }
                let seconds = (opens - fix.time).secondsValue
                d = max(d, reach.reachMeters(seconds: seconds, speedMetersPerSecond: fix.speedMetersPerSecond))
                c = max(c, configuration.stillCreepMetersPerSecond * seconds)
            }
            if d <= radius, nearest.map({ d < $0 }) ?? true { nearest = d }
            if creep.map({ c < $0 }) ?? true { creep = c }
        }
        context.nearestBoundaryMeters = nearest
        context.creepDistanceMeters = creep
    }
}
