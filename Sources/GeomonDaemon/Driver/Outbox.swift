public import GeomonCore
public import GeomonStore

/// What adds rows to the outboxes in a commit's own transaction: the hooks' delivery rows
/// (`HookOutbox`), MQTT's messages (`OwnTracksOutbox`, beside the MQTT service). The journal
/// hands each decision's commit to every contributor, in order, and takes what they queued
/// outside a decision (a waypoints message, a location report) before the commit's own rows,
/// so the outbox keeps the order things happened in.
public protocol OutboxContributor: AnyObject {
    /// Adds this outbox's rows for `commit`, whose events are `batch.events[events]`.
    func add(_ commit: Monitor.Commit, to batch: inout CommitBatch, events: Range<Int>)
    /// Moves the rows queued since the last call into `batch`.
    func drainQueued(into batch: inout CommitBatch)
    /// A new profile for the same database (SIGHUP, pushed fences): later rows follow it.
    func reload(_ profile: Profile, store: EventStore)
}

extension OutboxContributor {
    public func drainQueued(into batch: inout CommitBatch) {}
}

/// Hook deliveries: one row per (event, hook) the profile lists for the event's kind.
public final class HookOutbox: OutboxContributor {
    private var targets: HookTargets

    public init(profile: Profile) {
        targets = HookTargets(profile: profile)
    }

    public func add(_ commit: Monitor.Commit, to batch: inout CommitBatch, events: Range<Int>) {
        // An event a cooldown held back is stored, not delivered; an exit the fence's `events`
        // leave out goes to MQTT only.
        for k in events where !batch.events[k].event.suppressed && !batch.events[k].event.unlisted {
            batch.events[k].targets = targets.targets(for: batch.events[k].event.kind)
        }
    }

    public func reload(_ profile: Profile, store: EventStore) {
        targets = HookTargets(profile: profile)
    }
}
