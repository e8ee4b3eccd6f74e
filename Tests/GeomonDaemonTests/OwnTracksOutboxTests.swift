import GeomonCore
import GeomonDaemon
import GeomonStore
import GeomonTestSupport
import Testing

/// The MQTT outbox across a reload: a stay under way when a server replaced its waypoint
/// leaves with the `wtst` its enter carried, so the server matches the leave to the waypoint
/// the device entered; the next enter carries the new waypoint's.
struct OwnTracksOutboxTests {
    static func profile(waypointTime: Int64) -> Profile {
        var profile = Profile(name: "van", mode: .continuous)
        var fence = Fence(id: "depot", shape: .circle(center: Coordinate(latitude: 47, longitude: 8), radiusMeters: 100))
        fence.waypointTime = waypointTime
        profile.fences = [fence]
        profile.publish.mqtt = MQTTSettings(host: "broker", topic: "owntracks/geomon/van")
        return profile
    }

    static func event(_ kind: EventKind, at seconds: Int64) -> GeoEvent {
        GeoEvent(id: "\(kind.rawValue)\(seconds)", kind: kind, fenceID: "depot", time: UTCTime(millisecondsSince1970: seconds * 1000),
                 coordinate: Coordinate(latitude: 47, longitude: 8), accuracyMeters: 5, rule: .recorded("t"))
    }

    /// `event` committed through `outbox` into `store`'s outbox: the transitions it queued.
    static func commit(_ store: EventStore, _ outbox: OwnTracksOutbox, _ event: GeoEvent, inside: [String]) throws -> [String] {
        var commit = Monitor.Commit()
        commit.events = [event]
        commit.inside = inside
        var batch = CommitBatch(profileName: "van", committedAt: event.time)
        outbox.add(commit, to: &batch, events: 0..<1)
        try store.outbox.enqueue(batch.publications, at: event.time)
        return batch.publications.filter { $0.kind == .transition }.map(\.payload)
    }

