#if canImport(Glibc)
import Glibc
#endif

/// The pure transition engine: fixes and deadlines in, enter/exit/dwell/location events out.
///
/// Rules (docs/engine.md has the full text):
/// - A fix is *usable* for fences when it is coarse, or when its accuracy `a` is at most
///   `sources.gnss.min_accuracy`. Unusable fixes change no fence state and reset nothing.
/// - For a usable fix with signed distance `s` to a fence (negative inside) and hysteresis `h`:
///   certainly inside iff `s <= -(a + h)`, certainly outside iff `s >= a + h`, else uncertain.
///   Uncertain fixes change nothing and reset nothing.
/// - A certain fix equal to the fence's state clears a pending change. A certain fix of the
///   other state starts (or continues) a pending change; it is confirmed by the fix that makes
///   `transitions.confirm.fixes` consecutive ones at least `transitions.confirm.time` after
///   the first of them. The event carries the time and position of the first.
/// - Dwell fires once per stay, at `enter time + dwell`: on the first input (fix or deadline) at
///   or after that instant, unless an exit pending since before that instant may still confirm.
/// - A fix not newer than the last processed fix is ignored.
/// - A change of a fence with `active:` windows is reported only when the fence is active at
///   the fix that confirms it.
/// - Closing a stay: a fence whose enter was reported (`FenceStateRecord.reported`) and that
///   stops being watched — its window closes, it is removed, or its name or geometry changes —
///   reports `exit` at that instant (`EventRule.closed`), exactly once: consumers replaying
///   the events never stay "inside" a fence the engine does not hold the device in and watch.
///
/// Per fix only fences near the point (`FenceIndex.near`/`containing`) and fences with a record
/// (inside, unknown-but-touched, or pending) are visited.
public struct TransitionEngine: Sendable {
    /// The immutable part, shared by reference so copying an engine (or reading a property of
    /// one stored in a class) does not copy the profile and the index.
    private final class Configuration: Sendable {
        let profile: Profile
        let index: FenceIndex
        let indexByID: [String: Int]
        let hysteresisMeters: Double
        let confirm: Int
        let confirmTime: Duration
        let minAccuracyMeters: Double
        let locationEnabled: Bool
        /// MQTT consumers are told every enter and exit (`publish.mqtt`): a stay they were told
        /// of ends with an exit also where the fence's `events` leave it out (`unlisted`).
        let publishesTransitions: Bool
        /// Fences with `approach:`, and how far from a boundary any of them is tracked.
        let approachReachMeters: Double
        let maxSpeedMetersPerSecond: Double
        /// Whether any fence has `active:` windows, and their zone.
        let scheduled: Bool
        let zone: TimeZoneRules

        init(profile: Profile, index: FenceIndex?) {
            self.profile = profile
            self.index = index ?? profile.makeIndex()
            var byID: [String: Int] = [:]
            for (i, fence) in profile.fences.enumerated() where byID[fence.id] == nil { byID[fence.id] = i }
            indexByID = byID
            hysteresisMeters = max(0, profile.transitions.hysteresisMeters)
            confirm = max(1, profile.transitions.confirm)
            confirmTime = max(.zero, profile.transitions.confirmTime)
            minAccuracyMeters = (profile.sources.gnss ?? GNSSSourceSettings()).minAccuracyMeters
            publishesTransitions = profile.publish.mqtt != nil
            locationEnabled = !profile.hooks.location.isEmpty || profile.mode == .significantChange
                || profile.publish.mqtt?.locations == .significant
            maxSpeedMetersPerSecond = profile.policy.plannedBounds.maxSpeedMetersPerSecond
            approachReachMeters = profile.fences.reduce(0) { [maxSpeedMetersPerSecond] in
                max($0, $1.approach?.reachMeters(maxSpeed: maxSpeedMetersPerSecond) ?? 0)
            }
            scheduled = profile.fences.contains { $0.active != nil }
            zone = profile.timeZone
        }
    }

    private let config: Configuration
    public var profile: Profile { config.profile }
    public var index: FenceIndex { config.index }
    private var indexByID: [String: Int] { config.indexByID }
    private var hysteresisMeters: Double { config.hysteresisMeters }
    private var confirm: Int { config.confirm }
    private var minAccuracyMeters: Double { config.minAccuracyMeters }
    /// Whether `location` events are decided (the profile's rule; `Monitor` sets it when the
    /// mode changes).
    public var locationEvents: Bool
    private var locationEnabled: Bool { locationEvents }

