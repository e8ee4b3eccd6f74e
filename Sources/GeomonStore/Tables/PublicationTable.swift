public import GeomonCore

/// The bound of the outbox (`publish.mqtt.keep`): rows beyond `maxRows`, and rows whose time is
/// older than `maxAge` before the newest, are dropped — published ones first, then pending
/// locations, oldest first. Pending messages that carry an event are never dropped, nor is a
/// pending `waypoints` message (only a newer one replaces it: its time may be the system
/// clock's, years from the receiver's that dates the fixes), nor any `clear` (one per topic
/// left: it marks the topic retired, `unretiredTopics`), nor the enter of a region a topic's
/// consumers were told the device is in, until an event's leave or the topic's retirement
/// that went out ends it (`publication_regions`: for the leave a retirement owes them and the
/// `wtst` a leave after a restart carries).
public struct PublicationLimits: Sendable, Hashable {
    public var maxRows: Int
    public var maxAge: Duration
    public init(maxRows: Int, maxAge: Duration) {
        self.maxRows = maxRows
        self.maxAge = maxAge
    }
}

/// The `publications` table: the MQTT outbox (`PublicationOutbox`).
public final class PublicationTable: PublicationOutbox {
    let db: Connection
    /// The outbox's bound (`publish.mqtt.keep`); nil keeps every message.
    let limits: PublicationLimits?

    init(db: Connection, limits: PublicationLimits?) {
        self.db = db
        self.limits = limits
    }

    /// Writes `publications` (inside the caller's transaction); a `waypoints` message replaces
    /// any pending one. Then applies `publicationLimits`.
    func insert(_ publications: [Publication], at time: UTCTime) throws {
        guard !publications.isEmpty else { return }
        let insert = try db.statement("""
            INSERT INTO publications (kind, topic, payload, retain, time_ms, event_id, created_at_ms) VALUES (?,?,?,?,?,?,?)
            """)
        // The regions each topic's consumers were told the device entered and not left
        // (`PublicationLimits`): an event's enter is kept, its leave ends that (a retirement's
        // leaves carry no event). An enter is older than its leave, so the bound drops it first.
        let forget = try db.statement("DELETE FROM publication_regions WHERE topic = ?1 AND rid = \(Self.field("rid", of: "?2"))")
        let note = try db.statement("""
            INSERT OR REPLACE INTO publication_regions (topic, rid, seq) SELECT ?1, rid, ?3 FROM (SELECT \(Self.field("rid", of: "?2")) AS rid)
            WHERE rid IS NOT NULL AND \(Self.field("event", of: "?2")) = 'enter'
            """)
        for publication in publications {
            if publication.kind == .waypoints {
                try db.execute("DELETE FROM publications WHERE kind = 'waypoints' AND published_at_ms IS NULL")
            }
            insert.reset()
            insert.bind(1, publication.kind.rawValue)
            insert.bind(2, publication.topic)
            insert.bind(3, publication.payload)
            insert.bind(4, publication.retain ? 1 : 0)
            insert.bind(5, publication.time.millisecondsSince1970)
            insert.bind(6, publication.eventID)
            insert.bind(7, time.millisecondsSince1970)
            try insert.run()
            if publication.kind == .transition, publication.eventID != nil {
                forget.reset()
                forget.bind(1, publication.topic)
                forget.bind(2, publication.payload)
                try forget.run()
                note.reset()
                note.bind(1, publication.topic)
                note.bind(2, publication.payload)
                note.bind(3, db.lastInsertRowID)
                try note.run()
            }
        }
        guard let limits else { return }
        // Ages count in the receiver's time: a waypoints message is dated with the system clock,
        // which may be years from it, so the newest of the other messages written is "now".
        if let newest = publications.lazy.filter({ $0.kind != .waypoints }).map(\.time).max() {
            let cutoff = (newest - limits.maxAge).millisecondsSince1970
            let old = try db.statement("""
                DELETE FROM publications WHERE time_ms < ? AND kind != 'clear' AND (published_at_ms IS NOT NULL OR (event_id IS NULL AND kind = 'location'))
                  AND seq NOT IN (SELECT seq FROM publication_regions)
                """)
            old.bind(1, cutoff)
            try old.run()
        }
        // The kept enters are bounded by the regions the device is in, not the outbox's rows
        // (each names a row the bound never drops; two counts SQLite keeps cheap).
        let count = try Int(db.scalarInt("SELECT (SELECT count(*) FROM publications) - (SELECT count(*) FROM publication_regions)") ?? 0)
        if count > limits.maxRows {
            let excess = try db.statement("""
                DELETE FROM publications WHERE seq IN (
                  SELECT seq FROM publications WHERE kind != 'clear' AND (published_at_ms IS NOT NULL OR (event_id IS NULL AND kind = 'location'))
                    AND seq NOT IN (SELECT seq FROM publication_regions)
                  ORDER BY published_at_ms IS NULL, seq LIMIT ?)
                """)
            excess.bind(1, count - limits.maxRows)
            try excess.run()
        }
    }

