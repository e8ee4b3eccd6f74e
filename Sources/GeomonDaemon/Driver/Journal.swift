public import GeomonCore
public import GeomonStore
import GeomonFormat
import GeomonSystem

/// Why a database cannot be used for a profile.
public struct JournalError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// When the journal's fixes are committed: the one rule, with the values `geomon run` and
/// `geomon replay` give it. Events never wait (when anything acts on them,
/// `Journal.commitEventsImmediately`); fixes wait in the open batch until the first of: `flushDelay` on the driver's clock after
/// the first one (a live run: `geomon status` and the store are at most that far behind the
/// receiver, and a transaction's fixed cost is paid at most once a second), `batchTime` of the
/// host's time (an unpaced replay, whose clock runs thousands of times faster than the host's:
/// a crash redoes at most that much work), `batchSize` fixes (a bound on memory).
public struct CommitCadence: Sendable, Equatable {
    public var flushDelay: Duration?
    public var batchTime: Duration?
    public var batchSize: Int

    /// `geomon run`, and a paced replay that publishes (its messages go out at a live run's pace).
    public static let live = CommitCadence(flushDelay: .seconds(1), batchTime: nil, batchSize: 4096)
    /// An unpaced replay.
    public static let replay = CommitCadence(flushDelay: nil, batchTime: .milliseconds(100), batchSize: 1 << 14)
}

/// The store side of the driver: the machine's commits, batched into SQLite transactions.
///
/// Fixes are batched: a batch is committed once it has been open for `batchTime` (when set,
/// replay's rule: a crash redoes at most that much work, and a transaction's fixed cost is
/// spread over that much), at the latest when it holds `batchSize` fixes (a bound on its
/// memory), whenever a commit carries events (when `commitEventsImmediately`, so events are
/// durable before anything acts on them), and on `flush`. The store always holds the state
/// after its last committed fix, so after a crash the inputs after it are simply decided
/// again, with the same result.
public final class Journal {
    public private(set) var profile: Profile
    public let store: EventStore
    /// What adds rows to the outboxes with each commit (hooks, MQTT), in order.
    public let outboxes: [any OutboxContributor]
    public var batchSize: Int
    /// The longest a batch stays open (monotonic time since its first fix), nil for no limit.
    public var batchTime: Duration?
    /// When the open batch took its first fix (monotonic µs).
    private var batchOpenedAt: Int64?
    /// Transactions committed, and the time spent in them (monotonic µs): `replay --stats`.
    public private(set) var commits = 0
    public private(set) var commitMicroseconds: Int64 = 0
    /// When true (the default, and always when hooks or anything else acts on events), a commit
    /// with events is written at once. When false, events ride with their batch: only for
    /// callers that do nothing with an event before it is committed anyway (replay without hooks).
    public var commitEventsImmediately = true
    /// The store refuses commits (`geomon run` retrying): `add` only buffers, and `flush` alone
    /// commits; the batch grows past `batchSize` meanwhile.
    public var holdsCommits = false
    /// The engine state stored when the journal opened (what a restart continues from).
    public let snapshot: EngineSnapshot
    private var batch: CommitBatch
    /// The last fix time known to be committed.
    public private(set) var lastCommittedFixTime: UTCTime?
    /// The receiver log's last row before this journal wrote any (its run's switches follow).
    private let receiverLogStart: Int64
    /// The engine's scalars after the last decision added (written with every commit).
    private var engine: EngineState

    /// - Parameter outboxes: what writes outbox rows with each commit: `HookOutbox` (hook
    ///   deliveries; not for `replay --no-hooks`), `OwnTracksOutbox` (MQTT, `geomon run` and
    ///   `replay --publish`).
    public init(profile: Profile, store: EventStore, outboxes: [any OutboxContributor] = [], batchSize: Int = 4096) throws {
        self.profile = profile
        self.store = store
        self.outboxes = outboxes
        self.batchSize = max(1, batchSize)
        store.keepFixes = profile.storage.keepFixes
        if let owner = try store.engineState()?.profile, owner != profile.name {
            throw JournalError("\(store.path): the database belongs to profile '\(owner)', not '\(profile.name)'; use another --db")
        }
        snapshot = try store.loadSnapshot()
        receiverLogStart = try store.receiverSwitchLog.lastRow()
        lastCommittedFixTime = snapshot.lastFixTime
        engine = EngineState(profile: profile.name, usableFixCount: snapshot.usableFixCount, lastFixTime: snapshot.lastFixTime, location: snapshot.location)
        batch = CommitBatch(profileName: profile.name, committedAt: UTCTime(millisecondsSince1970: 0))
        batch.fixes.reserveCapacity(self.batchSize)
    }