    private var records: [Int: FenceStateRecord] = [:]
    private var dirty: Set<Int> = []
    /// Approach state of fences with `approach:` near the device.
    private var approaches: [Int: ApproachRecord] = [:]
    private var approachesChanged = false
    /// The latest input (fix or deadline): activations between two inputs are found from it.
    private var lastInputTime: UTCTime?
    /// Per scheduled fence inside (with `initial: report`): whether it was active at the input
    /// it was looked at, and when that next changes (nil: not within 8 days). Kept until the
    /// change passes; the change is a deadline, so an opening is seen on time.
    private var activity: [Int: (active: Bool, change: UTCTime?)] = [:]
    private var droppedIDs: [String] = []
    /// Stays of fences removed or replaced since the snapshot, to close at `start(at:)`.
    private var closures: [(record: FenceStateRecord, reason: EventRule.ClosureReason)] = []
    /// Usable fixes processed (capped at a large value; only `>= confirm` matters).
    public private(set) var usableFixCount = 0
    /// The implicit state has been `outside` (`confirm` usable fixes were processed): it stays
    /// so, also when a reload raises `confirm`.
    private var knownOutside = false
    public private(set) var lastFixTime: UTCTime?
    public private(set) var location: LocationReference?

    /// Creates an engine for `profile`, continuing from `snapshot`. Records of fences that no
    /// longer exist in the profile, or whose name or geometry changed (`FenceFingerprint`), are
    /// dropped and reported as removals; a reported stay among them is closed by `start(at:)`.
    public init(profile: Profile, index: FenceIndex? = nil, snapshot: EngineSnapshot = EngineSnapshot()) {
        config = Configuration(profile: profile, index: index)
        locationEvents = config.locationEnabled
        for var record in snapshot.records {
            guard let i = config.indexByID[record.fenceID] else {
                droppedIDs.append(record.fenceID)
                if record.state == .inside, record.reported { closures.append((record, .removed)) }
                continue
            }
            if record.state == .inside {
                let now = fingerprint(fence: i)
                if let before = record.fingerprint, before != now {
                    droppedIDs.append(record.fenceID)
                    if record.reported { closures.append((record, .replaced)) }
                    continue
                }
                record.fingerprint = now
            }
            records[i] = record
        }
        for record in snapshot.approaches {
            if let i = config.indexByID[record.fenceID], config.profile.fences[i].approach != nil { approaches[i] = record }
        }
        usableFixCount = snapshot.usableFixCount
        knownOutside = snapshot.implicitOutside
        lastFixTime = snapshot.lastFixTime
        // An activation fired before a restart is fired again from here: its id is the same,
        // and the store keeps one.
        lastInputTime = snapshot.lastInputTime ?? snapshot.lastFixTime
        if let last = lastInputTime { refreshActivity(at: last) }
        location = snapshot.location
    }

    // MARK: - State

    /// Closes the stays the snapshot held in fences that are gone or changed, and in fences
    /// outside their windows at `now` (a profile edit), with an `exit` at `now` each; with
    /// `initial: report`, a stay consumers were not told of in a fence active now (its windows
    /// edited) reports `enter` (docs/engine.md, "Closing a stay"). The machine calls it once,
    /// right after creating the engine; closed records are removals in the next `takeChanges()`.
    public mutating func start(at now: UTCTime) -> [GeoEvent] {
        var events: [GeoEvent] = []
        for (record, reason) in closures {
            let fence = config.indexByID[record.fenceID].map { config.profile.fences[$0] }
            if let exit = closingExit(record, fence: fence, fenceName: record.name, reason: reason, at: now) { events.append(exit) }
        }
        closures = []
        fireWindowChanges(at: now, into: &events)
        // A profile edit that changed a fence's windows (or took them away): the stay is
        // closed, or with `initial: report` opened, as the fence is active now.
        for i in records.keys.sorted() {
            guard var record = records[i], record.state == .inside else { continue }
            let fence = config.profile.fences[i]
            let active = isActive(fence: i, at: now)
            if record.reported, !active {
                if let exit = closingExit(record, fence: fence, fenceName: record.name ?? fence.name, reason: .windowClosed, at: now) { events.append(exit) }
                record.reported = false
            } else if !record.reported, active, profile.transitions.initial == .report, fence.events.contains(.enter) {
                events.append(activation(record, fence: fence, at: now))
                record.reported = true
                record.name = fence.name
            } else {
                continue
            }
            records[i] = record
            dirty.insert(i)
        }
        refreshActivity(at: now)
        return events
    }

    /// The fingerprint of fence `i` as the profile holds it now.
    private func fingerprint(fence i: Int) -> UInt64 {
        let fence = config.profile.fences[i]
        return FenceFingerprint.of(name: fence.name, shape: fence.shape ?? config.index.shape(of: i))
    }

    /// The persistable state, exactly enough to continue.
    public var snapshot: EngineSnapshot {
        EngineSnapshot(
            records: records.keys.sorted().compactMap { records[$0] },
            usableFixCount: usableFixCount,
            implicitOutside: implicitOutside,
            lastFixTime: lastFixTime,
            lastInputTime: lastInputTime,
            location: location,
            approaches: sortedApproaches
        )
    }

    private var sortedApproaches: [ApproachRecord] {
        approaches.keys.sorted().compactMap { approaches[$0] }
    }