    /// A text member of an OwnTracks transition's payload (`rid`, `event`) in SQL, NULL where
    /// there is none (SQLite's JSON functions, built in since 3.38).
    static func field(_ name: String, of payload: String) -> String {
        "CASE WHEN json_valid(\(payload)) AND json_type(\(payload), '$.\(name)') = 'text' THEN json_extract(\(payload), '$.\(name)') END"
    }

    /// Migration 15: `publication_regions` from the transitions with an event the outbox holds
    /// on each event topic since its base topic's last retirement that went out: each region
    /// whose newest is an enter (SQLite takes `event` from the row `max(seq)` picks).
    static let fillRegions = """
        INSERT INTO publication_regions (topic, rid, seq)
        SELECT topic, rid, seq FROM (
            SELECT topic, rid, max(seq) AS seq, event FROM (
                SELECT p.topic, p.seq, \(field("rid", of: "p.payload")) AS rid, \(field("event", of: "p.payload")) AS event FROM publications p
                WHERE p.kind = 'transition' AND p.event_id IS NOT NULL
                  AND p.seq > coalesce((SELECT max(c.seq) FROM publications c WHERE c.kind = 'clear' AND c.published_at_ms IS NOT NULL
                                          AND c.topic = substr(p.topic, 1, length(p.topic) - 6)), 0))
            WHERE rid IS NOT NULL GROUP BY topic, rid)
        WHERE event = 'enter'
        """

    /// Pending messages after `seq`, oldest first, at most `limit`.
    public func pendingPublications(after seq: Int64, limit: Int) throws -> [StoredPublication] {
        let statement = try db.statement("""
            SELECT seq, kind, topic, payload, retain, time_ms, event_id, created_at_ms, published_at_ms, refused
            FROM publications WHERE published_at_ms IS NULL AND seq > ? ORDER BY seq LIMIT ?
            """)
        statement.bind(1, seq)
        statement.bind(2, limit)
        return try readPublications(statement)
    }

    /// Messages for `geomon publish list`: the pending ones, and with `published` the kept
    /// published ones too; the latest `limit`, oldest first.
    public func publications(includingPublished published: Bool, limit: Int) throws -> [StoredPublication] {
        let statement = try db.statement("""
            SELECT * FROM (
              SELECT seq, kind, topic, payload, retain, time_ms, event_id, created_at_ms, published_at_ms, refused
              FROM publications WHERE ?1 OR published_at_ms IS NULL OR refused IS NOT NULL ORDER BY seq DESC LIMIT ?2
            ) ORDER BY seq
            """)
        statement.bind(1, published ? 1 : 0)
        statement.bind(2, limit)
        return try readPublications(statement)
    }

    /// Marks messages acknowledged by the broker, in one transaction.
    public func markPublished(_ seqs: [Int64], at time: UTCTime) throws {
        try mark(seqs.map { ($0, nil) }, at: time)
    }

    /// Marks messages the broker refused, with why, in one transaction: done with, as a dead
    /// letter (not sent again until requeued).
    public func markRefused(_ refusals: [(seq: Int64, reason: String)], at time: UTCTime) throws {
        try mark(refusals.map { ($0.seq, $0.reason) }, at: time)
    }

