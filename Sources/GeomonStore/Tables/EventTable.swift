public import GeomonCore
import GeomonFormat

/// The `events` table: one row per decided event, `seq` its order.
struct EventTable {
    let db: Connection

    /// The columns an event row is read from, in order (`read(_:at:)`).
    static let columns = ["seq", "profile", "id", "kind", "fence_id", "fence_name", "time_ms", "lat", "lon", "accuracy_m", "rule", "approach"]

    /// The row at `offset` of `statement` (the columns above, in order).
    static func read(_ r: Statement, at offset: Int32 = 0) -> StoredEvent {
        let event = GeoEvent(
            id: r.text(offset + 2), kind: EventKind(rawValue: r.text(offset + 3)) ?? .location,
            fenceID: r.optionalText(offset + 4), fenceName: r.optionalText(offset + 5),
            time: UTCTime(millisecondsSince1970: r.int64(offset + 6)),
            coordinate: Coordinate(latitude: r.double(offset + 7), longitude: r.double(offset + 8)),
            accuracyMeters: r.double(offset + 9), rule: .recorded(r.text(offset + 10)))
        var stored = event
        stored.approach = r.optionalText(offset + 11).flatMap(EventRule.Approach.init(storedText:))
        return StoredEvent(seq: r.int64(offset), profile: r.text(offset + 1), event: stored)
    }

    /// Inserts `event` unless its id is stored; its `seq` when it was new.
    func insert(_ event: GeoEvent, profile: String) throws -> Int64? {
        let insert = try db.statement("""
            INSERT INTO events(id, profile, kind, fence_id, fence_name, time_ms, lat, lon, accuracy_m, rule, approach)
            VALUES (?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO NOTHING
            """)
        insert.bind(1, event.id)
        insert.bind(2, profile)
        insert.bind(3, event.kind.rawValue)
        insert.bind(4, event.fenceID)
        insert.bind(5, event.fenceName)
        insert.bind(6, event.time.millisecondsSince1970)
        insert.bind(7, event.coordinate.latitude)
        insert.bind(8, event.coordinate.longitude)
        insert.bind(9, event.accuracyMeters)
        insert.bind(10, event.rule.text)
        insert.bind(11, event.approach?.storedText)
        try insert.run()
        return db.changes == 1 ? db.lastInsertRowID : nil
    }

    func events(since: UTCTime?, fence: String?, limit: Int?) throws -> [StoredEvent] {
        let list = Self.columns.joined(separator: ", ")
        let r = try db.statement("""
            SELECT * FROM (
              SELECT \(list) FROM events WHERE time_ms >= ?1 AND (?2 IS NULL OR fence_id = ?2) ORDER BY seq DESC LIMIT ?3
            ) ORDER BY seq
            """)
        r.bind(1, since?.millisecondsSince1970 ?? Int64.min)
        r.bind(2, fence)
        r.bind(3, limit ?? -1)
        var result: [StoredEvent] = []
        while try r.step() { result.append(Self.read(r)) }
        return result
    }

    func event(id: String) throws -> StoredEvent? {
        let r = try db.statement("SELECT \(Self.columns.joined(separator: ", ")) FROM events WHERE id = ?")
        r.bind(1, id)
        defer { r.reset() }
        return try r.step() ? Self.read(r) : nil
    }

    func count() throws -> Int {
        try Int(db.scalarInt("SELECT count(*) FROM events") ?? 0)
    }
}