    /// The state of fence `fenceID` (implicit state for fences without a record).
    public func state(of fenceID: String) -> FenceState? {
        guard let i = indexByID[fenceID] else { return nil }
        return records[i]?.state ?? implicitState
    }

    /// Whether the device is inside fence `fenceID` and the fence is in one of its `active:`
    /// windows at `time` (a stay consumers could be told of).
    public func isInsideActive(_ fenceID: String, at time: UTCTime) -> Bool {
        guard let i = indexByID[fenceID], (records[i]?.state ?? implicitState) == .inside else { return false }
        return isActive(fence: i, at: time)
    }

    /// Consecutive certain fixes that confirm a change (`transitions.confirm`).
    public var confirmFixes: Int { confirm }

    /// The state of fences that have no record.
    public var implicitState: FenceState { implicitOutside ? .outside : .unknown }

    /// Whether fences without a record are known outside: `confirm` usable fixes processed,
    /// now or before a reload that raised `confirm` (where confirming `inside` from `unknown`
    /// would be silent under `initial: silent`, and an enter lost).
    private var implicitOutside: Bool { knownOutside || usableFixCount >= confirm }

    /// Records changed since the last call, for the store; clears the change set.
    public mutating func takeChanges() -> EngineChanges {
        var changes = EngineChanges(removals: droppedIDs)
        droppedIDs = []
        for i in dirty.sorted() {
            if let record = records[i] {
                changes.upserts.append(record)
            } else {
                changes.removals.append(config.profile.fences[i].id)
            }
        }
        dirty = []
        if approachesChanged {
            changes.approaches = sortedApproaches
            approachesChanged = false
        }
        return changes
    }

    /// The next instant at which a deadline input is needed (a dwell coming due, a fence
    /// becoming active while inside with `initial: report`), if any.
    public var nextDeadline: UTCTime? {
        var best: UTCTime?
        for (i, record) in records {
            guard let due = dwellDue(record, fence: config.profile.fences[i]), !dwellHeld(record, due: due) else { continue }
            if best.map({ due < $0 }) ?? true { best = due }
        }
        for (_, known) in activity {
            if let change = known.change, best.map({ change < $0 }) ?? true { best = change }
        }
        return best
    }

    /// Whether fence `i` reports events at `time` (its `active:` windows; always without).
    public func isActive(fence i: Int, at time: UTCTime) -> Bool {
        guard config.scheduled, let schedule = config.profile.fences[i].active else { return true }
        return schedule.isActive(at: time, zone: config.zone)
    }

    /// Whether any fence has `active:` windows.
    public var hasSchedules: Bool { config.scheduled }

    /// When fence `i` next changes between active and inactive after `time`; nil: never.
    public func nextActivityChange(fence i: Int, after time: UTCTime) -> UTCTime? {
        config.profile.fences[i].active?.nextChange(after: time, zone: config.zone)
    }

    // MARK: - Inputs

    /// The band around a fix within which a fence's side is uncertain: accuracy + hysteresis.
    public func bandMeters(for fix: Fix) -> Double {
        fix.horizontalAccuracyMeters + hysteresisMeters
    }

    /// Processes one fix, looking its position up in the index (`FenceIndex.probe`).
    public mutating func fixReceived(_ fix: Fix) -> FixOutcome {
        let band = bandMeters(for: fix)
        let probe = config.index.probe(fix.coordinate, within: band.isFinite ? band : 0, band: band)
        return fixReceived(fix, geometry: FixGeometry(containing: probe.containing, band: probe.band))
    }

    /// Processes one fix whose position the caller looked up: `geometry` holds the fences
    /// containing the fix and those whose boundary is within `bandMeters(for: fix)`.
    public mutating func fixReceived(_ fix: Fix, geometry: FixGeometry) -> FixOutcome {
        guard fix.coordinate.isValid, fix.horizontalAccuracyMeters.isFinite, fix.horizontalAccuracyMeters >= 0 else {
            return FixOutcome(accepted: false, events: [])
        }
        if let last = lastFixTime, fix.time <= last {
            return FixOutcome(accepted: false, events: [])
        }
        lastFixTime = fix.time
        var events: [GeoEvent] = []
        fireWindowChanges(at: fix.time, into: &events)
        // A fix that decides nothing does not place a dwell either: the deadline's form then.
        let usable = isUsable(fix)
        fireDueDwells(at: fix.time, fix: usable ? fix : nil, into: &events)

        if usable {
            evaluateFences(fix, geometry: geometry, into: &events)
            usableFixCount = min(usableFixCount + 1, 1 << 40)
            if usableFixCount >= confirm { knownOutside = true }
            if config.approachReachMeters > 0 { evaluateApproach(fix, into: &events) }
            if locationEnabled { evaluateLocation(fix, into: &events) }
        }
        inputDone(at: fix.time)
        return FixOutcome(accepted: true, events: events)
    }

