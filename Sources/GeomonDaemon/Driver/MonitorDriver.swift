#if canImport(Glibc)
import Glibc
#endif
public import GeomonCore
public import GeomonStore
import GeomonFormat

/// What the services see of the driver: the clock's moment, the profile, the run's status,
/// the log, and where their inputs go. The journal is the driver's: a service asks for writes
/// with inputs (`emit`), its part of the status (`updateStatus`), or through the outbox it
/// contributes to the commits (`OutboxContributor`).
public final class DriverContext {
    let clock: any DriverClock
    public let log: Log
    let journal: Journal?
    public internal(set) var profile: Profile
    /// The run's status (`geomon status`), written with the next flush after a change.
    public internal(set) var status = RuntimeStatus()
    fileprivate var inputs: [DriverInput] = []
    fileprivate var inputIndex = 0
    fileprivate var statusDirty = true

    init(clock: any DriverClock, log: Log, journal: Journal?, profile: Profile) {
        self.clock = clock
        self.log = log
        self.journal = journal
        self.profile = profile
    }

    /// The machine's time now.
    public var now: UTCTime { clock.now }
    /// The driver clock's monotonic microseconds (the services' `.driver` timers).
    public var monotonic: Int64 { clock.monotonic }
    /// The wall clock (the system's; a replay's virtual time).
    public var wall: UTCTime { clock.wall }

    /// The `.driver` instant `duration` from now.
    public func monotonic(after duration: Duration) -> Int64 {
        clock.monotonic + duration.wholeMicroseconds
    }

    /// The `.driver` instant of a wall-clock time.
    public func monotonic(atWall time: UTCTime) -> Int64 {
        clock.monotonic + (time.millisecondsSince1970 - clock.wall.millisecondsSince1970) * 1000
    }

    /// Hands the driver an input (decided in the order given, after the current one).
    public func emit(_ input: DriverInput) {
        inputs.append(input)
    }

    /// Sets one part of the status; written with the next flush when it changed.
    public func updateStatus<Value: Equatable>(_ part: WritableKeyPath<RuntimeStatus, Value>, _ value: Value) {
        guard status[keyPath: part] != value else { return }
        status[keyPath: part] = value
        statusDirty = true
    }

    /// The status is written with the next flush (the loop's figures: uptime, wake-ups).
    func statusChanged() {
        statusDirty = true
    }

    /// A profile to run instead of the current one, taken by the next reload.
    fileprivate var replacement: Profile?

    /// Runs `profile` from now on, as a reload does (fences that remain keep their state), but
    /// without reading the profile file again (fences pushed over MQTT changed).
    public func replaceProfile(_ profile: Profile) {
        replacement = profile
        emit(.reload)
    }

    fileprivate func nextInput() -> DriverInput? {
        guard inputIndex < inputs.count else { return nil }
        let input = inputs[inputIndex]
        inputIndex += 1
        if inputIndex == inputs.count {
            inputs.removeAll(keepingCapacity: true)
            inputIndex = 0
        }
        return input
    }
}

/// Why the driver cannot go on.
public struct DriverError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The one driver: owns the loop — the one `poll(2)`, the clock, the order — runs the decision
/// machine on the inputs its services hand it, performs the machine's effects (the journal's
/// store transaction, then every service in order: the receiver's switch, hooks, MQTT,
/// printing), and hands each commit's events to the services that act on them.
///
/// `geomon run` is this driver with a `LiveClock` and the live services (signals, systemd,
/// gpsd, the coarse source, hooks, heartbeats, MQTT); `geomon replay` the same driver with a
/// `VirtualClock` and the receiver model as its source, with the same hook and MQTT services;
/// `--compare-always-on` a second driver without a journal. Services start in the order given
/// and stop in reverse; nothing calls back into the driver while it steps.
public final class MonitorDriver {
    public private(set) var machine: Monitor
    public let journal: Journal?
    public let clock: any DriverClock
    public let services: [any Service]
    /// The services in each role, in the order given.
    private let sources: [any EventSource]
    private let sinks: [any EffectSink]
    private let holders: [any ClockHolding]
    public let context: DriverContext
    /// Inputs at or before this instant are decided again without storing or reporting their
    /// commits: a replay resuming on a database re-decides the recording up to the last
    /// committed fix, so every later decision is exactly the one an uninterrupted run makes.
    public var silentThrough: UTCTime?
    /// Machine deadlines after this are not decided (a replay ends at its recording's last fix).
    public var decideUntil: UTCTime?
    /// How long fixes wait in the journal before they are committed (events never wait); nil:
    /// only when a batch fills and at the end (a replay).
    public var flushDelay: Duration?
    /// Commits at `cadence` (the driver's flush delay, the journal's batch bounds).
    public func commit(at cadence: CommitCadence) {
        flushDelay = cadence.flushDelay
        journal?.batchTime = cadence.batchTime
        journal?.batchSize = max(1, cadence.batchSize)
    }