    /// A leave without a fix of its own right after a restart (a stay the edited profile no
    /// longer has, closed at the start) is followed by the newest fix the run before took, as
    /// within a run: the retained location no longer lists the region.
    @Test func aLeaveWithoutAFixAfterARestartIsFollowedByTheStoredFix() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("van.db"))
        var batch = CommitBatch(profileName: "van", committedAt: UTCTime(millisecondsSince1970: 1000))
        batch.fixes = [Fix(time: UTCTime(millisecondsSince1970: 1000), coordinate: Coordinate(latitude: 47.001, longitude: 8), horizontalAccuracyMeters: 5)]
        _ = try store.commit(batch)
        let outbox = OwnTracksOutbox(profile: Self.profile(waypointTime: 1_600_000_000), store: store)
        var commit = Monitor.Commit()
        commit.events = [Self.event(.exit, at: 2000)]
        var closing = CommitBatch(profileName: "van", committedAt: UTCTime(millisecondsSince1970: 2_000_000))
        outbox.add(commit, to: &closing, events: 0..<1)
        #expect(closing.publications.map(\.kind) == [.transition, .location])
        let location = try #require(closing.publications.last)
        #expect(!location.payload.contains("inregions") && location.payload.contains(#""lat":47.001"#), "\(location.payload)")
    }

    /// `reportLocation` is answered with a fix the engine uses, never one worse than
    /// `min_accuracy` (publish.md: no such fix is published, whatever the setting).
    @Test func aFixTooPoorToUseAnswersNoReportLocation() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("van.db"))
        var profile = Self.profile(waypointTime: 1_600_000_000)
        var gnss = GNSSSourceSettings()
        gnss.minAccuracyMeters = 50
        profile.sources.gnss = gnss
        let outbox = OwnTracksOutbox(profile: profile, store: store)
        var fix = Fix(time: UTCTime(millisecondsSince1970: 5000), coordinate: Coordinate(latitude: 47, longitude: 8), horizontalAccuracyMeters: 150)
        #expect(!outbox.queueLocationReport(fix))
        var batch = CommitBatch(profileName: "van", committedAt: fix.time)
        outbox.drainQueued(into: &batch)
        #expect(batch.publications.isEmpty)
        fix.horizontalAccuracyMeters = 20
        #expect(outbox.queueLocationReport(fix))
        outbox.drainQueued(into: &batch)
        #expect(batch.publications.map(\.kind) == [.location] && batch.publications.first?.payload.contains(#""t":"r""#) == true)
        #expect(batch.publications.first?.retain == true)
        // Without a location stream the answer is not retained, as an event's location is not.
        profile.publish.mqtt?.locations = .none
        let quiet = OwnTracksOutbox(profile: profile, store: store)
        #expect(quiet.queueLocationReport(fix))
        var answer = CommitBatch(profileName: "van", committedAt: fix.time)
        quiet.drainQueued(into: &answer)
        #expect(answer.publications.map(\.retain) == [false])
    }

    @Test func aLeaveAfterTheWaypointWasReplacedCarriesItsEntersTime() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("van.db"))
        let outbox = OwnTracksOutbox(profile: Self.profile(waypointTime: 1_600_000_000), store: store)
        func transitions(_ event: GeoEvent, inside: [String]) -> [String] {
            var commit = Monitor.Commit()
            commit.events = [event]
            commit.inside = inside
            var batch = CommitBatch(profileName: "van", committedAt: event.time)
            outbox.add(commit, to: &batch, events: 0..<1)
            return batch.publications.filter { $0.kind == .transition }.map(\.payload)
        }
        #expect(transitions(Self.event(.enter, at: 1000), inside: ["depot"]).first?.contains(#""wtst":1600000000"#) == true)
        // The server replaces the waypoint (a new tst) while the device is inside.
        outbox.reload(Self.profile(waypointTime: 1_700_000_000), store: store)
        let leave = transitions(Self.event(.exit, at: 2000), inside: [])
        #expect(leave.first?.contains(#""event":"leave""#) == true && leave.first?.contains(#""wtst":1600000000"#) == true, "\(leave)")
        let enter = transitions(Self.event(.enter, at: 3000), inside: ["depot"])
        #expect(enter.first?.contains(#""wtst":1700000000"#) == true, "\(enter)")
    }

    /// An enter and the exit after it in one commit (a batch of fixes): the exit carries the
    /// stay's own `wtst`, not the one an earlier stay kept across a waypoint's replacement.
    @Test func anExitAfterAnEnterInTheSameCommitCarriesTheNewStaysTime() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("van.db"))
        let outbox = OwnTracksOutbox(profile: Self.profile(waypointTime: 1_600_000_000), store: store)
        func transitions(_ events: [GeoEvent], inside: [String]) -> [String] {
            var commit = Monitor.Commit()
            commit.events = events
            commit.inside = inside
            var batch = CommitBatch(profileName: "van", committedAt: events[0].time)
            outbox.add(commit, to: &batch, events: 0..<events.count)
            return batch.publications.filter { $0.kind == .transition }.map(\.payload)
        }
        _ = transitions([Self.event(.enter, at: 1000)], inside: ["depot"])
        outbox.reload(Self.profile(waypointTime: 1_700_000_000), store: store)
        let three = transitions([Self.event(.exit, at: 2000), Self.event(.enter, at: 3000), Self.event(.exit, at: 4000)], inside: [])
        #expect(three.map { $0.contains(#""wtst":1600000000"#) } == [true, false, false], "\(three)")
        #expect(three.map { $0.contains(#""wtst":1700000000"#) } == [false, true, true], "\(three)")
    }

    /// The same across a restart: the enter's `wtst` is read back from the outbox.
    @Test func aLeaveAfterARestartOnAReplacedWaypointCarriesItsEntersTime() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("van.db"))
        _ = try Self.commit(store, OwnTracksOutbox(profile: Self.profile(waypointTime: 1_600_000_000), store: store), Self.event(.enter, at: 1000), inside: ["depot"])
        // Restarted on the same waypoint, which the server replaces before the first commit
        // (a `setWaypoints` the broker kept for the session: a reload).
        let restarted = OwnTracksOutbox(profile: Self.profile(waypointTime: 1_600_000_000), store: store)
        try restarted.resumeStays(store: store)
        restarted.reload(Self.profile(waypointTime: 1_700_000_000), store: store)
        let leave = try Self.commit(store, restarted, Self.event(.exit, at: 2000), inside: [])
        #expect(leave.first?.contains(#""wtst":1600000000"#) == true, "\(leave)")
        let enter = try Self.commit(store, restarted, Self.event(.enter, at: 3000), inside: ["depot"])
        #expect(enter.first?.contains(#""wtst":1700000000"#) == true, "\(enter)")
        // And again, with the stay closed: nothing to resume.
        let again = OwnTracksOutbox(profile: Self.profile(waypointTime: 1_800_000_000), store: store)
        try again.resumeStays(store: store)
        let next = try Self.commit(store, again, Self.event(.exit, at: 4000), inside: [])
        #expect(next.first?.contains(#""wtst":1700000000"#) == true, "\(next)")
    }

    /// Restarted back on a topic whose retirement was queued and has not gone out (the broker
    /// was away): the retirement is taken back, so its stays go on, and a leave under a waypoint
    /// replaced since carries its enter's `wtst`. The pending leaves and clear of that
    /// retirement end no stay, whether the start reads the stays before the withdrawal or after.
    @Test func aRestartBackOnATopicWhoseRetirementIsPendingResumesItsStays() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("van.db"))
        let van = Self.profile(waypointTime: 1_600_000_000)
        _ = try Self.commit(store, OwnTracksOutbox(profile: van, store: store), Self.event(.enter, at: 1000), inside: ["depot"])
        try store.outbox.markPublished(try store.outbox.pendingPublications(after: 0, limit: 10).map(\.seq), at: UTCTime(millisecondsSince1970: 1_000_000))
        // Restarted on another topic: the old one's retirement is queued; the broker is away.
        var lorry = van
        lorry.publish.mqtt?.topic = "owntracks/geomon/lorry"
        let moved = OwnTracksOutbox(profile: lorry, store: store)
        #expect(try moved.queueRetirements(store: store, broker: "broker:1883").map(\.regions) == [1])
        var batch = CommitBatch(profileName: "van", committedAt: UTCTime(millisecondsSince1970: 1_500_000))
        moved.drainQueued(into: &batch)
        try store.outbox.enqueue(batch.publications, at: batch.committedAt)
        #expect(try store.outbox.pendingPublications(after: 0, limit: 10).contains { $0.publication.kind == .clear })
        // Back on the old topic, whose server replaced the waypoint before the first commit.
        let back = OwnTracksOutbox(profile: van, store: store)
        try back.resumeStays(store: store)
        try store.outbox.withdrawRetirement(of: van.publish.mqtt!.topic)
        back.reload(Self.profile(waypointTime: 1_700_000_000), store: store)
        let leave = try Self.commit(store, back, Self.event(.exit, at: 2000), inside: [])
        #expect(leave.first?.contains(#""wtst":1600000000"#) == true, "\(leave)")
    }

    /// With `locations: none` a region's enter is all that says the device is in it. Entered
    /// longer ago than the outbox's bound keeps messages, and the profile then moved to another
    /// topic: the old topic's consumers still get its leave (the newest transition of each
    /// region outlives the bound).
    @Test func aRegionEnteredBeforeTheBoundIsLeftWhenTheTopicChanges() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("van.db"))
        var profile = Self.profile(waypointTime: 1_600_000_000)
        profile.publish.mqtt?.maxPending = 4
        profile.publish.mqtt?.maxAge = .seconds(60)
        profile.fences.append(Fence(id: "yard", shape: .circle(center: Coordinate(latitude: 47.01, longitude: 8), radiusMeters: 100)))
        profile.publish.mqtt?.locations = .none
        let outbox = OwnTracksOutbox(profile: profile, store: store)
        func commit(_ kind: EventKind, _ fence: String, at seconds: Int64, inside: [String]) throws {
            var commit = Monitor.Commit()
            var event = Self.event(kind, at: seconds)
            event.fenceID = fence
            event.id = "\(fence)-\(kind.rawValue)\(seconds)"
            commit.events = [event]
            commit.inside = inside
            var batch = CommitBatch(profileName: "van", committedAt: event.time)
            outbox.add(commit, to: &batch, events: 0..<1)
            try store.outbox.enqueue(batch.publications, at: event.time)
            try store.outbox.markPublished(try store.outbox.pendingPublications(after: 0, limit: 10).map(\.seq), at: event.time)
        }
        try commit(.enter, "depot", at: 1000, inside: ["depot"])
        // Hours of visits to the yard, all published: the depot's enter is far beyond the bound.
        for k in 1...6 {
            try commit(.enter, "yard", at: 1000 + Int64(k) * 3600, inside: ["depot", "yard"])
            try commit(.exit, "yard", at: 1000 + Int64(k) * 3600 + 600, inside: ["depot"])
        }
        // The bound dropped the earlier visits; the depot's enter is kept.
        let kept = try store.outbox.publications(includingPublished: true, limit: 100)
        #expect(kept.count < 13 && kept.first?.publication.eventID == "depot-enter1000", "\(kept.map(\.publication.eventID))")
        profile.publish.mqtt?.topic = "owntracks/geomon/lorry"
        outbox.reload(profile, store: store)
        let moved = try outbox.queueRetirements(store: store, broker: "broker:1883")
        #expect(moved.map(\.regions) == [1])
        var batch = CommitBatch(profileName: "van", committedAt: UTCTime(millisecondsSince1970: 30_000_000))
        outbox.drainQueued(into: &batch)
        let leaves = batch.publications.filter { $0.kind == .transition }.map(\.payload)
        #expect(leaves.count == 1 && leaves.first?.contains(#""event":"leave""#) == true && leaves.first?.contains(#""rid":"depot""#) == true, "\(leaves)")
    }

    /// A retirement queued for the old broker and not sent (it was away), then a move to
    /// another broker: the retirement, and any backlog of the old topic, goes to nobody — not
    /// to the new broker, whose consumers never heard of the old topic.
    @Test func aRetirementPendingForTheOldBrokerIsNotSentToTheNewOne() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("van.db"))
        var profile = Self.profile(waypointTime: 1_600_000_000)
        let old = "owntracks/geomon/van"
        let outbox = OwnTracksOutbox(profile: profile, store: store)
        _ = try Self.commit(store, outbox, Self.event(.enter, at: 1000), inside: ["depot"])
        try store.outbox.markPublished(try store.outbox.pendingPublications(after: 0, limit: 10).map(\.seq), at: UTCTime(millisecondsSince1970: 1000))
        try store.outbox.recordBroker("broker:1883")
        // Another topic on the same broker, which is away: the leave and the clear wait.
        profile.publish.mqtt = MQTTSettings(host: "broker", topic: "owntracks/geomon/lorry")
        outbox.reload(profile, store: store)
        #expect(try outbox.queueRetirements(store: store, broker: "broker:1883").map(\.sent) == [true])
        var batch = CommitBatch(profileName: "van", committedAt: UTCTime(millisecondsSince1970: 2000))
        outbox.drainQueued(into: &batch)
        try store.outbox.enqueue(batch.publications, at: UTCTime(millisecondsSince1970: 2000))
        let pending = try store.outbox.pendingPublications(after: 0, limit: 10).map(\.publication)
        #expect(pending.map(\.topic).allSatisfy { $0.hasPrefix(old) } && pending.contains { $0.kind == .clear } && pending.contains { $0.kind == .transition },
                "\(pending.map { "\($0.kind) \($0.topic)" })")
        // Then another broker too.
        profile.publish.mqtt = MQTTSettings(host: "other", topic: "owntracks/geomon/lorry")
        outbox.reload(profile, store: store)
        _ = try outbox.queueRetirements(store: store, broker: "other:1883")
        #expect(try store.outbox.pendingPublicationCount() == 0)
        #expect(try store.outbox.unretiredTopics(except: "owntracks/geomon/lorry").isEmpty)
        #expect(try store.outbox.publications(includingPublished: true, limit: 20).compactMap(\.refused).count == pending.count)
    }

    /// A topic last published on another broker is only marked retired (geomon cannot reach
    /// that broker and sends nothing in its name to this one); nothing is sent onto a topic the
    /// profile publishes on now, and the topic is still marked retired.
    @Test func aTopicOnAnotherBrokerOrUnderTheCurrentOneIsMarkedRetiredWithoutASend() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("van.db"))
        var profile = Self.profile(waypointTime: 1_600_000_000)
        let location = #"{"_type":"location","acc":5,"inregions":["Depot"],"inrids":["depot"],"lat":47,"lon":8,"tst":1}"#
        func publish(on topic: String) throws {
            try store.outbox.enqueue([Publication(kind: .location, topic: topic, payload: location, retain: true,
                                                  time: UTCTime(millisecondsSince1970: 1000))], at: UTCTime(millisecondsSince1970: 1000))
        }
        func queued(_ outbox: OwnTracksOutbox) -> [Publication] {
            var batch = CommitBatch(profileName: "van", committedAt: UTCTime(millisecondsSince1970: 2000))
            outbox.drainQueued(into: &batch)
            return batch.publications
        }
        let old = "owntracks/geomon/van"
        try publish(on: old)
        try store.outbox.markPublished(try store.outbox.pendingPublications(after: 0, limit: 10).map(\.seq), at: UTCTime(millisecondsSince1970: 1000))
        // One still pending for the old broker: done with, refused, never sent to the new one.
        try publish(on: old)
        // Moved to another topic and another broker.
        profile.publish.mqtt = MQTTSettings(host: "other", topic: "owntracks/geomon/lorry")
        try store.outbox.recordBroker("broker:1883")
        let outbox = OwnTracksOutbox(profile: profile, store: store)
        let moved = try outbox.queueRetirements(store: store, broker: "other:1883")
        #expect(moved.map(\.topic) == [old] && moved.map(\.sent) == [false])
        #expect(queued(outbox).isEmpty)
        #expect(try store.outbox.unretiredTopics(except: "owntracks/geomon/lorry").isEmpty)
        #expect(try store.outbox.lastBroker() == "other:1883")
        #expect(try store.outbox.pendingPublicationCount() == 0)
        #expect(try store.outbox.publications(includingPublished: true, limit: 10).compactMap(\.refused)
                == ["published on another broker before (other:1883 now): not sent to this one"])
        // The marker is not a message: `geomon publish retry --since` does not send it.
        #expect(try store.outbox.requeuePublications(since: UTCTime(millisecondsSince1970: 0)) == 2)
        #expect(try store.outbox.pendingPublications(after: 0, limit: 10).allSatisfy { $0.publication.kind == .location })
        try store.outbox.markPublished(try store.outbox.pendingPublications(after: 0, limit: 10).map(\.seq), at: UTCTime(millisecondsSince1970: 1000))
        // Same broker; the new topic is the old one's `/waypoints`: its leave goes, its clear
        // of `/waypoints` (now the profile's location topic) does not.
        try publish(on: "owntracks/geomon/lorry")
        profile.publish.mqtt = MQTTSettings(host: "other", topic: "owntracks/geomon/lorry/waypoints")
        outbox.reload(profile, store: store)
        let nested = try outbox.queueRetirements(store: store, broker: "other:1883")
        #expect(nested.map(\.sent) == [true] && nested.map(\.regions) == [1])
        #expect(queued(outbox).map(\.topic) == ["owntracks/geomon/lorry/event", "owntracks/geomon/lorry/status", "owntracks/geomon/lorry"])
        // Again: nothing more (the queued clear is not committed here; the start after a crash
        // would queue it again, and that is all).
        #expect(try store.outbox.unretiredTopics(except: "owntracks/geomon/lorry/waypoints").map(\.topic) == ["owntracks/geomon/lorry"])
    }
}