    /// A fix decides fences when it is coarse or at least as accurate as `min_accuracy`.
    public func isUsable(_ fix: Fix) -> Bool {
        fix.source == .coarse || fix.horizontalAccuracyMeters <= minAccuracyMeters
    }

    /// The unconfirmed change that started first, if any record holds one (ties: the fence
    /// first in the profile, so the answer never depends on the dictionary's order).
    public var earliestPending: PendingTransition? {
        Self.earliest(records.lazy.compactMap { key, record in record.pending.map { (key, $0) } })
    }

    private static func earliest(_ pending: some Sequence<(Int, PendingTransition)>) -> PendingTransition? {
        pending.min { ($0.1.firstTime, $0.0) < ($1.1.firstTime, $1.0) }?.1
    }

    /// True when fence `i` waits for fixes to confirm a change.
    public func isPending(fence i: Int) -> Bool { records[i]?.pending != nil }

    /// The unconfirmed change that started first among fences active at `time` (all fences
    /// without `active:` windows): what the power policy waits for.
    public func earliestPending(activeAt time: UTCTime) -> PendingTransition? {
        guard config.scheduled else { return earliestPending }
        return Self.earliest(records.lazy.filter { self.isActive(fence: $0.key, at: time) }.compactMap { key, record in record.pending.map { (key, $0) } })
    }

    /// True when a fence with a record is in the `unknown` state (touched during start-up).
    public var anyRecordUnknown: Bool { records.values.contains { $0.state == .unknown } }

    /// Fences currently inside, by id, sorted.
    public var insideFenceIDs: [String] {
        records.values.filter { $0.state == .inside }.map(\.fenceID).sorted()
    }

    /// The fences the device is inside whose stay is open for consumers: not one an `active:`
    /// window closed (its leave was reported), as of the last input.
    public var openInsideFenceIDs: [String] {
        records.compactMap { i, record in record.state == .inside && (activity[i]?.active ?? true) ? record.fenceID : nil }.sorted()
    }

    /// Processes a deadline (the shell's clock, or replay's virtual clock, reached `now`).
    public mutating func deadlineReached(at now: UTCTime) -> [GeoEvent] {
        var events: [GeoEvent] = []
        fireWindowChanges(at: now, into: &events)
        fireDueDwells(at: now, fix: nil, into: &events)
        inputDone(at: now)
        return events
    }

    // MARK: - Schedules

    /// The window changes of the scheduled fences the device is inside, up to `now`
    /// (docs/engine.md, "Schedules"): a closing while consumers were told inside reports
    /// `exit` at the closing instant (`EventRule.closed`); with `initial: report`, an opening
    /// while inside reports `enter` at the opening instant (`EventRule.activated`). Of several
    /// changes since the last input (a daemon stopped for days), the first closing and the last
    /// opening count, so the consumers' view ends as an uninterrupted run's does.
    private mutating func fireWindowChanges(at now: UTCTime, into events: inout [GeoEvent]) {
        guard !activity.isEmpty else { return }
        for i in activity.keys.sorted() {
            guard var known = activity[i], let first = known.change, first <= now, var record = records[i], record.state == .inside else { continue }
            var closing: UTCTime?
            var opening: UTCTime?
            var steps = 0
            while let change = known.change, change <= now, steps < Self.maxWindowChanges {
                let active = isActive(fence: i, at: change)
                if known.active && !active, closing == nil { closing = change }
                if !known.active && active { opening = change }
                known = (active, nextActivityChange(fence: i, after: change))
                steps += 1
            }
            activity[i] = known
            let fence = config.profile.fences[i]
            let before = record
            if let closing, record.reported {
                if let exit = closingExit(record, fence: fence, fenceName: record.name ?? fence.name, reason: .windowClosed, at: closing) { events.append(exit) }
                record.reported = false
            }
            if let opening, known.active, !record.reported, profile.transitions.initial == .report, fence.events.contains(.enter) {
                events.append(activation(record, fence: fence, at: opening))
                record.reported = true
                record.name = fence.name
            }
            if record != before {
                records[i] = record
                dirty.insert(i)
            }
        }
    }

    /// The most window changes one input walks through (a daemon stopped for long).
    static let maxWindowChanges = 1000

    /// The `enter` of a stay in `fence` that became active at `time` while inside.
    private func activation(_ record: FenceStateRecord, fence: Fence, at time: UTCTime) -> GeoEvent {
        makeEvent(.enter, fence: fence, time: time, coordinate: record.sinceCoordinate ?? Coordinate(latitude: 0, longitude: 0),
                  accuracy: record.sinceAccuracyMeters ?? 0, rule: .activated(insideSince: record.stateSince ?? time))
    }