    /// Whether the run's status is stored (`geomon run`; a replay has none).
    public var writesStatus = false
    /// When set (`geomon run`), a commit the store refuses (another writer holding it past the
    /// busy timeout, a full disk, an I/O error) is logged and tried again this much later,
    /// the batch held in memory (nothing acts on its events before); a replay stops instead
    /// and decides the same inputs again when resumed.
    public var commitRetry: Duration?
    /// A fix dated far ahead of the clock was ignored (logged once a stretch).
    private var implausibleDateLogged = false
    /// The same for coarse fixes (taken at the clock's time instead).
    private var implausibleCoarseDateLogged = false
    /// Commits are failing (logged once until one succeeds); the journal holds its batch and
    /// only the retry timer commits.
    private var commitFailing = false {
        didSet { journal?.holdsCommits = commitFailing }
    }
    /// A reload that came while commits were failing: applied once one succeeds (the new
    /// machine starts from the store's state, which must hold the batch first).
    private var reloadWhenCommitted: Profile?
    /// Loads and validates the profile again (SIGHUP), logging why when it cannot; nil: reload
    /// is ignored.
    public var reloader: ((DriverContext) throws -> Profile)?
    /// Every effect, after the services saw it (logs, reports, tests).
    public var onEffect: ((Monitor.Effect, UTCTime) -> Void)?
    /// Events that are now committed, after each commit (the replay's counts, tests).
    public var onCommitted: (([StoredEvent], UTCTime) -> Void)?

    /// Times the loop waited in `poll(2)` (the idle cost).
    public private(set) var waits = 0
    /// Why the driver stopped, once it did.
    public private(set) var stopReason: String?
    public private(set) var started = false
    /// The inputs ended (`.end`): nothing more is decided; the services settle.
    public private(set) var inputEnded = false
    private var flushAt: Int64?
    private var stopped = false
    private var stalledDeadlines = 0
    private var startedMonotonic: Int64 = 0

    public init(machine: Monitor, journal: Journal?, clock: any DriverClock, services: [any Service], log: Log = Log(level: .error)) {
        self.machine = machine
        self.journal = journal
        self.clock = clock
        self.services = services
        sources = services.compactMap { $0 as? any EventSource }
        sinks = services.compactMap { $0 as? any EffectSink }
        holders = services.compactMap { $0 as? any ClockHolding }
        context = DriverContext(clock: clock, log: log, journal: journal, profile: machine.profile)
    }

    public var profile: Profile { context.profile }

    // MARK: - Running

    /// Starts the services (in order), then the machine (the receiver or coarse source on).
    public func start() throws {
        guard !started else { return }
        started = true
        startedMonotonic = clock.monotonic
        for service in services { try service.start(context) }
        try perform(machine.start(now: clock.now))
        if writesStatus { updatePlanningStatus() }
    }

    /// What one `step` came to.
    public enum StepOutcome: Equatable, Sendable {
        /// Something was decided or processed.
        case progressed
        /// Nothing is due now and the clock only moves when a test advances it.
        case idle
        /// Stopped, or the inputs ended and every service settled.
        case finished
    }

    /// Steps until nothing is due now (a `ManualClock`: after advancing it). Returns false once
    /// the driver finished.
    @discardableResult
    public func runUntilIdle() throws -> Bool {
        while true {
            switch try step() {
            case .progressed: continue
            case .idle: return true
            case .finished: return false
            }
        }
    }

