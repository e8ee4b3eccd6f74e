public import GeomonCore
public import GeomonStore
import GeomonFormat
import GeomonConfig

/// MQTT's messages in the OwnTracks format (`publish.mqtt`), written into the publications
/// outbox with each commit: the transitions, locations and fixes the profile publishes, with
/// the device's battery; and, queued by the MQTT service outside a decision, the `waypoints`
/// message (at start, after a reload, as a command's answer) and `reportLocation`'s answer.
public final class OwnTracksOutbox: OutboxContributor {
    private var ownTracks: OwnTracks?
    private var fences: [Fence]
    private var queued: [Publication] = []
    /// The fences the device was inside at the last commit (a location report's `inregions`).
    private var lastInside: Set<String> = []
    /// The newest fix published so far: the speed and course of messages without a fix of their own.
    private var lastPublishableFix: Fix?
    /// The `locations:` of the mode in effect at the last commit (nil: the profile's).
    private var lastLocations: MQTTSettings.Locations?

    /// The device's battery for the messages of the next commits (`geomon run` reads it; a
    /// replay has none).
    public var battery: BatteryStatus?

    public init(profile: Profile, store: EventStore) {
        fences = profile.fences
        reload(profile, store: store)
        // The newest fix a run before this one took: what a leave without a fix of its own
        // (a stay a restart on an edited profile closes) is followed by, as within a run.
        if let ownTracks, let fix = try? store.fixLog.last(), ownTracks.isPublishable(fix) { lastPublishableFix = fix }
    }

    /// Whether the profile publishes.
    public var publishes: Bool { ownTracks != nil }

    public func reload(_ profile: Profile, store: EventStore) {
        fences = profile.fences
        guard let mqtt = profile.publish.mqtt else {
            ownTracks = nil
            store.publicationLimits = nil
            return
        }
        let previous = ownTracks
        var next = OwnTracks(settings: mqtt, profile: profile)
        // A stay under way keeps the waypoint time its enter carried, for its leave.
        if let previous {
            // The stays under way: those the last commit had, and those resumed after a
            // restart (`resumeStays`) before any commit.
            for id in lastInside.union(previous.stayTimes.keys) {
                let time = previous.stayTimes[id] ?? previous.waypointTime(of: id)
                if time != next.waypointTime(of: id) { next.stayTimes[id] = time }
            }
        }
        ownTracks = next
        store.publicationLimits = PublicationLimits(maxRows: mqtt.maxPending, maxAge: mqtt.maxAge)
    }

    public func add(_ commit: Monitor.Commit, to batch: inout CommitBatch, events: Range<Int>) {
        guard let ownTracks else { return }
        batch.publications += ownTracks.messages(for: commit, inside: Set(commit.inside), battery: battery, lastFix: lastPublishableFix)
        // A stay's time is its enter's: closed by its exit, and never one an earlier stay left.
        for event in commit.events where (event.kind == .exit || event.kind == .enter) && !event.suppressed {
            if let id = event.fenceID { self.ownTracks?.stayTimes[id] = nil }
        }
        lastInside = Set(commit.inside)
        lastLocations = commit.locations
        if let fix = commit.fixes.last(where: ownTracks.isPublishable) { lastPublishableFix = fix }
    }

    public func drainQueued(into batch: inout CommitBatch) {
        guard !queued.isEmpty else { return }
        batch.publications += queued
        queued.removeAll()
    }

    /// Queues the `waypoints` message (the circle fences), which replaces one still pending;
    /// committed with the next flush.
    public func queueWaypoints(at time: UTCTime) {
        guard let ownTracks, ownTracks.settings.waypoints, let message = ownTracks.waypoints(fences: fences, at: time) else { return }
        queued.append(message)
    }

    /// After a restart: a stay its consumers were told of whose fence's waypoint changed since
    /// its enter (a server's `setWaypoints`) leaves with the `wtst` the enter carried, as it does
    /// while the daemon runs (`reload`): read from the transitions the outbox holds.
    public func resumeStays(store: EventStore) throws {
        guard let ownTracks else { return }
        // The profile publishes on this topic: a retirement of it still pending is taken back
        // (`MQTTService.open`), and ends no stay.
        let told = OwnTracksTold(history: try store.outbox.messagesSinceCleared(topic: ownTracks.settings.topic, transitionsOnly: true,
                                                                                withoutPendingRetirement: true))
        // Every one, also where it equals the waypoint's now: a reload before the first commit
        // (a `setWaypoints` the broker kept for the session) replaces the waypoint.
        for region in told.inside where ownTracks.stayTimes[region.id] == nil {
            if let wtst = region.wtst { self.ownTracks?.stayTimes[region.id] = wtst }
        }
    }

    /// A topic the profile left (`queueRetirements`).
    public struct Retirement {
        public var topic: String
        /// The regions its consumers are told the device left.
        public var regions: Int
        /// False: its messages went to another broker, which geomon cannot reach now; it is
        /// only marked retired.
        public var sent: Bool
    }

    /// Queues what each topic the profile left gets before it goes quiet (`OwnTracksRetirement`:
    /// leaves for the regions its consumers were last told the device is in, its retained
    /// messages cleared), committed with the next flush; `broker` is where messages go now.
    /// Nothing that would land on a topic the profile publishes on now is sent.
    public func queueRetirements(store: EventStore, broker: String) throws -> [Retirement] {
        guard let ownTracks else { return [] }
        let current: Set = [ownTracks.settings.topic, ownTracks.eventTopic, ownTracks.waypointsTopic, ownTracks.statusTopic]
        // Back on a topic whose retirement is queued and not committed yet: taken back.
        queued.removeAll { current.contains($0.topic) && ($0.kind == .clear || ($0.kind == .transition && $0.eventID == nil)) }
        let sameBroker = try store.outbox.lastBroker().map { $0 == broker } ?? true
        let refusal = "published on another broker before (\(broker) now): not sent to this one"
        // Another broker: what is still pending for an old topic (its backlog, a retirement
        // queued and not sent, which makes it count as retired below) goes to nobody.
        if !sameBroker { try store.outbox.refusePending(except: current, reason: refusal) }
        var retired: [Retirement] = []
        for old in try store.outbox.unretiredTopics(except: ownTracks.settings.topic) {
            let messages = OwnTracksRetirement.messages(retiring: old.topic, history: old.messages)
            let sendable = sameBroker ? messages.filter { !current.contains($0.topic) } : []
            queued += sendable
            // The clear on the old base topic marks it retired; stored as sent when it is not.
            if sendable.last?.topic != old.topic, let last = messages.last {
                try store.outbox.markRetired(old.topic, at: last.time, unsent: sameBroker ? nil : refusal)
            }
            retired.append(Retirement(topic: old.topic, regions: sendable.count { $0.kind == .transition }, sent: sameBroker))
        }
        try store.outbox.recordBroker(broker)
        return retired
    }

    /// A `location` message for `fix` in answer to a `reportLocation` command (trigger `r`),
    /// committed with the next flush; the fences the last commit had the device inside.
    /// A fix the engine would not use (worse than `sources.gnss.min_accuracy`) is no answer:
    /// false, nothing queued (the caller waits for the next fix), as no such fix is published.
    @discardableResult
    public func queueLocationReport(_ fix: Fix) -> Bool {
        guard let ownTracks, ownTracks.isPublishable(fix) else { return false }
        // Without a location stream not retained, as an event's location is not (`OwnTracks`).
        let retain = (lastLocations ?? ownTracks.settings.locations) != .none
        queued.append(ownTracks.location(fix, trigger: "r", inside: lastInside, battery: battery, retain: retain))
        return true
    }
}