    /// The `exit` that closes `record`'s stay at `time` (`fence` as the profile has it now; nil:
    /// gone, and its `events` with it). Where the fence's `events` leave `exit` out it is
    /// `unlisted`, for MQTT consumers only; without them, nil.
    private func closingExit(_ record: FenceStateRecord, fence: Fence?, fenceName: String?, reason: EventRule.ClosureReason, at time: UTCTime) -> GeoEvent? {
        let unlisted = fence.map { !$0.events.contains(.exit) } ?? false
        if unlisted, !config.publishesTransitions { return nil }
        var event = GeoEvent(
            id: EventID.make(profile: profile.name, fenceID: record.fenceID, kind: .exit, time: time),
            kind: .exit, fenceID: record.fenceID, fenceName: fenceName, time: time,
            coordinate: record.sinceCoordinate ?? Coordinate(latitude: 0, longitude: 0), accuracyMeters: record.sinceAccuracyMeters ?? 0,
            rule: .closed(EventRule.Closure(reason: reason, insideSince: record.stateSince)))
        event.figures = Self.timeInside(since: record.stateSince, until: time)
        event.unlisted = unlisted
        return event
    }

    /// An exit's figures: the time inside, from the stay's first inside fix to the exit's.
    static func timeInside(since: UTCTime?, until time: UTCTime) -> EventFigures? {
        guard let since else { return nil }
        var figures = EventFigures()
        figures.insideSeconds = max(0, (time - since).secondsValue)
        return figures
    }

    private mutating func inputDone(at now: UTCTime) {
        if lastInputTime.map({ now > $0 }) ?? true { lastInputTime = now }
        refreshActivity(at: now)
    }

    /// Each scheduled fence the device is inside: active at `now` or not, and when that next
    /// changes (looked for again only once the time passes it).
    private mutating func refreshActivity(at now: UTCTime) {
        guard config.scheduled else { return }
        var next: [Int: (active: Bool, change: UTCTime?)] = [:]
        for (i, record) in records where record.state == .inside && config.profile.fences[i].active != nil {
            if let known = activity[i], known.change.map({ $0 > now }) ?? true {
                next[i] = known
            } else {
                next[i] = (isActive(fence: i, at: now), nextActivityChange(fence: i, after: now))
            }
        }
        activity = next
    }

    // MARK: - Fences

    private enum Observation { case inside, outside, uncertain }

    private mutating func evaluateFences(_ fix: Fix, geometry: FixGeometry, into events: inout [GeoEvent]) {
        let point = fix.coordinate
        let margin = fix.horizontalAccuracyMeters + hysteresisMeters
        // Which fences need work: those with a record, those containing the point (a certain
        // inside fix is the only thing that changes a fence in the implicit `outside` state),
        // and, while the implicit state is still `unknown`, those within `margin` of the point
        // (an uncertain fix does not count towards confirming `outside`). Every other fence is
        // certainly outside and already in (or counted towards) the implicit state.
        var work: [(fence: Int, s: Double)] = []
        if !implicitOutside {
            for near in geometry.band where abs(near.signedDistanceMeters) <= margin {
                work.append((near.fence, near.signedDistanceMeters))
            }
        }
        for i in geometry.containing where !work.contains(where: { $0.fence == i }) { work.append((i, .nan)) }
        for i in records.keys where !work.contains(where: { $0.fence == i }) { work.append((i, .nan)) }
        if work.isEmpty { return }
        if work.count > 1 { work.sort { $0.fence < $1.fence } }
        for (i, known) in work {
            let s = known.isNaN ? config.index.signedDistance(fence: i, to: point) : known
            let observation: Observation = s <= -margin ? .inside : (s >= margin ? .outside : .uncertain)
            let before = records[i]
            var record = before ?? implicitRecord(fence: i, fix: fix)
            let fence = config.profile.fences[i]
            switch observation {
            case .uncertain:
                break
            case .inside, .outside:
                let observed: FenceState = observation == .inside ? .inside : .outside
                if observed == record.state {
                    record.pending = nil
                } else if record.pending?.state == observed {
                    record.pending?.count += 1
                } else {
                    record.pending = PendingTransition(
                        state: observed, count: 1, firstTime: fix.time, firstCoordinate: point,
                        firstAccuracyMeters: fix.horizontalAccuracyMeters, firstSignedDistanceMeters: s)
                }
                // The start-up's `unknown → outside` counts fixes only (docs/engine.md, rule 4).
                if let pending = record.pending, pending.count >= confirm,
                   (record.state == .unknown && pending.state == .outside) || fix.time - pending.firstTime >= config.confirmTime {
                    transition(&record, fence: fence, at: i, pending: pending, confirmedAt: fix.time, into: &events)
                }
                // A new stay whose dwell is already due, or a pending exit just cleared that
                // was holding the dwell.
                checkDwell(&record, fence: fence, index: i, at: fix.time, fix: fix, into: &events)
            }
            let implicit = record.state == .outside && record.pending == nil && (implicitOutside || usableFixCount + 1 >= confirm)
            if implicit {
                if before != nil {
                    records[i] = nil
                    dirty.insert(i)
                }
            } else if record != before {
                records[i] = record
                dirty.insert(i)
            }
        }
    }