    /// One turn of the loop: the next input, else a due deadline or service, else a wait.
    public func step() throws -> StepOutcome {
        if stopReason != nil { return .finished }
        if let input = context.nextInput() {
            try handle(input)
            try handlePendingInputs()
            return .progressed
        }
        let mono = clock.monotonic
        // Services due now go first: what they hand over is at or before the machine's
        // deadline (a fix at the same instant as a deadline is decided first, as in replay).
        var realNow: Int64?
        for service in sources {
            guard let wake = service.nextWake else { continue }
            let now: Int64
            switch service.wakeClock {
            case .driver: now = mono
            case .real:
                if realNow == nil { realNow = SystemHostClock.monotonicMicroseconds() }
                now = realNow ?? 0
            }
            if wake <= now {
                try service.process(revents: 0, context)
                try handlePendingInputs()
                return .progressed
            }
        }
        if let deadline = machineDeadline, clock.monotonic(at: deadline) <= mono {
            // A fix already waiting on a descriptor at the deadline goes first too.
            var polls = pollSet()
            if pollNow(&polls) {
                try dispatch(polls)
                if context.inputIndex < context.inputs.count { return .progressed }
            }
            try decide(machine.deadlineReached(now: clock.now))
            // A deadline that does not move on would loop for ever: a bug in the machine.
            if let next = machine.nextDeadline, next <= deadline {
                stalledDeadlines += 1
                if stalledDeadlines > 3 {
                    throw DriverError("the decision machine's deadline \(next.rfc3339) did not move on after it was reached at \(clock.now.rfc3339)")
                }
            } else {
                stalledDeadlines = 0
            }
            return .progressed
        }
        if let flushAt, flushAt <= mono {
            try flush()
            return .progressed
        }
        if inputEnded, holders.allSatisfy(\.isSettled) { return .finished }
        // Wait: for a descriptor, the earliest deadline, or a real timer.
        var polls = pollSet()
        var deadline = machineDeadline.map { clock.monotonic(at: $0) }
        var realDeadline: Int64?
        for service in sources {
            guard let wake = service.nextWake else { continue }
            switch service.wakeClock {
            case .driver: deadline = min(deadline ?? wake, wake)
            case .real: realDeadline = min(realDeadline ?? wake, wake)
            }
        }
        if let flushAt { deadline = min(deadline ?? flushAt, flushAt) }
        let holding = holders.contains(where: \.holdsClock)
        waits += 1
        switch clock.wait(&polls, until: deadline, realDeadline: realDeadline, holding: holding) {
        case .ready:
            try dispatch(polls)
            return .progressed
        case .deadline:
            return .progressed
        case .idle:
            return .idle
        case .exhausted:
            // Nothing can happen any more: no input, no timer, nothing to wait for.
            if !inputEnded { try handle(.end) }
            return holders.allSatisfy(\.isSettled) ? .finished : .progressed
        }
    }

    /// Stops: commits what the journal holds while the services still run (the commit's
    /// post-commit work is theirs), stops them in reverse start order, then writes the final
    /// status with no service left to act on it. Idempotent.
    public func stop(committing: Bool = true) {
        guard started, !stopped else { return }
        stopped = true
        if stopReason == nil { stopReason = "stopped" }
        do {
            if committing { try flush() }
        } catch {
            context.log.error("cannot commit on shutdown", ["error": "\(error)"])
        }
        for service in services.reversed() { service.stop(context) }
        context.status.running = false
        context.statusDirty = true
        guard committing else { return }
        do {
            try flush(notifying: false)
        } catch {
            context.log.error("cannot commit on shutdown", ["error": "\(error)"])
        }
    }

    /// Asks the driver to stop (as SIGTERM does).
    public func requestStop(_ reason: String = "requested") {
        context.emit(.stop(reason))
    }

    /// Asks the driver to reload the profile (as SIGHUP does).
    public func requestReload() {
        context.emit(.reload)
    }