    /// A new profile for the same database (SIGHUP): later events get its hooks and messages.
    public func reload(profile: Profile) {
        self.profile = profile
        store.keepFixes = profile.storage.keepFixes
        for outbox in outboxes { outbox.reload(profile, store: store) }
    }

    /// The daemon's status, written with the next commit.
    public func setRuntimeStatus(_ status: RuntimeStatus) {
        batch.runtimeStatus = status
    }

    /// A GNSS receiver switch (a `.gnssOn` or `.gnssOff` action), stored with the next commit.
    public func record(_ action: PowerAction, at time: UTCTime) {
        switch action {
        case let .gnssOn(reason): batch.receiverSwitches.append(ReceiverSwitch(time: time, on: true, reason: reason.text))
        case let .gnssOff(reason): batch.receiverSwitches.append(ReceiverSwitch(time: time, on: false, reason: reason.text))
        case .wakeAt, .coarseOn, .coarseOff: break
        }
    }

    /// The run's time base moved by `shift` (`geomon run` before its first fix is on the
    /// system clock, then on the receiver's): the receiver switches this journal recorded so
    /// far, stored and pending, move with it, so the log holds one time base.
    public func timeBaseMoved(by shift: Duration) {
        for k in batch.receiverSwitches.indices { batch.receiverSwitches[k].time = batch.receiverSwitches[k].time + shift }
        let previous = batch.receiverLogShift?.by ?? .zero
        batch.receiverLogShift = (receiverLogStart, previous + shift)
    }

    /// Adds one decision's writes; when that committed (an event, a full batch), returns the
    /// events it committed, else nil.
    @discardableResult
    public func add(_ commit: Monitor.Commit, now: UTCTime) throws -> [StoredEvent]? {
        batch.fixes += commit.fixes
        batch.changes.merge(commit.changes)
        let first = batch.events.count
        for event in commit.events {
            var stored = event
            stored.rule = .recorded(event.rule.text)
            batch.events.append((stored, []))
        }
        for outbox in outboxes {
            outbox.drainQueued(into: &batch)
            outbox.add(commit, to: &batch, events: first..<batch.events.count)
        }
        engine.usableFixCount = commit.usableFixCount
        engine.lastFixTime = commit.lastFixTime ?? engine.lastFixTime
        engine.location = commit.location ?? engine.location
        engine.implicitState = commit.implicitState
        if let assumptions = commit.assumptions { batch.assumptions = assumptions }
        if let movement = commit.movement { batch.movement = movement }
        if let cooldowns = commit.cooldowns { batch.cooldowns = cooldowns }
        if let speeding = commit.speeding { batch.speeding = speeding }
        if let mode = commit.mode { batch.mode = mode }
        if !holdsCommits, (commitEventsImmediately && !commit.events.isEmpty) || batch.fixes.count >= batchSize || batchTimeIsUp() {
            return try flush(now: now)
        }
        return nil
    }

    /// True when the open batch has been open for `batchTime`. The clock is read every 64th
    /// fix of a batch (a batch of fewer fixes has a small cost anyway).
    private func batchTimeIsUp() -> Bool {
        guard let batchTime, !batch.fixes.isEmpty else { return false }
        let mono = batchOpenedAt ?? Monotonic.microseconds()
        if batchOpenedAt == nil { batchOpenedAt = mono; return false }
        guard batch.fixes.count % 64 == 0 else { return false }
        return Monotonic.microseconds() - mono >= batchTime.wholeMicroseconds
    }

    /// Commits whatever is buffered; returns the events it committed, nil when nothing was.
    @discardableResult
    public func flush(now: UTCTime) throws -> [StoredEvent]? {
        for outbox in outboxes { outbox.drainQueued(into: &batch) }
        guard !batch.isEmpty else { return nil }
        batch.usableFixCount = engine.usableFixCount
        batch.lastFixTime = engine.lastFixTime
        batch.location = engine.location
        batch.implicitState = engine.implicitState
        batch.committedAt = now
        // On a failure the machine is ahead of the store: the caller must stop (a restart
        // resumes from the store's state and decides these inputs again).
        let began = Monotonic.microseconds()
        let stored = try store.commit(batch)
        commitMicroseconds += Monotonic.microseconds() - began
        commits += 1
        lastCommittedFixTime = batch.lastFixTime
        batch = CommitBatch(profileName: profile.name, committedAt: now)
        batchOpenedAt = nil
        return stored
    }
}
