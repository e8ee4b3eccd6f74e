public import GeomonCore

/// Replay's fix source as plain values: the receiver model for GNSS, the recorded (or derived)
/// coarse feed, and the accounting of what the policy did (on-time by reason, the actions with
/// their times, every fix delivered, every event decided).
///
/// The driver asks `nextFixTime(now:)` and `takeFix(at:)` for inputs and hands every effect
/// of the machine to `observe(_:now:)`; `finish(at:)` closes the accounting at the end of the
/// recording.
public struct ReplayReceiver {
    /// An action with the virtual time it was issued at.
    public struct TimedAction: Hashable, Sendable {
        public var time: UTCTime
        public var action: PowerAction
        /// How many fixes had been delivered when it was issued (its place among them).
        public var afterFixes: Int
        public init(time: UTCTime, action: PowerAction, afterFixes: Int = 0) {
            self.time = time
            self.action = action
            self.afterFixes = afterFixes
        }
    }

    public private(set) var model: ReceiverModel
    private var coarse: FixFeed
    /// The next coarse fix not yet passed.
    private var coarseNext: Fix?
    public let configuration: PowerConfiguration
    public private(set) var ledger = OnTimeLedger()
    /// Time and on-time per mode (`modes:`).
    public private(set) var modes = ModeLedger()
    /// The actions with their times, when `keepsActions`.
    public private(set) var actions: [TimedAction] = []
    /// Every fix delivered (GNSS and coarse), in delivery order, when `keepsDelivered` (the
    /// policy log and the picture need them; an evaluation of a long recording does not).
    public private(set) var delivered: [Fix] = []
    public var keepsDelivered = true
    /// Keep every action (`actions`: the policy log and the picture need them).
    public var keepsActions = true
    /// Keep every event decided (`events`: the picture and the comparison with always-on need
    /// them); the count is kept either way (`eventCount`).
    public var keepsEvents = true
    /// How many fixes were delivered.
    public private(set) var deliveredCount = 0
    /// For each switch-on of the receiver, the time of the first GNSS fix delivered at or after
    /// it (ascending, each once): what the picture needs to tell acquiring from on, kept
    /// whether or not `delivered` is.
    public private(set) var firstFixTimes: [UTCTime] = []
    private var awaitingFirstFix = false
    private var lastGNSSTime: UTCTime?
    /// Every event the machine decided, in order.
    public private(set) var events: [GeoEvent] = []
    /// Events decided, kept or not.
    public private(set) var eventCount = 0
    /// Fixes the screen held as implausible jumps.
    public private(set) var held = 0
    /// Bounds the plan relied on that a fix broke (`Monitor.Effect.violated`), in order.
    public private(set) var violations: [AssumptionViolation] = []
    /// `ttff_hot` replaced by the measured first fixes (`Monitor.Effect.ttffLearned`), in order.
    public private(set) var ttffChanges: [PowerPolicy.TTFFChange] = []
    private var coarseOn = false
    private var started = false
    private var switchedOnFor: PowerReason.Kind?
    private let powerMethod: GNSSPowerMethod
    private let restart: RestartClass

    /// - Parameters:
    ///   - track: recorded GNSS fixes, sorted by time.
    ///   - coarse: coarse fixes offered while the coarse source is on, sorted by time.
    ///   - settings: the receiver's figures, as its restart class makes them (`Profile.receiver`).
    ///   - powerMethod: how the receiver is switched (`sources.gnss.power`); its release after a
    ///     switch-off is charged in the energy figures.
    ///   - restart: the method's restart class, named in the report.
    ///   - trackingInterval: while tracking, a fix at least this often, interpolated between
    ///     recorded fixes (`ReceiverModel.trackingInterval`); nil: the recorded fixes only.
    public init(track: [Fix], coarse: [Fix], settings: ReceiverSettings, interpolationMaxGap: Duration,
                configuration: PowerConfiguration, powerMethod: GNSSPowerMethod, restart: RestartClass = .hot,
                trackingInterval: Duration? = nil) {
        self.init(track: FixFeed(track), coarse: FixFeed(coarse), settings: settings, interpolationMaxGap: interpolationMaxGap,
                  configuration: configuration, powerMethod: powerMethod, restart: restart, trackingInterval: trackingInterval)
    }

    /// The same over feeds, each read once.
    public init(track: FixFeed, coarse: FixFeed, settings: ReceiverSettings, interpolationMaxGap: Duration,
                configuration: PowerConfiguration, powerMethod: GNSSPowerMethod, restart: RestartClass = .hot,
                trackingInterval: Duration? = nil) {
        self.powerMethod = powerMethod
        self.restart = restart
        model = ReceiverModel(feed: track, settings: settings, interpolationMaxGap: interpolationMaxGap,
                              releaseDelay: configuration.alwaysOn ? nil : powerMethod.releaseDelay,
                              trackingInterval: trackingInterval)
        self.coarse = coarse
        coarseNext = self.coarse.next()
        self.configuration = configuration
    }

