public import GeomonCore
import GeomonFormat

/// The `events` table: one row per decided event, `seq` its order.
public struct EventTable {
    let db: Connection

    /// The columns an event row is read from (`read(_:prefix:)`).
    static let columns = ["seq", "profile", "id", "kind", "fence_id", "fence_name", "time_ms", "lat", "lon", "accuracy_m", "rule", "approach", "figures", "suppressed"]

    /// The event of a row, its columns named `prefix` + the names above (a join selects the
    /// event's columns under a prefix: `e.id AS e_id`).
    static func read(_ r: Statement, prefix: String = "") -> StoredEvent {
        func c(_ name: String) -> String { prefix + name }
        var event = GeoEvent(
            id: r.text(c("id")), kind: EventKind(rawValue: r.text(c("kind"))) ?? .location,
            fenceID: r.optionalText(c("fence_id")), fenceName: r.optionalText(c("fence_name")),
            time: UTCTime(millisecondsSince1970: r.int64(c("time_ms"))),
            coordinate: Coordinate(latitude: r.double(c("lat")), longitude: r.double(c("lon"))),
            accuracyMeters: r.double(c("accuracy_m")), rule: .recorded(r.text(c("rule"))))
        event.approach = r.optionalText(c("approach")).flatMap(EventRule.Approach.init(storedText:))
        event.figures = r.optionalText(c("figures")).flatMap(EventFigures.init(storedText:))
        // Bits: 1, held back by a cooldown; 2, an exit its fence's `events` leave out (MQTT
        // only). An exit can be both.
        let delivery = r.int64(c("suppressed"))
        event.suppressed = delivery & 1 != 0
        event.unlisted = delivery & 2 != 0
        return StoredEvent(seq: r.int64(c("seq")), profile: r.text(c("profile")), event: event)
    }

    /// Inserts `event` unless its id is stored; its `seq` when it was new.
    func insert(_ event: GeoEvent, profile: String) throws -> Int64? {
        let insert = try db.statement("""
            INSERT INTO events(id, profile, kind, fence_id, fence_name, time_ms, lat, lon, accuracy_m, rule, approach, figures, suppressed)
            VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO NOTHING
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
        insert.bind(12, event.figures?.storedText)
        insert.bind(13, Int64((event.suppressed ? 1 : 0) | (event.unlisted ? 2 : 0)))
        try insert.run()
        return db.changes == 1 ? db.lastInsertRowID : nil
    }

    /// Stored events in event order, optionally only those at or after `since`, of one fence,
    /// and at most `limit` of them (the latest, still in event order).
    public func events(since: UTCTime? = nil, fence: String? = nil, limit: Int? = nil) throws -> [StoredEvent] {
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

    public func event(id: String) throws -> StoredEvent? {
        let r = try db.statement("SELECT \(Self.columns.joined(separator: ", ")) FROM events WHERE id = ?")
        r.bind(1, id)
        defer { r.reset() }
        return try r.step() ? Self.read(r) : nil
    }

    public func count() throws -> Int {
        try Int(db.scalarInt("SELECT count(*) FROM events") ?? 0)
    }
}

extension EventRule.Approach {
    /// The figures as one line for the store (the events table's `approach` column): band
    /// (`-` for none), distance, lower bound, direction, closing speed, ETA and its bound in ms
    /// (`-` for none), samples, span in ms, and the ETA band in ms when there is one.
    var storedText: String {
        func ms(_ d: Duration?) -> String { d.map { String($0.wholeMilliseconds) } ?? "-" }
        var fields = [bandMeters.map { String($0) } ?? "-", String(distanceMeters), String(distanceLowerBoundMeters), direction.rawValue,
                      String(closingSpeedMetersPerSecond), ms(eta), ms(etaLowerBound), String(samples), ms(span)]
        if let bandETA { fields.append(ms(bandETA)) }
        return fields.joined(separator: " ")
    }

    /// Reads `storedText` back; nil when it is not one.
    init?(storedText text: String) {
        let p = text.split(separator: " ").map(String.init)
        func ms(_ s: String) -> Duration?? {
            if s == "-" { return .some(nil) }
            return Int64(s).map { .some(.milliseconds($0)) }
        }
        guard p.count == 9 || p.count == 10, p[0] == "-" || Double(p[0]) != nil, let d = Double(p[1]), let lower = Double(p[2]),
              let direction = ApproachDirection(rawValue: p[3]), let v = Double(p[4]),
              let eta = ms(p[5]), let etaLower = ms(p[6]), let n = Int(p[7]), let span = ms(p[8]) else { return nil }
        let bandETA = p.count == 10 ? ms(p[9]) : .some(nil)
        guard let bandETA else { return nil }
        self.init(bandMeters: Double(p[0]), bandETA: bandETA, distanceMeters: d, distanceLowerBoundMeters: lower, direction: direction,
                  closingSpeedMetersPerSecond: v, eta: eta, etaLowerBound: etaLower, samples: n, span: span ?? .zero)
    }
}
