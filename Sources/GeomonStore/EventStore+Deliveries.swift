public import GeomonCore
import Foundation

/// The delivery queue the hook worker drives.
extension EventStore {
    private static let columns = "id, event_id, hook_key, argv, fence_id, seq, status, attempt, next_attempt_at_ms, last_error, updated_at_ms"

    private func readDeliveries(_ statement: Statement) throws -> [Delivery] {
        var result: [Delivery] = []
        while try statement.step() {
            result.append(Delivery(
                id: statement.int64(0), eventID: statement.text(1), hookKey: statement.text(2),
                argv: JSONText.parseStringArray(statement.text(3)) ?? [],
                fenceID: statement.text(4), seq: statement.int64(5),
                status: DeliveryStatus(rawValue: statement.text(6)) ?? .pending,
                attempt: statement.int(7),
                nextAttemptAt: UTCTime(millisecondsSince1970: statement.int64(8)),
                lastError: statement.optionalText(9),
                updatedAt: UTCTime(millisecondsSince1970: statement.int64(10))))
        }
        return result
    }

    /// Deliveries ready to start: for each (hook_key, fence_id), only the earliest undelivered
    /// one in event order (pending, running or retrying; dead ones do not block), and only when
    /// it is pending/retrying with `next_attempt_at <= now`. A running head blocks its group.
    public func dueDeliveries(now: UTCTime, limit: Int = 100) throws -> [Delivery] {
        let statement = try db.prepare("""
            SELECT \(Self.columns.split(separator: ",").map { "d." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", "))
            FROM deliveries d
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
        let statement = try db.prepare("SELECT \(Self.columns) FROM deliveries WHERE id = ?")
        statement.bind(1, id)
        return try readDeliveries(statement).first
    }

    /// The deliveries of one event, in row order.
    public func deliveries(eventID: String) throws -> [Delivery] {
        let statement = try db.prepare("SELECT \(Self.columns) FROM deliveries WHERE event_id = ? ORDER BY id")
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
    public func deliveries(status: DeliveryStatus? = nil) throws -> [Delivery] {
        let statement = try db.prepare(
            "SELECT \(Self.columns) FROM deliveries WHERE (?1 IS NULL OR status = ?1) ORDER BY id")
        statement.bind(1, status?.rawValue)
        return try readDeliveries(statement)
    }

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

    private func nowMilliseconds(_ time: UTCTime?) -> Int64 {
        time?.millisecondsSince1970 ?? Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }

    /// Marks a delivery as started (attempt numbers start at 1).
    public func markRunning(id: Int64, attempt: Int, at now: UTCTime? = nil) throws {
        try update("UPDATE deliveries SET status = 'running', attempt = ?2, updated_at_ms = ?3 WHERE id = ?1", id: id) {
            $0.bind(2, attempt)
            $0.bind(3, nowMilliseconds(now))
        }
    }

    /// Terminal success; the last failed attempt's error (if any) is kept for the record.
    public func markDelivered(id: Int64, at now: UTCTime? = nil) throws {
        try update("UPDATE deliveries SET status = 'delivered', updated_at_ms = ?2 WHERE id = ?1", id: id) {
            $0.bind(2, nowMilliseconds(now))
        }
    }

    public func markRetry(id: Int64, nextAttemptAt: UTCTime, error: String, at now: UTCTime? = nil) throws {
        try update("UPDATE deliveries SET status = 'retrying', next_attempt_at_ms = ?2, last_error = ?3, updated_at_ms = ?4 WHERE id = ?1", id: id) {
            $0.bind(2, nextAttemptAt.millisecondsSince1970)
            $0.bind(3, error)
            $0.bind(4, nowMilliseconds(now))
        }
    }

    public func markDead(id: Int64, error: String, at now: UTCTime? = nil) throws {
        try update("UPDATE deliveries SET status = 'dead', last_error = ?2, updated_at_ms = ?3 WHERE id = ?1", id: id) {
            $0.bind(2, error)
            $0.bind(3, nowMilliseconds(now))
        }
    }

    /// Puts every dead delivery back in the queue, due at once whatever clock the worker runs
    /// on (attempt count restarts, the last error is kept); returns how many.
    @discardableResult
    public func requeueDead(at now: UTCTime? = nil) throws -> Int {
        try db.transaction {
            let statement = try db.prepare(
                "UPDATE deliveries SET status = 'pending', attempt = 0, next_attempt_at_ms = 0, updated_at_ms = ?1 WHERE status = 'dead'")
            statement.bind(1, nowMilliseconds(now))
            try statement.run()
            return db.changes
        }
    }

    /// After a crash: deliveries left `running` become `retrying`, due at once (same event id,
    /// same attempt count, so the next attempt is numbered after it). Returns how many.
    @discardableResult
    public func recoverInterrupted(at now: UTCTime? = nil) throws -> Int {
        try db.transaction {
            let statement = try db.prepare(
                "UPDATE deliveries SET status = 'retrying', next_attempt_at_ms = 0, updated_at_ms = ?1 WHERE status = 'running'")
            statement.bind(1, nowMilliseconds(now))
            try statement.run()
            return db.changes
        }
    }
}