    /// The time of the next fix the receiver (or the coarse feed, while on) delivers.
    public mutating func nextFixTime(now: UTCTime) -> UTCTime? {
        if coarseOn {
            while let fix = coarseNext, fix.time < now { coarseNext = coarse.next() }
        }
        let gnss = model.nextFix?.time
        let coarseTime = coarseOn ? coarseNext?.time : nil
        switch (gnss, coarseTime) {
        case let (g?, c?): return min(g, c)
        case let (g?, nil): return g
        case let (nil, c?): return c
        case (nil, nil): return nil
        }
    }

    /// Moves what is off past `now`: the receiver model's recorded fixes and, while the coarse
    /// source is off, its feed (both would skip them at their next switch-on).
    public mutating func catchUp(to now: UTCTime) {
        model.skip(to: now)
        if !coarseOn {
            while let fix = coarseNext, fix.time < now { coarseNext = coarse.next() }
        }
    }

    /// Delivers the fix due at `time` (`nextFixTime`); GNSS first at equal times.
    public mutating func takeFix(at time: UTCTime) -> Fix? {
        let fix: Fix
        if model.nextFix?.time == time, let next = model.takeFix() {
            fix = next
        } else if coarseOn, let next = coarseNext, next.time == time {
            fix = next
            coarseNext = coarse.next()
        } else {
            return nil
        }
        deliveredCount += 1
        if keepsDelivered { delivered.append(fix) }
        if fix.source == .gnss {
            if awaitingFirstFix, firstFixTimes.last != fix.time { firstFixTimes.append(fix.time) }
            awaitingFirstFix = false
            lastGNSSTime = fix.time
        }
        return fix
    }

    /// Accounts for one effect of the machine at `now`.
    public mutating func observe(_ effect: Monitor.Effect, now: UTCTime) {
        switch effect {
        case let .power(action):
            if keepsActions { actions.append(TimedAction(time: now, action: action, afterFixes: deliveredCount)) }
            switch action {
            case let .gnssOn(reason):
                // Its first fix: one delivered at this very instant, else the next one.
                if let last = lastGNSSTime, last == now {
                    if firstFixTimes.last != now { firstFixTimes.append(now) }
                } else {
                    awaitingFirstFix = true
                }
                if !model.isOn {
                    ledger.mark(now, label: .acquire(reason.kind))
                    switchedOnFor = reason.kind
                }
                modes.receiver(on: true, at: now)
                // The recording starts with the receiver on and its first fix in hand.
                if started { model.turnOn(at: now) } else { model.start(at: now) }
            case .gnssOff:
                ledger.mark(now, label: nil)
                modes.receiver(on: false, at: now)
                model.turnOff(at: now)
            case .coarseOn: coarseOn = true
            case .coarseOff: coarseOn = false
            case .wakeAt: break
            }
        case let .commit(commit):
            eventCount += commit.events.count
            if keepsEvents { events += commit.events }
            for event in commit.events where event.kind == .mode {
                if let name = event.figures?.mode { modes.mode(name, at: now) }
            }
        case .held:
            held += 1
        case let .took(fix, decision):
            // Still on after a GNSS fix: the time goes to the decision that kept it on (in
            // always-on and significant-change, to why it was switched on).
            if fix.source == .gnss, model.isOn, let kind = decision?.kind ?? (chargesDecisions ? nil : switchedOnFor) {
                if ledger.current != .on(kind) { ledger.mark(now, label: .on(kind)) }
            }
        case .dropped:
            break
        case let .violated(violation):
            violations.append(violation)
        case let .ttffLearned(change):
            ttffChanges.append(change)
        }
        started = true
    }

    private var chargesDecisions: Bool {
        !configuration.alwaysOn && configuration.mode != .significantChange
    }

    /// The recording ended at `end`: the receiver is switched off for the accounting.
    /// The mode in effect when the run starts (a resumed database's).
    public mutating func startMode(_ name: String) {
        modes.start(mode: name)
    }

    public mutating func finish(at end: UTCTime) {
        ledger.mark(end, label: nil)
        modes.finish(at: end)
        model.finish(at: end)
    }

    /// The energy figures of the run over `trackSeconds`.
    public func report(trackSeconds: Double) -> EnergyReport {
        EnergyReport(trackSeconds: trackSeconds, usage: model.usage, settings: model.settings, events: eventCount,
                     powerMethod: powerMethod.name, restart: restart)
    }
}