    /// The record a fence without one is implicitly in, before `fix` is applied.
    private func implicitRecord(fence i: Int, fix: Fix) -> FenceStateRecord {
        let id = config.profile.fences[i].id
        if implicitOutside { return FenceStateRecord(fenceID: id, state: .outside) }
        var record = FenceStateRecord(fenceID: id, state: .unknown)
        if usableFixCount > 0 {
            // Every earlier usable fix was certainly outside this fence (it was not touched).
            record.pending = PendingTransition(
                state: .outside, count: usableFixCount, firstTime: fix.time, firstCoordinate: fix.coordinate,
                firstAccuracyMeters: fix.horizontalAccuracyMeters, firstSignedDistanceMeters: Double.infinity)
        }
        return record
    }

    private func transition(_ record: inout FenceStateRecord, fence: Fence, at i: Int, pending: PendingTransition, confirmedAt: UTCTime, into events: inout [GeoEvent]) {
        let old = record.state
        let insideSince = record.stateSince
        let wasReported = record.reported
        record.state = pending.state
        record.stateSince = pending.firstTime
        record.sinceCoordinate = pending.firstCoordinate
        record.sinceAccuracyMeters = pending.firstAccuracyMeters
        record.dwellCount = 0
        record.pending = nil
        record.reported = false
        record.name = nil
        record.fingerprint = nil
        if pending.state == .inside {
            record.name = fence.name
            record.fingerprint = fingerprint(fence: i)
        }
        let kind: EventKind
        switch (old, pending.state) {
        case (.outside, .inside):
            kind = .enter
        case (.unknown, .inside) where profile.transitions.initial == .report:
            kind = .enter
        case (.inside, .outside):
            kind = .exit
        default:
            return
        }
        var rule = EventRule.Transition(
            from: old, to: pending.state, initialReport: old == .unknown, confirmations: pending.count,
            firstSignedDistanceMeters: pending.firstSignedDistanceMeters,
            firstAccuracyMeters: pending.firstAccuracyMeters, hysteresisMeters: hysteresisMeters)
        rule.confirmTime = config.confirmTime
        rule.heldFor = confirmedAt - pending.firstTime
        // A scheduled fence inactive when the change is confirmed reports nothing: a closing
        // already closed the stay for consumers, and an opening reports it.
        guard isActive(fence: i, at: confirmedAt) else { return }
        // An exit the fence's `events` leave out still ends a stay whose enter was reported
        // (also under `events` a reload has since changed): MQTT consumers hold the device in
        // the region until its leave (`GeoEvent.unlisted`; no hook runs for it).
        let listed = fence.events.contains(kind)
        guard listed || (kind == .exit && wasReported && config.publishesTransitions) else { return }
        record.reported = kind == .enter
        var event = makeEvent(kind, fence: fence, time: pending.firstTime, coordinate: pending.firstCoordinate,
                              accuracy: pending.firstAccuracyMeters, rule: .transition(rule))
        event.unlisted = !listed
        if kind == .exit { event.figures = Self.timeInside(since: insideSince, until: pending.firstTime) }
        events.append(event)
    }

    // MARK: - Dwell

    /// When the next dwell of the stay comes due: `enter + dwell` for the first, then every
    /// `dwell.every` after it.
    private func dwellDue(_ record: FenceStateRecord, fence: Fence) -> UTCTime? {
        guard record.state == .inside, fence.events.contains(.dwell),
              let dwell = fence.dwell, let since = record.stateSince else { return nil }
        if record.dwellCount == 0 { return since + dwell }
        guard let every = fence.dwellEvery else { return nil }
        return since + dwell + every * record.dwellCount
    }

    /// The most dwells one input fires when several came due (a daemon that was stopped for
    /// long); the older ones are skipped and the count moves past them.
    public static let maxDwellCatchUp = 100

    /// An exit pending since before the dwell instant may still show the device left in time.
    private func dwellHeld(_ record: FenceStateRecord, due: UTCTime) -> Bool {
        if let pending = record.pending, pending.state == .outside, pending.firstTime < due { return true }
        return false
    }

    private mutating func fireDueDwells(at now: UTCTime, fix: Fix?, into events: inout [GeoEvent]) {
        guard !records.isEmpty else { return }
        // Cheap scan first: most fixes have no dwell coming due.
        var anyDue = false
        for (i, record) in records {
            if let due = dwellDue(record, fence: config.profile.fences[i]), now >= due { anyDue = true; break }
        }
        guard anyDue else { return }
        for i in records.keys.sorted() {
            guard var record = records[i] else { continue }
            let before = record
            checkDwell(&record, fence: config.profile.fences[i], index: i, at: now, fix: fix, into: &events)
            if record != before {
                records[i] = record
                dirty.insert(i)
            }
        }
    }