    /// Commits what the journal buffers (and the status when it changed); with `notifying`,
    /// the services then act on the commit (`committed`).
    public func flush(notifying: Bool = true) throws {
        flushAt = nil
        guard let journal else { return }
        if writesStatus, context.statusDirty {
            context.statusDirty = false
            context.status.updated = clock.wall
            context.status.uptimeSeconds = Int((clock.monotonic - startedMonotonic) / 1_000_000)
            context.status.loopWakeups = waits
            journal.setRuntimeStatus(context.status)
        }
        if let events = try committing({ try journal.flush(now: clock.now) }), notifying { try committed(events) }
    }

    /// Runs a journal call that may commit; what it committed (nil: nothing). With
    /// `commitRetry`, a commit the store refuses is held, logged once and tried again later
    /// (nil then too); the first that goes through ends the failing stretch, and applies a
    /// reload that waited for it.
    private func committing(_ body: () throws -> [StoredEvent]?) throws -> [StoredEvent]? {
        let events: [StoredEvent]?
        do {
            events = try body()
        } catch let error as SQLiteError where !stopped && commitRetry != nil {
            let retry = commitRetry ?? .seconds(5)
            if !commitFailing {
                context.log.error("cannot commit to the database; the decisions wait in memory and the commit is tried again",
                                  ["error": "\(error)", "retry_s": "\(retry.components.seconds)"])
            }
            commitFailing = true
            flushAt = clock.monotonic + retry.wholeMicroseconds
            return nil
        }
        if commitFailing, events != nil {
            commitFailing = false
            context.log.notice("database commits resumed")
            if let profile = reloadWhenCommitted {
                reloadWhenCommitted = nil
                context.replaceProfile(profile)
            }
        }
        return events
    }

    // MARK: - Inputs

    private var machineDeadline: UTCTime? {
        guard !inputEnded, let deadline = machine.nextDeadline else { return nil }
        if let decideUntil, deadline > decideUntil { return nil }
        return deadline
    }

    /// What the services handed over, in order (what the next step would take first anyway).
    private func handlePendingInputs() throws {
        while stopReason == nil, let input = context.nextInput() { try handle(input) }
    }

    private func handle(_ input: DriverInput) throws {
        switch input {
        case var .fix(fix):
            guard !inputEnded else { return }
            if fix.source == .coarse {
                let time = clock.coarseTime(fix.time)
                if time != fix.time, !implausibleCoarseDateLogged {
                    implausibleCoarseDateLogged = true
                    context.log.warning("a coarse fix dated far ahead of the clock is taken at the clock's time (a bad date from its source)",
                                        ["fix.time": fix.time.rfc3339, "clock": time.rfc3339])
                }
                if time == fix.time { implausibleCoarseDateLogged = false }
                fix.time = time
            }
            // A receiver's date only: a coarse source's time may be the age of its location.
            guard fix.source != .gnss || clock.admits(fix.time) else {
                // Dated far ahead of the clock: taken, it would move the time base there and
                // every rightly dated fix after it would be older than the last one taken.
                if !implausibleDateLogged {
                    implausibleDateLogged = true
                    context.log.warning("a fix dated far ahead of the clock is ignored (a bad date from its source); fixes agreeing on it move the clock",
                                        ["fix.time": fix.time.rfc3339, "clock": clock.now.rfc3339, "fix.source": fix.source.rawValue])
                }
                return
            }
            implausibleDateLogged = false
            // The clock anchors on the fixes the machine will take.
            if fix.source == .coarse || machine.isReceiverOn, let shift = clock.fixArrived(fix.time) {
                journal?.timeBaseMoved(by: shift)
                context.log.info("on the receiver's time", ["clock.shift_s": String(Double(shift.wholeMilliseconds) / 1000)])
            }
            try decide(machine.fixReceived(fix, now: clock.now))
        case let .motion(motion):
            guard !inputEnded else { return }
            context.log.info("motion", ["motion": motion?.rawValue ?? "lost"])
            try decide(machine.motionReported(motion, now: clock.now))
        case let .activity(activity):
            guard !inputEnded else { return }
            context.log.info("activity", ["activity": activity?.rawValue ?? "none"])
            try decide(machine.activitySensed(activity, now: clock.now))
            if writesStatus { updatePlanningStatus() }
        case let .supply(supply):
            guard !inputEnded else { return }
            context.log.info("power supply", ["supply.capacity": supply.capacity.map(String.init) ?? "none",
                                              "supply.online": supply.online.map { $0 ? "true" : "false" } ?? "unknown"])
            try decide(machine.supplyReported(supply, now: clock.now))
        case let .stop(reason):
            stopReason = reason
        case .reload:
            try reload()
        case .requeueDead:
            for service in services { try (service as? any DeadLetters)?.requeueDead(context) }
            context.statusChanged()
        case .publishNow:
            for service in services { try (service as? any PublishesNow)?.publishNow(context) }
        case .end:
            inputEnded = true
            clock.inputsEnded()
            try flush()
        case .wakeRequest:
            guard !inputEnded else { return }
            try decide(machine.wakeRequested(now: clock.now))
        case .commitSoon:
            scheduleFlush()
        }
    }

