public import GeomonCore
public import GeomonStore

/// Why a monitor cannot run on a database.
public struct MonitorError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Receives the events of each commit, after the commit: the seam where the hook delivery
/// worker plugs in (it then reads `EventStore.dueDeliveries`).
public protocol CommitObserver: AnyObject {
    func committed(_ events: [StoredEvent], monitor: Monitor) throws
}

/// Owns the transition engine and the store: inputs (fixes, deadlines) go in, are decided by
/// the pure engine, and are committed before anything acts on the resulting events.
///
/// Fixes are batched: a batch is committed every `batchSize` fixes, whenever an input produced
/// events (so events are durable before they are returned), and on `flush()`. The state in
/// the store always matches the last committed fix, so after a crash the fixes after it are
/// simply decided again, with the same result. The same Monitor runs replay (virtual clock)
/// and `geomon run` (real clock); `now` is whatever clock the caller runs on.
public final class Monitor {
    public let profile: Profile
    public let store: EventStore
    public private(set) var engine: TransitionEngine
    /// When false, events are stored without delivery rows (`replay --no-hooks`).
    public var recordDeliveries: Bool
    public var batchSize: Int
    /// When true (the default, and always when hooks or anything else acts on events), an
    /// input that decided events is committed at once, before the events are returned. When
    /// false, events ride with their batch and are returned when it commits: only for callers
    /// that do nothing with an event before it is committed anyway (replay without hooks).
    public var commitEventsImmediately = true
    public weak var observer: (any CommitObserver)?
    private var batch: CommitBatch
    private let hookTargets: HookTargets
    private var pendingKeyValues: [String: String] = [:]
    /// The last fix time known to be committed (the resume point).
    public private(set) var lastCommittedFixTime: UTCTime?

    public init(profile: Profile, store: EventStore, index: FenceIndex? = nil, recordDeliveries: Bool = true, batchSize: Int = 4096) throws {
        self.profile = profile
        self.store = store
        self.recordDeliveries = recordDeliveries
        self.batchSize = max(1, batchSize)
        hookTargets = HookTargets(profile: profile)
        store.keepFixes = profile.storage.keepFixes
        if let owner = try store.value(forKey: "profile"), owner != profile.name {
            throw MonitorError("\(store.path): the database belongs to profile '\(owner)', not '\(profile.name)'; use another --db")
        }
        let snapshot = try store.loadSnapshot()
        engine = TransitionEngine(profile: profile, index: index, snapshot: snapshot)
        lastCommittedFixTime = snapshot.lastFixTime
        lastFixTime = snapshot.lastFixTime
        nextDeadline = engine.nextDeadline
        batch = CommitBatch(profileName: profile.name, committedAt: UTCTime(millisecondsSince1970: 0))
        batch.fixes.reserveCapacity(self.batchSize)
    }

    /// The next instant the engine needs a deadline input (kept current after every input).
    public private(set) var nextDeadline: UTCTime?

    /// Time of the last fix the engine processed (committed or still in the batch).
    public private(set) var lastFixTime: UTCTime?

    /// State for the power policy (or any other collaborator) to persist with the next commit.
    public func setValue(_ value: String, forKey key: String) {
        pendingKeyValues[key] = value
    }

    /// Feeds one fix. Returns the events it decided, already committed; `accepted` is false
    /// when the engine ignored the fix (not newer than the last one).
    @discardableResult
    public func fixReceived(_ fix: Fix, now: UTCTime) throws -> (accepted: Bool, events: [StoredEvent]) {
        let outcome = engine.fixReceived(fix)
        guard outcome.accepted else { return (false, []) }
        lastFixTime = fix.time
        nextDeadline = engine.nextDeadline
        batch.fixes.append(fix)
        append(outcome.events)
        if (commitEventsImmediately && !outcome.events.isEmpty) || batch.fixes.count >= batchSize {
            return (true, try commit(now: now))
        }
        return (true, [])
    }

    /// Feeds a deadline (clock reached `now`); commits and returns any events.
    @discardableResult
    public func deadlineReached(at now: UTCTime) throws -> [StoredEvent] {
        let events = engine.deadlineReached(at: now)
        nextDeadline = engine.nextDeadline
        guard !events.isEmpty else { return [] }
        append(events)
        return commitEventsImmediately ? try commit(now: now) : []
    }

    /// Commits whatever is buffered.
    @discardableResult
    public func flush(now: UTCTime) throws -> [StoredEvent] {
        try commit(now: now)
    }

    private func append(_ events: [GeoEvent]) {
        for event in events {
            var targets: [DeliveryTarget] = []
            if recordDeliveries {
                targets = hookTargets.targets(for: event.kind)
            }
            batch.events.append((event, targets))
        }
    }

    private func commit(now: UTCTime) throws -> [StoredEvent] {
        batch.changes = engine.takeChanges()
        batch.keyValues = pendingKeyValues
        // For `geomon status`: the state of fences without a row.
        guard !batch.fixes.isEmpty || !batch.changes.isEmpty || !batch.events.isEmpty || !pendingKeyValues.isEmpty else { return [] }
        batch.keyValues["implicit_state"] = engine.implicitState.rawValue
        let snapshotScalars = engine.snapshot
        batch.usableFixCount = snapshotScalars.usableFixCount
        batch.lastFixTime = snapshotScalars.lastFixTime
        batch.location = snapshotScalars.location
        batch.committedAt = now
        let stored: [StoredEvent]
        do {
            stored = try store.commit(batch)
        } catch {
            // The engine is now ahead of the store; the caller must stop (a restart resumes
            // from the store's state and decides these fixes again).
            throw error
        }
        lastCommittedFixTime = batch.lastFixTime
        pendingKeyValues = [:]
        batch = CommitBatch(profileName: profile.name, committedAt: now)
        batch.fixes.reserveCapacity(batchSize)
        if !stored.isEmpty { try observer?.committed(stored, monitor: self) }
        return stored
    }
}
