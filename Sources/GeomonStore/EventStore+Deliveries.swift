public import GeomonCore
import Foundation

/// The delivery queue the hook worker drives: rows of the deliveries table with their event.
///
/// Clock-free: new rows and recovered or requeued ones are due at once (`next_attempt_at` 0),
/// so the worker may run on the wall clock while the events carry replay's virtual times.
extension EventStore: DeliveryQueue {
    private static let columns = ["id", "hook_key", "argv", "status", "attempt", "next_attempt_at_ms", "last_error"]
    private static let eventColumns = ["seq", "profile", "id", "kind", "fence_id", "fence_name", "time_ms", "lat", "lon", "accuracy_m", "rule"]
    private static var selectList: String {
        (columns.map { "d." + $0 } + eventColumns.map { "e." + $0 }).joined(separator: ", ")
    }

    /// A stored delivery names an event the store does not have (a damaged database).
    public struct MissingEvent: Error, CustomStringConvertible, Sendable {
        public var deliveryID: Int64
        public var description: String { "delivery #\(deliveryID) refers to an event that is not stored" }
    }

    private func readDeliveries(_ statement: Statement) throws -> [Delivery] {
        var result: [Delivery] = []
        while try statement.step() {
            let id = statement.int64(0)
            guard statement.optionalText(9) != nil else { throw MissingEvent(deliveryID: id) }
            let status = DeliveryStatus(rawValue: statement.text(3)) ?? .pending
            let next = statement.int64(5)
            let event = GeoEvent(
                id: statement.text(9), kind: EventKind(rawValue: statement.text(10)) ?? .location,
                fenceID: statement.optionalText(11), fenceName: statement.optionalText(12),
                time: UTCTime(millisecondsSince1970: statement.int64(13)),
                coordinate: Coordinate(latitude: statement.double(14), longitude: statement.double(15)),
                accuracyMeters: statement.double(16), rule: .recorded(statement.text(17)))
            result.append(Delivery(
                id: id, event: event, hookKey: statement.text(1),
                argv: Self.parseStringArray(statement.text(2)) ?? [],
                status: status, attempt: statement.int(4),
                nextAttemptAt: status == .retrying && next > 0 ? UTCTime(millisecondsSince1970: next) : nil,
                lastError: statement.optionalText(6)))
        }
        return result
    }