    /// Pending rows done with at `time`: taken by the broker (no reason) or refused (a reason).
    private func mark(_ rows: [(seq: Int64, refused: String?)], at time: UTCTime) throws {
        guard !rows.isEmpty else { return }
        try db.transaction {
            let update = try db.statement("UPDATE publications SET published_at_ms = ?, refused = ? WHERE seq = ? AND published_at_ms IS NULL")
            for row in rows {
                update.reset()
                update.bind(1, time.millisecondsSince1970)
                update.bind(2, row.refused)
                update.bind(3, row.seq)
                try update.run()
            }
            try forgetRetiredRegions()
        }
    }

    /// A topic whose retirement went out (the `clear` of its base topic, after its leaves, done
    /// with) keeps no regions from before it: its consumers were told the device left them.
    private func forgetRetiredRegions() throws {
        try db.execute("""
            DELETE FROM publication_regions WHERE seq < (SELECT max(c.seq) FROM publications c
              WHERE c.kind = 'clear' AND c.published_at_ms IS NOT NULL
                AND c.topic = substr(publication_regions.topic, 1, length(publication_regions.topic) - 6))
            """)
    }

    /// Messages the broker refused and that were not requeued since.
    public func refusedPublicationCount() throws -> Int {
        try Int(db.scalarInt("SELECT count(*) FROM publications WHERE refused IS NOT NULL") ?? 0)
    }

    /// The broker lost geomon's session (and maybe its retained messages: a broker restarted
    /// without persistence): the newest published retained message of each of `topics` (the
    /// retained topics the current settings publish: never one a changed profile left) is
    /// queued again, unless one for that topic is pending; a location not when an event's
    /// transition came after it (its `inregions` is stale: Home Assistant, told of the leave,
    /// would take its position and put the device back in the zone it left; a retirement's
    /// leaves, for a topic the profile left and came back to, say nothing of where the device
    /// is). A `clear` is never requeued: the
    /// topics are published on now, so the message before it is (a profile back on a topic it
    /// left). `onlyCleared`: only the topics whose newest retained message is a `clear`, at
    /// start and reload, whatever the broker kept. Returns how many.
    public func requeueRetained(at time: UTCTime, topics: [String], onlyCleared: Bool = false) throws -> Int {
        guard !topics.isEmpty else { return 0 }
        return try db.transaction { try requeueRetainedRows(at: time, topics: topics, onlyCleared: onlyCleared) }
    }

    private func requeueRetainedRows(at time: UTCTime, topics: [String], onlyCleared: Bool) throws -> Int {
        let list = topics.indices.map { "?\($0 + 3)" }.joined(separator: ", ")
        let copy = try db.statement("""
            INSERT INTO publications (kind, topic, payload, retain, time_ms, event_id, created_at_ms)
            SELECT p.kind, p.topic, p.payload, 1, p.time_ms, NULL, ?1 FROM publications p
            WHERE p.retain = 1 AND p.kind != 'clear' AND p.published_at_ms IS NOT NULL AND p.refused IS NULL AND p.topic IN (\(list))
              AND p.seq = (SELECT max(q.seq) FROM publications q
                           WHERE q.topic = p.topic AND q.retain = 1 AND q.kind != 'clear' AND q.published_at_ms IS NOT NULL AND q.refused IS NULL)
              AND NOT EXISTS (SELECT 1 FROM publications r WHERE r.topic = p.topic AND r.published_at_ms IS NULL)
              AND NOT (p.kind = 'location' AND EXISTS (SELECT 1 FROM publications t
                       WHERE t.kind = 'transition' AND t.topic = p.topic || '/event' AND t.seq > p.seq AND t.refused IS NULL
                         AND t.event_id IS NOT NULL))
              AND (NOT ?2 OR (SELECT c.kind FROM publications c WHERE c.topic = p.topic AND c.retain = 1 ORDER BY c.seq DESC LIMIT 1) = 'clear')
            ORDER BY p.seq
            """)
        copy.bind(1, time.millisecondsSince1970)
        copy.bind(2, onlyCleared ? 1 : 0)
        for (index, topic) in topics.enumerated() { copy.bind(Int32(index + 3), topic) }
        try copy.run()
        return db.changes
    }

