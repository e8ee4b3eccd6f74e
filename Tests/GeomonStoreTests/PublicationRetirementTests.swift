import GeomonCore
@testable import GeomonStore
import GeomonTestSupport
import Testing

/// The outbox's side of leaving a topic: which topics a changed profile left still have
/// consumers to tell, and the migration that lets it store the `clear` messages.
struct PublicationRetirementTests {
    static func message(_ kind: Publication.Kind, _ topic: String, _ payload: String = "{}", at seconds: Int64) -> Publication {
        Publication(kind: kind, topic: topic, payload: payload, retain: kind != .transition, time: UTCTime(millisecondsSince1970: seconds * 1000))
    }

    @Test func aTopicIsUnretiredUntilItsBaseIsClearedAndAgainOnceItIsUsedAgain() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("d.db"))
        let (a, b) = ("owntracks/u/a", "owntracks/u/b")
        let now = UTCTime(millisecondsSince1970: 2_000_000)
        try store.outbox.enqueue([Self.message(.waypoints, a + "/waypoints", at: 1), Self.message(.transition, a + "/event", at: 2),
                                  Self.message(.location, a, at: 3), Self.message(.location, b, at: 4), Self.message(.transition, b + "/event", at: 5)],
                                 at: now)
        #expect(try store.outbox.unretiredTopics(except: b).map(\.topic) == [a])
        #expect(try store.outbox.unretiredTopics(except: b).first?.messages.map(\.kind) == [.waypoints, .transition, .location])
        #expect(try store.outbox.unretiredTopics(except: a).map(\.topic) == [b])
        // Cleared: the waypoints' clear alone does not retire it; the base topic's does.
        try store.outbox.enqueue([Self.message(.clear, a + "/waypoints", "", at: 3)], at: now)
        #expect(try store.outbox.unretiredTopics(except: b).map(\.topic) == [a])
        try store.outbox.enqueue([Self.message(.clear, a, "", at: 3)], at: now)
        #expect(try store.outbox.unretiredTopics(except: b).isEmpty)
        // Published on again (the profile went back to it, and left it again): only what came since.
        try store.outbox.enqueue([Self.message(.location, a, at: 9)], at: now)
        #expect(try store.outbox.unretiredTopics(except: b).map { $0.messages.map(\.time) } == [[UTCTime(millisecondsSince1970: 9000)]])
    }

    /// A broker that lost the session gets the last retained location again, not when a
    /// transition came after it: its `inregions` is stale, and Home Assistant, told of the
    /// leave, would take its position and put the device back in the zone it left.
    @Test func aLocationATransitionCameAfterIsNotPublishedAgain() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("d.db"))
        let topic = "owntracks/u/a"
        let now = UTCTime(millisecondsSince1970: 2_000_000)
        try store.outbox.enqueue([Self.message(.waypoints, topic + "/waypoints", at: 1), Self.message(.location, topic, #"{"inregions":["Home"]}"#, at: 2)], at: now)
        try store.outbox.markPublished(try store.outbox.pendingPublications(after: 0, limit: 10).map(\.seq), at: now)
        // A retirement's leave (no event: the profile left the topic) says nothing of where the
        // device is: the location goes again when the profile is back on the topic.
        try store.outbox.enqueue([Self.message(.transition, topic + "/event", #"{"event":"leave"}"#, at: 3)], at: now)
        try store.outbox.markPublished(try store.outbox.pendingPublications(after: 0, limit: 10).map(\.seq), at: now)
        #expect(try store.outbox.requeueRetained(at: now, topics: [topic]) == 1)
        try store.outbox.markPublished(try store.outbox.pendingPublications(after: 0, limit: 10).map(\.seq), at: now)
        // An event's leave, not yet sent when the connection comes back without the session.
        var leave = Self.message(.transition, topic + "/event", #"{"event":"leave"}"#, at: 3)
        leave.eventID = "exit3"
        try store.outbox.enqueue([leave], at: now)
        #expect(try store.outbox.requeueRetained(at: now, topics: [topic, topic + "/waypoints"]) == 1)
        #expect(try store.outbox.pendingPublications(after: 0, limit: 10).map(\.publication.kind) == [.transition, .waypoints])
        // A location after the transition is the current one: published again.
        try store.outbox.enqueue([Self.message(.location, topic, at: 4)], at: now)
        try store.outbox.markPublished(try store.outbox.pendingPublications(after: 0, limit: 10).map(\.seq), at: now)
        #expect(try store.outbox.requeueRetained(at: now, topics: [topic]) == 1)
        #expect(try store.outbox.pendingPublications(after: 0, limit: 10).map(\.publication.time) == [UTCTime(millisecondsSince1970: 4000)])
    }

    /// Reading the broker leaves no statement open: an open one keeps the connection's read
    /// transaction, so after another connection's write (`geomon fences here` beside the
    /// daemon) every commit failed on a stale snapshot, and the WAL was never checkpointed.
    @Test func readingTheBrokerLeavesNoReadTransactionOpen() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let daemon = try EventStore(path: dir.path("d.db"))
        try daemon.outbox.recordBroker("broker:1883")
        #expect(try daemon.outbox.lastBroker() == "broker:1883")
        let other = try EventStore(path: dir.path("d.db"))
        try other.outbox.recordBroker("other:1883")
        var batch = CommitBatch(profileName: "p", committedAt: UTCTime(millisecondsSince1970: 1000))
        batch.publications = [Self.message(.location, "owntracks/u/a", at: 1)]
        _ = try daemon.commit(batch)
        #expect(try daemon.outbox.lastBroker() == "other:1883")
        #expect(try daemon.outbox.pendingPublicationCount() == 1)
    }

    /// A database of schema 13 (before `clear`): its messages, their numbers and the
    /// AUTOINCREMENT counter (past a deleted newest row) survive; a `clear` is then accepted.
    @Test func theMigrationKeepsTheOutboxAndItsCounter() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("old.db")
        do {
            let db = try Connection(path: path)
            for step in Migrations.all.prefix(13) {
                try db.execute(step.sql)
                try step.code?(db)
            }
            try db.execute("PRAGMA user_version = 13")
            try db.execute("""
                INSERT INTO publications (kind, topic, payload, retain, time_ms, event_id, created_at_ms, published_at_ms, refused)
                VALUES ('location', 'owntracks/u/a', '{"a":1}', 1, 1000, NULL, 5, 6, NULL),
                       ('transition', 'owntracks/u/a/event', '{"b":2}', 0, 2000, 'e1', 5, 6, 'no'),
                       ('location', 'owntracks/u/a', '{"c":3}', 1, 3000, NULL, 5, NULL, NULL);
                DELETE FROM publications WHERE seq = 3;
                """)
            #expect(throws: (any Error).self) {
                try db.execute("INSERT INTO publications (kind, topic, payload, retain, time_ms, created_at_ms) VALUES ('clear', 't', '', 1, 1, 1)")
            }
        }
        let store = try EventStore(path: path)
        #expect(try store.userVersion() == EventStore.schemaVersion)
        let rows = try store.outbox.publications(includingPublished: true, limit: 10)
        #expect(rows.map(\.seq) == [1, 2])
        #expect(rows.map(\.publication.payload) == [#"{"a":1}"#, #"{"b":2}"#])
        #expect(rows[1].refused == "no" && rows[1].publication.eventID == "e1" && rows[0].publishedAt != nil)
        try store.outbox.enqueue([Self.message(.clear, "owntracks/u/a", "", at: 4)], at: UTCTime(millisecondsSince1970: 7))
        let after = try store.outbox.publications(includingPublished: true, limit: 10)
        #expect(after.last?.seq == 4)
        #expect(after.last?.publication.kind == .clear)
        #expect(try store.outbox.pendingPublications(after: 0, limit: 10).map(\.seq) == [4])
    }

    /// The outbox's bound drops published messages, never a `clear`: it is what marks its
    /// topic retired.
    @Test func theBoundNeverDropsAClear() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("d.db"))
        store.publicationLimits = PublicationLimits(maxRows: 3, maxAge: .seconds(60))
        let now = UTCTime(millisecondsSince1970: 0)
        try store.outbox.enqueue([Self.message(.location, "old", at: 1), Self.message(.clear, "old", "", at: 1)], at: now)
        try store.outbox.markPublished(try store.outbox.pendingPublications(after: 0, limit: 10).map(\.seq), at: now)
        for k in 2...6 {
            try store.outbox.enqueue([Self.message(.location, "new", at: Int64(k) * 100)], at: now)
            try store.outbox.markPublished(try store.outbox.pendingPublications(after: 0, limit: 10).map(\.seq), at: now)
        }
        let kept = try store.outbox.publications(includingPublished: true, limit: 10)
        #expect(kept.map(\.publication.kind) == [.clear, .location])
        #expect(try store.outbox.unretiredTopics(except: "new").isEmpty)
    }

    /// The bound drops published transitions too, but never the enter of a region the topic's
    /// consumers were told the device is in, until a leave or the topic's retirement: with
    /// `locations: none` it is all that says so (the leave a retirement owes them, the `wtst` a
    /// leave after a restart carries).
    @Test func theBoundKeepsTheEnterOfEachRegionTheDeviceIsIn() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("d.db"))
        store.publicationLimits = PublicationLimits(maxRows: 3, maxAge: .seconds(60))
        let a = "owntracks/u/a"
        let now = UTCTime(millisecondsSince1970: 0)
        func transition(_ event: String, _ rid: String, at seconds: Int64, id: String?) -> Publication {
            var m = Self.message(.transition, a + "/event", #"{"_type":"transition","event":"\#(event)","rid":"\#(rid)"}"#, at: seconds)
            m.eventID = id
            return m
        }
        func publishAll() throws {
            try store.outbox.markPublished(try store.outbox.pendingPublications(after: 0, limit: 10).map(\.seq), at: now)
        }
        func others(from k: Int64) throws {
            for j in k...(k + 4) {
                try store.outbox.enqueue([Self.message(.location, "other", at: j * 100)], at: now)
                try publishAll()
            }
        }
        try store.outbox.enqueue([transition("enter", "home", at: 1, id: "e1"), transition("enter", "shop", at: 2, id: "e2"),
                                  transition("leave", "shop", at: 3, id: "e3")], at: now)
        try publishAll()
        try others(from: 2)
        // Home's enter is kept; shop, entered and left, keeps nothing.
        #expect(try store.outbox.messagesSinceCleared(topic: a, transitionsOnly: true).map(\.eventID) == ["e1"])
        #expect(try store.outbox.publications(includingPublished: true, limit: 10).count == 2)
        // Retired: its leave for home, then its clears. The topic's consumers were told
        // everything is left: nothing of it is kept beyond the bound but the marker.
        try store.outbox.enqueue([transition("leave", "home", at: 700, id: nil), Self.message(.clear, a + "/status", "", at: 700),
                                  Self.message(.clear, a, "", at: 700)], at: now)
        try publishAll()
        try others(from: 8)
        #expect(try store.outbox.publications(includingPublished: true, limit: 10).map(\.publication.topic) == [a + "/status", a, "other"])
    }

    /// A retirement queued and not sent yet ends nothing: back on the topic before it went
    /// out, the topic's regions are still kept.
    @Test func aWithdrawnRetirementKeepsTheRegionsAgain() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("d.db"))
        store.publicationLimits = PublicationLimits(maxRows: 2, maxAge: .seconds(60))
        let a = "owntracks/u/a"
        let now = UTCTime(millisecondsSince1970: 0)
        var enter = Self.message(.transition, a + "/event", #"{"_type":"transition","event":"enter","rid":"home"}"#, at: 1)
        enter.eventID = "e1"
        try store.outbox.enqueue([enter], at: now)
        try store.outbox.markPublished(try store.outbox.pendingPublications(after: 0, limit: 10).map(\.seq), at: now)
        try store.outbox.enqueue([Self.message(.transition, a + "/event", #"{"_type":"transition","event":"leave","rid":"home"}"#, at: 2),
                                  Self.message(.clear, a, "", at: 2)], at: now)
        #expect(try store.outbox.withdrawRetirement(of: a) == 2)
        for k in 1...3 {
            try store.outbox.enqueue([Self.message(.location, a, at: Int64(k) * 100)], at: now)
            try store.outbox.markPublished(try store.outbox.pendingPublications(after: 0, limit: 10).map(\.seq), at: now)
        }
        #expect(try store.outbox.messagesSinceCleared(topic: a, transitionsOnly: true).map(\.eventID) == ["e1"])
    }

    /// A database of schema 14: its transitions name the regions each topic's consumers were
    /// told the device is in, so the bound keeps their enters from the first message after the
    /// migration.
    @Test func theMigrationFindsTheNewestTransitionOfEachRegion() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("old.db")
        do {
            let db = try Connection(path: path)
            for step in Migrations.all.prefix(14) {
                try db.execute(step.sql)
                try step.code?(db)
            }
            try db.execute("PRAGMA user_version = 14")
            try db.execute("""
                INSERT INTO publications (kind, topic, payload, retain, time_ms, event_id, created_at_ms, published_at_ms)
                VALUES ('transition', 'a/event', '{"event":"enter","rid":"home"}', 0, 1000, 'e1', 5, 6),
                       ('transition', 'a/event', '{"event":"leave","rid":"home"}', 0, 2000, 'e2', 5, 6),
                       ('transition', 'a/event', '{"event":"enter","rid":"work"}', 0, 3000, 'e3', 5, 6),
                       ('transition', 'a/event', '{"event":"leave","rid":"work"}', 0, 4000, NULL, 5, 6),
                       ('transition', 'a/event', 'not json', 0, 5000, 'e4', 5, 6),
                       ('location', 'a', '{"_type":"location"}', 1, 6000, NULL, 5, 6),
                       ('transition', 'b/event', '{"event":"enter","rid":"x"}', 0, 7000, 'e5', 5, 6),
                       ('clear', 'b', '', 1, 8000, NULL, 5, 6);
                """)
        }
        let store = try EventStore(path: path)
        #expect(try store.userVersion() == EventStore.schemaVersion)
        store.publicationLimits = PublicationLimits(maxRows: 2, maxAge: .seconds(60))
        try store.outbox.enqueue([Self.message(.location, "a", at: 600)], at: UTCTime(millisecondsSince1970: 7))
        // Work's enter is kept (the leave after it carries no event: a retirement's); home was
        // left, and b's enter is not kept either: b's retirement went out after it.
        let kept = try store.outbox.publications(includingPublished: true, limit: 10)
        #expect(kept.map(\.seq) == [3, 8, 9])
    }

    /// Back on a topic before its retirement went out: what is still pending of it is taken
    /// back (its empty messages and its leaves, transitions without an event); events and
    /// what was sent stay.
    @Test func aPendingRetirementIsWithdrawn() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("d.db"))
        let a = "owntracks/u/a"
        let now = UTCTime(millisecondsSince1970: 0)
        var event = Self.message(.transition, a + "/event", at: 1)
        event.eventID = "e1"
        try store.outbox.enqueue([event, Self.message(.clear, a + "/status", "", at: 1)], at: now)
        try store.outbox.markPublished(try store.outbox.pendingPublications(after: 0, limit: 10).map(\.seq), at: now)
        try store.outbox.enqueue([Self.message(.transition, a + "/event", at: 2), Self.message(.clear, a + "/status", "", at: 2),
                                  Self.message(.clear, a + "/waypoints", "", at: 2), Self.message(.clear, a, "", at: 2),
                                  Self.message(.clear, "owntracks/u/b", "", at: 2)], at: now)
        #expect(try store.outbox.withdrawRetirement(of: a) == 4)
        #expect(try store.outbox.publications(includingPublished: true, limit: 10).map(\.publication.topic)
                == [a + "/event", a + "/status", "owntracks/u/b"])
    }
}