    /// Performs one decision's effects: the journal first, then the services, then observers.
    private func decide(_ effects: [Monitor.Effect]) throws {
        try perform(effects)
    }

    private func perform(_ effects: [Monitor.Effect]) throws {
        let now = clock.now
        let silent = silentThrough.map { now <= $0 } ?? false
        for effect in effects {
            if !silent {
                switch effect {
                case let .commit(commit):
                    // Widened bounds, or a mode whose activity or receiver plans otherwise.
                    if writesStatus, commit.assumptions != nil || commit.mode != nil { updatePlanningStatus() }
                    if writesStatus, context.status.inside != commit.inside {
                        context.status.inside = commit.inside
                        context.statusChanged()
                    }
                    if let journal {
                        if let events = try committing({ try journal.add(commit, now: now) }) { try committed(events) }
                        scheduleFlush()
                    } else if !commit.events.isEmpty {
                        let profile = machine.profile.name
                        try committed(commit.events.enumerated().map { StoredEvent(seq: Int64($0.offset), profile: profile, event: $0.element) })
                    }
                case let .power(action):
                    journal?.record(action, at: now)
                    guard writesStatus else { break }
                    switch action {
                    case let .gnssOn(reason):
                        context.status.receiverOn = true
                        context.status.receiverReason = reason.text
                    case let .gnssOff(reason):
                        context.status.receiverOn = false
                        context.status.receiverReason = reason.text
                    case let .wakeAt(_, reason):
                        context.status.receiverReason = reason.text
                    case .coarseOn, .coarseOff:
                        break
                    }
                    context.statusChanged()
                case let .took(fix, _):
                    guard writesStatus else { break }
                    context.status.lastFix = fix
                    // A new first fix measured (the count grows to 20, then the median moves).
                    if context.status.planning?.ttffSamples != machine.policy.ttffSampleCount
                        || context.status.planning?.ttffMeasuredSeconds != machine.policy.measuredTTFF?.secondsValue { updatePlanningStatus() }
                    context.statusChanged()
                case .violated, .ttffLearned:
                    if writesStatus { updatePlanningStatus() }
                case .held, .dropped:
                    break
                }
            }
            for service in sinks { try service.perform(effect, context) }
            if !silent { onEffect?(effect, now) }
        }
        if context.statusDirty { scheduleFlush() }
    }

    /// The bounds the policy plans with, for `geomon status`.
    private func updatePlanningStatus() {
        let policy = machine.policy
        let activity = policy.sensedActivity ?? machine.configuration.declaredActivity
        var planning = RuntimeStatus.Planning(activity: activity.rawValue, from: policy.sensedActivity == nil ? "declared" : "sensed",
                                              bounds: policy.bounds.text, widened: policy.assumptions.widened != nil,
                                              violations: policy.assumptions.violations)
        planning.ttffHotSeconds = policy.configuration.ttffHot.secondsValue
        planning.ttffMeasuredSeconds = policy.measuredTTFF?.secondsValue
        planning.ttffSamples = policy.ttffSampleCount
        guard context.status.planning != planning else { return }
        context.status.planning = planning
        context.statusChanged()
    }