    /// Fires every dwell of the stay due at `now`: each on its own instant ("by deadline"),
    /// except that the last one due is fired by `fix` when a fix is the input. Event times are
    /// distinct (due instants, then the fix's), so each repetition has its own id.
    private func checkDwell(_ record: inout FenceStateRecord, fence: Fence, index i: Int, at now: UTCTime, fix: Fix?, into events: inout [GeoEvent]) {
        guard let first = dwellDue(record, fence: fence), now >= first, !dwellHeld(record, due: first),
              let since = record.stateSince, let dwell = fence.dwell else { return }
        if let every = fence.dwellEvery, every > .zero {
            // Skip repetitions beyond the catch-up limit.
            let due = Int(((now - first).secondsValue / every.secondsValue).rounded(.down)) + 1
            if due > Self.maxDwellCatchUp { record.dwellCount += due - Self.maxDwellCatchUp }
        }
        while let due = dwellDue(record, fence: fence), now >= due, !dwellHeld(record, due: due) {
            record.dwellCount += 1
            var rule = EventRule.Dwell(insideSince: since, dwell: dwell, byFix: false)
            rule.number = record.dwellCount
            rule.every = fence.dwellEvery
            let last = dwellDue(record, fence: fence).map { $0 > now } ?? true
            // An inactive fence's dwell is counted, not reported.
            guard isActive(fence: i, at: last && fix != nil ? now : due) else { continue }
            if let fix, last {
                rule.byFix = true
                events.append(makeEvent(.dwell, fence: fence, time: fix.time, coordinate: fix.coordinate,
                                        accuracy: fix.horizontalAccuracyMeters, rule: .dwell(rule)))
            } else {
                events.append(makeEvent(.dwell, fence: fence, time: due, coordinate: record.sinceCoordinate ?? Coordinate(latitude: 0, longitude: 0),
                                        accuracy: record.sinceAccuracyMeters ?? 0, rule: .dwell(rule)))
            }
        }
    }

    // MARK: - Approach

    /// Approach bands (docs/engine.md, "Approach"), for a usable fix after the fences were
    /// decided: every fence with `approach:` whose boundary is within twice its reach (the
    /// largest band and its reset), so that the fix before the device comes within reach
    /// gives a direction too.
    private mutating func evaluateApproach(_ fix: Fix, into events: inout [GeoEvent]) {
        // Beside GNSS, a coarse fix would put a scatter of kilometres into a fit that the newest
        // fix's accuracy judges: one could fake a whole approach. GNSS decides approaches then
        // (significant-change mode has only coarse fixes, alike).
        if fix.source == .coarse, profile.sources.gnss != nil, profile.mode != .significantChange { return }
        let tolerance = fix.horizontalAccuracyMeters + hysteresisMeters
        var seen: Set<Int> = []
        let near = config.index.near(fix.coordinate, within: 2 * config.approachReachMeters + tolerance)
            .sorted { $0.fence < $1.fence }
        for candidate in near {
            let i = candidate.fence
            let fence = config.profile.fences[i]
            guard let settings = fence.approach else { continue }
            seen.insert(i)
            let s = candidate.signedDistanceMeters
            let before = approaches[i]
            var record = before ?? ApproachRecord(fenceID: fence.id)
            let state = records[i]?.state ?? implicitState
            if state == .inside {
                // Inside ends the approach: every band waits until the device is certainly
                // beyond it by its reset distance again.
                record = ApproachRecord(fenceID: fence.id, fired: (1 << UInt32(settings.bandCount)) - 1)
            } else if s - tolerance >= 2 * settings.reachMeters(maxSpeed: config.maxSpeedMetersPerSecond) {
                setApproach(nil, at: i, before: before)
                continue
            } else {
                record.samples = Self.adding(ApproachSample(time: fix.time, signedDistanceMeters: s), to: record.samples, window: settings.window)
                let estimate = ApproachEstimate.of(record.samples, toleranceMeters: tolerance, minSpeed: settings.minSpeedMetersPerSecond)
                // Bits: the distance bands, then the ETA bands (as the distance they are
                // reachable from at max_speed, or at the closing speed when that is faster: a
                // device outrunning max_speed reaches an ETA band farther out, and must not
                // re-arm it on every fix of the same approach).
                let n = settings.bandsMeters.count
                let fastest = max(config.maxSpeedMetersPerSecond, estimate.closingSpeedMetersPerSecond)
                for k in 0..<settings.bandCount where record.fired & (1 << UInt32(k)) != 0 {
                    let band = settings.distance(ofBand: k, maxSpeed: k < n ? config.maxSpeedMetersPerSecond : fastest)
                    if s - tolerance >= band + settings.reset(forBand: band) { record.fired &= ~(1 << UInt32(k)) }
                }
                if estimate.direction == .towards, s > 0, isActive(fence: i, at: fix.time) {
                    let reached = settings.bandsMeters.indices.filter { record.fired & (1 << UInt32($0)) == 0 && s <= settings.bandsMeters[$0] }
                    // The ETA's lower bound: the certain distance over the closing speed.
                    let v = estimate.closingSpeedMetersPerSecond
                    let soonest = v > 0 ? max(0, s - tolerance) / v : .infinity
                    let reachedETA = settings.etaBands.indices.filter {
                        record.fired & (1 << UInt32(n + $0)) == 0 && soonest <= settings.etaBands[$0].secondsValue
                    }
                    if !reached.isEmpty || !reachedETA.isEmpty {
                        for k in reached { record.fired |= 1 << UInt32(k) }
                        for k in reachedETA { record.fired |= 1 << UInt32(n + k) }
                        events.append(approachEvent(fix, fence: fence, band: reached.last.map { settings.bandsMeters[$0] },
                                                    etaBand: reachedETA.last.map { settings.etaBands[$0] }, distance: s,
                                                    tolerance: tolerance, estimate: estimate, samples: record.samples))
                    }
                }
            }
            setApproach(record, at: i, before: before)
        }
        // Fences whose boundary is beyond every band's reach (or that the device is deep inside).
        for i in approaches.keys.sorted() where !seen.contains(i) {
            let state = records[i]?.state ?? implicitState
            if state != .inside { setApproach(nil, at: i, before: approaches[i]) }
        }
    }