    /// Parses a JSON array of strings (nil when it is anything else).
    static func parseStringArray(_ text: String) -> [String]? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) else { return nil }
        return object as? [String]
    }

    private static let from = "FROM deliveries d LEFT JOIN events e ON e.id = d.event_id"

    /// Deliveries ready to start: for each (hook_key, fence_id), only the earliest undelivered
    /// one in event order (pending, running or retrying; dead ones do not block), and only when
    /// it is pending/retrying with `next_attempt_at <= now`. A running head blocks its group.
    public func dueDeliveries(now: UTCTime, limit: Int) throws -> [Delivery] {
        let statement = try db.prepare("""
            SELECT \(Self.selectList)
            \(Self.from)
            JOIN (SELECT hook_key, fence_id, min(seq) AS seq FROM deliveries
                  WHERE status IN ('pending','running','retrying') GROUP BY hook_key, fence_id) h
              ON d.hook_key = h.hook_key AND d.fence_id = h.fence_id AND d.seq = h.seq
            WHERE d.status IN ('pending','retrying') AND d.next_attempt_at_ms <= ?
            ORDER BY d.id LIMIT ?
            """)
        statement.bind(1, now.millisecondsSince1970)
        statement.bind(2, limit)
        return try readDeliveries(statement)
    }

    /// The earliest `next_attempt_at` among queue heads waiting for a retry or start, for
    /// scheduling the worker's next wake-up.
    public func nextDeliveryAttempt() throws -> UTCTime? {
        try db.scalarInt("""
            SELECT min(d.next_attempt_at_ms) FROM deliveries d
            JOIN (SELECT hook_key, fence_id, min(seq) AS seq FROM deliveries
                  WHERE status IN ('pending','running','retrying') GROUP BY hook_key, fence_id) h
              ON d.hook_key = h.hook_key AND d.fence_id = h.fence_id AND d.seq = h.seq
            WHERE d.status IN ('pending','retrying')
            """).map { UTCTime(millisecondsSince1970: $0) }
    }

    /// One delivery by row id.
    public func delivery(id: Int64) throws -> Delivery? {
        let statement = try db.prepare("SELECT \(Self.selectList) \(Self.from) WHERE d.id = ?")
        statement.bind(1, id)
        return try readDeliveries(statement).first
    }

    /// The deliveries of one event, in row order.
    public func deliveries(eventID: String) throws -> [Delivery] {
        let statement = try db.prepare("SELECT \(Self.selectList) \(Self.from) WHERE d.event_id = ? ORDER BY d.id")
        statement.bind(1, eventID)
        return try readDeliveries(statement)
    }

    /// The stored event with `id`, if any.
    public func event(id: String) throws -> StoredEvent? {
        let statement = try db.prepare("""
            SELECT seq, profile, id, kind, fence_id, fence_name, time_ms, lat, lon, accuracy_m, rule
            FROM events WHERE id = ?
            """)
        statement.bind(1, id)
        return try readEvents(statement).first
    }

    /// All deliveries with `status` (all when nil), in event order.
    public func deliveries(status: DeliveryStatus) throws -> [Delivery] {
        try deliveries(status: Optional(status))
    }

    /// Every delivery, in event order.
    public func deliveries() throws -> [Delivery] {
        try deliveries(status: nil)
    }

    /// All deliveries with `status` (all when nil), in event order.
    public func deliveries(status: DeliveryStatus?) throws -> [Delivery] {
        let statement = try db.prepare(
            "SELECT \(Self.selectList) \(Self.from) WHERE (?1 IS NULL OR d.status = ?1) ORDER BY d.id")
        statement.bind(1, status?.rawValue)
        return try readDeliveries(statement)
    }

    /// Deliveries not yet delivered or dead.
    public func openCount() throws -> Int { try pendingDeliveryCount() }

    /// Deliveries not yet delivered or dead.
    public func pendingDeliveryCount() throws -> Int {
        try Int(db.scalarInt("SELECT count(*) FROM deliveries WHERE status IN ('pending','running','retrying')") ?? 0)
    }

    private func update(_ sql: String, id: Int64, bind: (Statement) -> Void) throws {
        try db.transaction {
            let statement = try db.prepare(sql)
            bind(statement)
            statement.bind(1, id)
            try statement.run()
            if db.changes != 1 {
                throw SQLiteError(code: 12, extended: 12, message: "no delivery with id \(id)", sql: sql)
            }
        }
    }

    private func nowMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }

    /// Marks a delivery as started (attempt numbers start at 1).
    public func markRunning(id: Int64, attempt: Int) throws {
        try update("UPDATE deliveries SET status = 'running', attempt = ?2, updated_at_ms = ?3 WHERE id = ?1", id: id) {
            $0.bind(2, attempt)
            $0.bind(3, nowMilliseconds())
        }
    }

    /// Terminal success; the last failed attempt's error (if any) is kept for the record.
    public func markDelivered(id: Int64) throws {
        try update("UPDATE deliveries SET status = 'delivered', updated_at_ms = ?2 WHERE id = ?1", id: id) {
            $0.bind(2, nowMilliseconds())
        }
    }

    public func markRetry(id: Int64, nextAttemptAt: UTCTime, error: String) throws {
        try update("UPDATE deliveries SET status = 'retrying', next_attempt_at_ms = ?2, last_error = ?3, updated_at_ms = ?4 WHERE id = ?1", id: id) {
            $0.bind(2, nextAttemptAt.millisecondsSince1970)
            $0.bind(3, error)
            $0.bind(4, nowMilliseconds())
        }
    }

    public func markDead(id: Int64, error: String) throws {
        try update("UPDATE deliveries SET status = 'dead', last_error = ?2, updated_at_ms = ?3 WHERE id = ?1", id: id) {
            $0.bind(2, error)
            $0.bind(3, nowMilliseconds())
        }
    }

    /// Puts every dead delivery back in the queue, due at once whatever clock the worker runs
    /// on (attempt count restarts, the last error is kept); returns how many.
    @discardableResult
    public func requeueDead() throws -> Int {
        try db.transaction {
            let statement = try db.prepare(
                "UPDATE deliveries SET status = 'pending', attempt = 0, next_attempt_at_ms = 0, updated_at_ms = ?1 WHERE status = 'dead'")
            statement.bind(1, nowMilliseconds())
            try statement.run()
            return db.changes
        }
    }

    /// After a crash: deliveries left `running` become `retrying`, due at once (same event id,
    /// same attempt count, so the next attempt is numbered after it). Returns how many.
    public func recoverInterrupted() throws {
        _ = try recoverInterruptedCount()
    }

    /// As `recoverInterrupted`, returning how many rows it recovered.
    @discardableResult
    public func recoverInterruptedCount() throws -> Int {
        try db.transaction {
            let statement = try db.prepare(
                "UPDATE deliveries SET status = 'retrying', next_attempt_at_ms = 0, updated_at_ms = ?1 WHERE status = 'running'")
            statement.bind(1, nowMilliseconds())
            try statement.run()
            return db.changes
        }
    }
}