    /// A commit happened (with `events`, maybe none): the post-commit work.
    private func committed(_ events: [StoredEvent]) throws {
        for service in sinks { try service.committed(events, context) }
        if !events.isEmpty { onCommitted?(events, clock.now) }
    }

    private func scheduleFlush() {
        // While commits fail, only the retry timer tries again.
        guard let flushDelay, journal != nil, !commitFailing else { return }
        let at = clock.monotonic + flushDelay.wholeMicroseconds
        if flushAt.map({ $0 <= at }) ?? false { return }
        flushAt = at
    }

    /// SIGHUP: load and validate the profile again; on error keep the old one. Fences that
    /// remain keep their state (the machine continues from the store's state by fence id).
    private func reload() throws {
        let next: Profile
        if let replacement = context.replacement {
            context.replacement = nil
            next = replacement
        } else {
            guard let reloader else { return }
            do {
                next = try reloader(context)
            } catch {
                return
            }
        }
        try flush()
        if commitFailing {
            // The new machine starts from the store's state, which lacks the held batch.
            reloadWhenCommitted = next
            context.log.notice("the reload waits until the database accepts commits")
            return
        }
        let snapshot = try journal?.store.loadSnapshot() ?? EngineSnapshot()
        journal?.reload(profile: next)
        let previous = machine
        let sameReceiver = Self.sameReceiver(context.profile, next), sameSensor = Self.sameSensor(context.profile, next)
        context.profile = next
        context.updateStatus(\.profileFences, next.fences.filter { $0.pushed == nil }.map(\.id))
        var configuration = PowerConfiguration(profile: next)
        configuration.alwaysOn = machine.configuration.alwaysOn
        machine = Monitor(profile: next, snapshot: snapshot, configuration: configuration)
        machine.keepLearned(from: previous, sameReceiver: sameReceiver, sameSensor: sameSensor)
        for service in services { try service.reloaded(next, context) }
        try perform(machine.start(now: clock.now))
        if writesStatus { updatePlanningStatus() }
        context.statusChanged()
    }

    /// Whether a reload keeps the receiver its hot starts were measured on: the same source
    /// and device, switched and restarted the same way, planned with the same `ttff_hot`.
    static func sameReceiver(_ a: Profile, _ b: Profile) -> Bool {
        guard let x = a.sources.gnss, let y = b.sources.gnss else { return false }
        return x.plugin == y.plugin && x.host == y.host && x.port == y.port && x.device == y.device
            && a.powerMethod == b.powerMethod && a.restartClass == b.restartClass && a.receiver.ttffHot == b.receiver.ttffHot
    }

    /// Whether a reload keeps the motion sensor GNSS may have found wrong: the same plugin,
    /// device and program.
    static func sameSensor(_ a: Profile, _ b: Profile) -> Bool {
        guard let x = a.sources.motion, let y = b.sources.motion else { return false }
        return x.identity == y.identity
    }

    // MARK: - Polling

    private var pollOwners: [Int] = []

    private func pollSet() -> [pollfd] {
        pollOwners.removeAll(keepingCapacity: true)
        var polls: [pollfd] = []
        for (index, service) in sources.enumerated() {
            guard let request = service.pollRequest else { continue }
            polls.append(pollfd(fd: request.fd, events: request.events, revents: 0))
            pollOwners.append(index)
        }
        return polls
    }

    /// What is ready now, without waiting.
    private func pollNow(_ polls: inout [pollfd]) -> Bool {
        !polls.isEmpty && Glibc.poll(&polls, nfds_t(polls.count), 0) > 0
    }

    private func dispatch(_ polls: [pollfd]) throws {
        for (k, entry) in polls.enumerated() where entry.revents != 0 {
            let service = sources[pollOwners[k]]
            // A descriptor can change while another service ran (a reconnect): only if it is
            // still the one polled.
            guard service.pollRequest?.fd == entry.fd else { continue }
            try service.process(revents: entry.revents, context)
        }
    }
}

extension Duration {
    /// Whole microseconds.
    public var wholeMicroseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}