    private mutating func setApproach(_ record: ApproachRecord?, at i: Int, before: ApproachRecord?) {
        guard record != before else { return }
        approaches[i] = record
        approachesChanged = true
    }

    /// `samples` with `sample` appended, thinned to at least `window / 8` apart (the newest
    /// always kept) and cut to the window plus the newest sample older than it.
    static func adding(_ sample: ApproachSample, to samples: [ApproachSample], window: Duration) -> [ApproachSample] {
        var result = samples
        result.append(sample)
        let n = result.count
        if n >= 3, result[n - 2].time - result[n - 3].time < window / 8 { result.remove(at: n - 2) }
        while result.count >= 2, result[1].time < sample.time - window { result.removeFirst() }
        return result
    }

    private func approachEvent(_ fix: Fix, fence: Fence, band: Double?, etaBand: Duration?, distance s: Double, tolerance: Double,
                               estimate: ApproachEstimate, samples: [ApproachSample]) -> GeoEvent {
        let v = estimate.closingSpeedMetersPerSecond
        let lower = max(0, s - tolerance)
        func seconds(_ value: Double) -> Duration? {
            guard value.isFinite, value >= 0, value < 1e9 else { return nil }
            return .milliseconds(Int64((value * 1000).rounded()))
        }
        let approach = EventRule.Approach(
            bandMeters: band, bandETA: etaBand, distanceMeters: s, distanceLowerBoundMeters: lower, direction: estimate.direction,
            closingSpeedMetersPerSecond: v, eta: v > 0 ? seconds(s / v) : nil,
            etaLowerBound: config.maxSpeedMetersPerSecond > 0 ? seconds(lower / max(config.maxSpeedMetersPerSecond, v)) : nil,
            samples: samples.count, span: (samples.last?.time ?? fix.time) - (samples.first?.time ?? fix.time))
        var event = makeEvent(.approach, fence: fence, time: fix.time, coordinate: fix.coordinate,
                              accuracy: fix.horizontalAccuracyMeters, rule: .approach(approach))
        event.approach = approach
        return event
    }

    // MARK: - Location

    private mutating func evaluateLocation(_ fix: Fix, into events: inout [GeoEvent]) {
        let settings = profile.significantChange
        let rule: EventRule.Location
        if let reference = location {
            let moved = Geodesy.haversineMeters(reference.coordinate, fix.coordinate)
            let elapsed = fix.time - reference.time
            guard moved >= settings.distanceMeters, elapsed >= settings.minInterval else { return }
            rule = EventRule.Location(movedMeters: moved, thresholdMeters: settings.distanceMeters,
                                      elapsed: elapsed, minInterval: settings.minInterval)
        } else {
            rule = EventRule.Location(movedMeters: nil, thresholdMeters: settings.distanceMeters,
                                      elapsed: nil, minInterval: settings.minInterval)
        }
        location = LocationReference(time: fix.time, coordinate: fix.coordinate)
        events.append(GeoEvent(
            id: EventID.make(profile: profile.name, fenceID: nil, kind: .location, time: fix.time),
            kind: .location, fenceID: nil, time: fix.time, coordinate: fix.coordinate,
            accuracyMeters: fix.horizontalAccuracyMeters, rule: .location(rule)))
    }

    // MARK: - Helpers

    private func makeEvent(_ kind: EventKind, fence: Fence, time: UTCTime, coordinate: Coordinate, accuracy: Double, rule: EventRule) -> GeoEvent {
        GeoEvent(
            id: EventID.make(profile: profile.name, fenceID: fence.id, kind: kind, time: time),
            kind: kind, fenceID: fence.id, fenceName: fence.name, time: time,
            coordinate: coordinate, accuracyMeters: accuracy, rule: rule)
    }
}