    /// The OwnTracks base topics (`TOPIC`: locations on it, transitions on `TOPIC/event`,
    /// waypoints on `TOPIC/waypoints`) other than `current` with messages since their last
    /// `clear` on `TOPIC`, each with those messages, oldest first: the topics a changed profile
    /// left that consumers may still follow (`OwnTracksRetirement`).
    public func unretiredTopics(except current: String) throws -> [(topic: String, messages: [Publication])] {
        let kinds = try db.statement("SELECT DISTINCT kind, topic FROM publications WHERE kind IN ('location', 'transition', 'waypoints')")
        var bases = Set<String>()
        while try kinds.step() {
            let topic = kinds.text("topic")
            let base: String? = switch Publication.Kind(rawValue: kinds.text("kind")) {
            case .transition: topic.hasSuffix("/event") ? String(topic.dropLast(6)) : nil
            case .waypoints: topic.hasSuffix("/waypoints") ? String(topic.dropLast(10)) : nil
            default: topic
            }
            if let base, base != current { bases.insert(base) }
        }
        return try bases.sorted().compactMap { base in
            let messages = try messagesSinceCleared(topic: base)
            return messages.isEmpty ? nil : (base, messages)
        }
    }

    /// The messages of OwnTracks base topic `topic` (locations on it, transitions on
    /// `TOPIC/event`, waypoints on `TOPIC/waypoints`) since its last `clear`, oldest first;
    /// `transitionsOnly`: the transitions alone. `withoutPendingRetirement`: as if a retirement
    /// of the topic queued and not sent were taken back (`withdrawRetirement`), as it is once
    /// the profile publishes on the topic again.
    public func messagesSinceCleared(topic: String, transitionsOnly: Bool = false, withoutPendingRetirement: Bool = false) throws -> [Publication] {
        let family = try db.statement("""
            SELECT seq, kind, topic, payload, retain, time_ms, event_id, created_at_ms, published_at_ms, refused FROM publications
            WHERE seq > coalesce((SELECT max(seq) FROM publications
                                  WHERE kind = 'clear' AND topic = ?1 AND (published_at_ms IS NOT NULL OR NOT ?3)), 0)
              AND ((kind = 'location' AND topic = ?1 AND NOT ?2)
                   OR (kind = 'transition' AND topic = ?1 || '/event' AND (event_id IS NOT NULL OR published_at_ms IS NOT NULL OR NOT ?3))
                   OR (kind = 'waypoints' AND topic = ?1 || '/waypoints' AND NOT ?2))
            ORDER BY seq
            """)
        family.bind(1, topic)
        family.bind(2, transitionsOnly ? 1 : 0)
        family.bind(3, withoutPendingRetirement ? 1 : 0)
        return try readPublications(family).map(\.publication)
    }

    /// Takes back what retiring OwnTracks base topic `topic` queued and has not sent (the
    /// profile is back on it): its empty messages and its leaves (transitions that carry no
    /// event). Returns how many.
    @discardableResult
    public func withdrawRetirement(of topic: String) throws -> Int {
        let delete = try db.statement("""
            DELETE FROM publications WHERE published_at_ms IS NULL
              AND ((kind = 'clear' AND topic IN (?1, ?1 || '/status', ?1 || '/waypoints'))
                   OR (kind = 'transition' AND event_id IS NULL AND topic = ?1 || '/event'))
            """)
        delete.bind(1, topic)
        try delete.run()
        return db.changes
    }

    /// Every message still pending on a topic other than `keep`, refused with `reason` (at its
    /// own time): the broker changed, and what was meant for the old one's consumers (an old
    /// topic's backlog, a retirement queued and not sent) goes to nobody. Returns how many.
    @discardableResult
    public func refusePending(except keep: Set<String>, reason: String) throws -> Int {
        let list = keep.sorted().indices.map { "?\($0 + 2)" }.joined(separator: ", ")
        let refuse = try db.statement(
            "UPDATE publications SET published_at_ms = time_ms, refused = ?1 WHERE published_at_ms IS NULL"
                + (keep.isEmpty ? "" : " AND topic NOT IN (\(list))"))
        refuse.bind(1, reason)
        for (index, topic) in keep.sorted().enumerated() { refuse.bind(Int32(index + 2), topic) }
        try refuse.run()
        return db.changes
    }

    /// Marks `topic` retired without sending anything: a `clear` stored as if published, and
    /// not retained (a marker only, which `geomon publish retry` never sends): its broker is
    /// not the one geomon publishes to now, or the message would clear a topic the profile
    /// publishes on. `unsent`: the topic's messages still pending are done with too, refused
    /// with that reason (they were for consumers on another broker).
    public func markRetired(_ topic: String, at time: UTCTime, unsent: String? = nil) throws {
        try db.transaction {
            if let unsent {
                let refuse = try db.statement("""
                    UPDATE publications SET published_at_ms = ?2, refused = ?3 WHERE published_at_ms IS NULL
                      AND ((kind IN ('location', 'clear') AND topic = ?1) OR (kind = 'transition' AND topic = ?1 || '/event')
                           OR (kind = 'waypoints' AND topic = ?1 || '/waypoints'))
                    """)
                refuse.bind(1, topic)
                refuse.bind(2, time.millisecondsSince1970)
                refuse.bind(3, unsent)
                try refuse.run()
            }
            let insert = try db.statement("""
                INSERT INTO publications (kind, topic, payload, retain, time_ms, event_id, created_at_ms, published_at_ms)
                VALUES ('clear', ?1, '', 0, ?2, NULL, ?2, ?2)
                """)
            insert.bind(1, topic)
            insert.bind(2, time.millisecondsSince1970)
            try insert.run()
            try forgetRetiredRegions()
        }
    }

    /// The broker (`host:port`) the outbox's messages went to last (`recordBroker`); nil
    /// before the first start that recorded one.
    public func lastBroker() throws -> String? {
        let statement = try db.statement("SELECT value FROM kv WHERE key = 'mqtt.broker'")
        // Reset at once: a statement left on its row keeps the connection's read transaction.
        defer { statement.reset() }
        return try statement.step() ? statement.text(0) : nil
    }

    public func recordBroker(_ broker: String) throws {
        let statement = try db.statement("INSERT INTO kv (key, value) VALUES ('mqtt.broker', ?1) ON CONFLICT(key) DO UPDATE SET value = ?1")
        statement.bind(1, broker)
        try statement.run()
    }

    /// `geomon publish retry --since`: published (or refused) messages whose time is at or
    /// after `since` become pending again (published again, in their order). Returns how many.
    public func requeuePublications(since: UTCTime) throws -> Int {
        // Not a marker that only says a topic is retired (`markRetired`: a `clear` never sent).
        let update = try db.statement("""
            UPDATE publications SET published_at_ms = NULL, refused = NULL
            WHERE published_at_ms IS NOT NULL AND time_ms >= ? AND NOT (kind = 'clear' AND retain = 0)
            """)
        update.bind(1, since.millisecondsSince1970)
        try update.run()
        return db.changes
    }

    public func pendingPublicationCount() throws -> Int {
        try Int(db.scalarInt("SELECT count(*) FROM publications WHERE published_at_ms IS NULL") ?? 0)
    }

    /// Writes messages outside a fix commit (the waypoints at start and on reload).
    public func enqueue(_ publications: [Publication], at time: UTCTime) throws {
        try db.transaction { try insert(publications, at: time) }
    }

    func readPublications(_ statement: Statement) throws -> [StoredPublication] {
        var result: [StoredPublication] = []
        while try statement.step() {
            let publication = Publication(
                kind: Publication.Kind(rawValue: statement.text("kind")) ?? .location, topic: statement.text("topic"),
                payload: statement.text("payload"), retain: statement.int64("retain") != 0,
                time: UTCTime(millisecondsSince1970: statement.int64("time_ms")), eventID: statement.optionalText("event_id"))
            result.append(StoredPublication(
                seq: statement.int64("seq"), publication: publication,
                createdAt: UTCTime(millisecondsSince1970: statement.int64("created_at_ms")),
                publishedAt: statement.optionalInt64("published_at_ms").map(UTCTime.init(millisecondsSince1970:)), refused: statement.optionalText("refused")))
        }
        return result
    }
}
