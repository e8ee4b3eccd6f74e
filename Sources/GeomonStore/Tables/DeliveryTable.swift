public import GeomonCore
import FoundationEssentials
import GeomonFormat
import GeomonSystem

/// The `deliveries` table: one row per (event, hook), the hook outbox (`DeliveryQueue`).
///
/// Clock-free: new rows and recovered or requeued ones are due at once (`next_attempt_at` 0),
/// so the worker may run on the wall clock while the events carry replay's virtual times.
public struct DeliveryTable: DeliveryQueue {
    let db: Connection
    let path: String

    static let columns = ["id", "hook_key", "argv", "status", "attempt", "next_attempt_at_ms", "last_error"]
    static var selectList: String {
        (columns.map { "d." + $0 } + EventTable.columns.map { "e.\($0) AS e_\($0)" }).joined(separator: ", ")
    }
    static let from = "FROM deliveries d LEFT JOIN events e ON e.id = d.event_id"

    /// A delivery row with its event (the columns of `selectList`); nil when the event is not
    /// stored (a damaged database: the row cannot be run or shown).
    static func read(_ r: Statement) -> Delivery? {
        let id = r.int64("id")
        guard r.optionalText("e_id") != nil else { return nil }
        let status = DeliveryStatus(rawValue: r.text("status")) ?? .pending
        let next = r.int64("next_attempt_at_ms")
        return Delivery(
            id: id, event: EventTable.read(r, prefix: "e_").event, hookKey: r.text("hook_key"),
            argv: parseStringArray(r.text("argv")) ?? [],
            status: status, attempt: r.int("attempt"),
            nextAttemptAt: status == .retrying && next > 0 ? UTCTime(millisecondsSince1970: next) : nil,
            lastError: r.optionalText("last_error"))
    }

    /// The rows of `r` with their events; rows whose event is missing are left out, their ids
    /// in `orphans`.
    private func read(_ r: Statement, orphans: inout [Int64]) throws -> [Delivery] {
        var result: [Delivery] = []
        while try r.step() {
            if let delivery = Self.read(r) { result.append(delivery) } else { orphans.append(r.int64("id")) }
        }
        return result
    }

    private func read(_ r: Statement) throws -> [Delivery] {
        var orphans: [Int64] = []
        return try read(r, orphans: &orphans)
    }

    /// Parses a JSON array of strings (nil when it is anything else).
    static func parseStringArray(_ text: String) -> [String]? {
        try? JSONDecoder().decode([String].self, from: Data(text.utf8))
    }

    func insert(event: GeoEvent, seq: Int64, target: DeliveryTarget, at time: UTCTime) throws {
        let s = try db.statement("""
            INSERT OR IGNORE INTO deliveries(event_id, hook_key, argv, fence_id, seq, status, attempt, next_attempt_at_ms, updated_at_ms)
            VALUES (?,?,?,?,?,'pending',0,?,?)
            """)
        s.bind(1, event.id)
        s.bind(2, target.hookKey)
        s.bind(3, JSON.array(target.argv))
        s.bind(4, event.fenceID ?? "")
        s.bind(5, seq)
        s.bind(6, Int64(0))  // due at once, whatever clock the worker runs on
        s.bind(7, time.millisecondsSince1970)
        try s.run()
    }

    /// Deliveries ready to start: for each (hook_key, fence_id), only the earliest undelivered
    /// one in event order (pending, running or retrying; dead ones do not block), and only when
    /// it is pending/retrying with `next_attempt_at <= now`. A running head blocks its group.
    public func dueDeliveries(now: UTCTime, limit: Int) throws -> [Delivery] {
        let statement = try db.statement("""
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
        var orphans: [Int64] = []
        let due = try read(statement, orphans: &orphans)
        // A row whose event is gone (a damaged database) cannot run: every such row is marked
        // dead in one statement, so none heads its queue, and the deliveries behind them are
        // looked up again.
        if !orphans.isEmpty, try retireOrphans() > 0 { return try dueDeliveries(now: now, limit: limit) }
        return due
    }

    /// Marks dead every open delivery whose event is not stored (a damaged database), with
    /// `EventStore.missingEventError`; returns how many.
    @discardableResult
    func retireOrphans() throws -> Int {
        let statement = try db.statement("""
            UPDATE deliveries SET status = 'dead', last_error = ?1, updated_at_ms = ?2
            WHERE status IN ('pending','running','retrying') AND NOT \(Self.eventStored)
            """)
        statement.bind(1, EventStore.missingEventError)
        statement.bind(2, nowMilliseconds())
        try statement.run()
        return db.changes
    }

    /// SQL: the row's event is stored.
    static let eventStored = "EXISTS (SELECT 1 FROM events e WHERE e.id = deliveries.event_id)"

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
        let statement = try db.statement("SELECT \(Self.selectList) \(Self.from) WHERE d.id = ?")
        statement.bind(1, id)
        return try read(statement).first
    }

    /// The deliveries of one event, in row order.
    public func deliveries(eventID: String) throws -> [Delivery] {
        let statement = try db.statement("SELECT \(Self.selectList) \(Self.from) WHERE d.event_id = ? ORDER BY d.id")
        statement.bind(1, eventID)
        return try read(statement)
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
    func deliveries(status: DeliveryStatus?) throws -> [Delivery] {
        let statement = try db.statement(
            "SELECT \(Self.selectList) \(Self.from) WHERE (?1 IS NULL OR d.status = ?1) ORDER BY d.id")
        statement.bind(1, status?.rawValue)
        return try read(statement)
    }

    /// Deliveries not yet delivered or dead.
    public func openCount() throws -> Int { try pendingDeliveryCount() }

    /// Deliveries not yet delivered or dead.
    public func pendingDeliveryCount() throws -> Int {
        try Int(db.scalarInt("SELECT count(*) FROM deliveries WHERE status IN ('pending','running','retrying') AND \(Self.eventStored)") ?? 0)
    }

    private func update(_ sql: String, id: Int64, bind: (Statement) -> Void) throws {
        try db.transaction {
            let statement = try db.statement(sql)
            bind(statement)
            statement.bind(1, id)
            try statement.run()
            if db.changes != 1 {
                throw StoreError(.noSuchRow, path: path, message: "no delivery with id \(id)")
            }
        }
    }

    private func nowMilliseconds() -> Int64 {
        WallClock.now().millisecondsSince1970
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

    /// Attempt `attempt` was cut short by a stop: due again now, and not counted unless the
    /// same attempt was cut short just before (`lastError` already `note`); a row no longer
    /// running that attempt is left alone.
    public func markInterrupted(id: Int64, attempt: Int, attempts: Int, note: String) throws {
        let statement = try db.statement(
            "UPDATE deliveries SET status = CASE WHEN last_error IS ?4 AND ?2 >= ?5 THEN 'dead' ELSE 'retrying' END, "
                + "attempt = CASE WHEN last_error IS ?4 THEN ?2 ELSE ?2 - 1 END, last_error = ?4, "
                + "next_attempt_at_ms = 0, updated_at_ms = ?3 WHERE id = ?1 AND status = 'running' AND attempt = ?2")
        statement.bind(1, id)
        statement.bind(2, attempt)
        statement.bind(3, nowMilliseconds())
        statement.bind(4, note)
        statement.bind(5, attempts)
        try statement.run()
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
            let statement = try db.statement(
                "UPDATE deliveries SET status = 'pending', attempt = 0, next_attempt_at_ms = 0, updated_at_ms = ?1 WHERE status = 'dead' AND \(Self.eventStored)")
            statement.bind(1, nowMilliseconds())
            try statement.run()
            return db.changes
        }
    }

    /// The profile replaced hook command `from` by `to` (`HookCatalog.replacements`): the
    /// deliveries not yet delivered (waiting, running, dead) follow the new command, but for an
    /// event that already has one for it (a command used before). Returns how many.
    @discardableResult
    public func rekey(from: String, to: String, argv: [String]) throws -> Int {
        try db.transaction {
            let statement = try db.statement(
                """
                UPDATE deliveries SET hook_key = ?1, argv = ?2, updated_at_ms = ?3
                WHERE hook_key = ?4 AND status IN ('pending','running','retrying','dead')
                  AND NOT EXISTS (SELECT 1 FROM deliveries o WHERE o.event_id = deliveries.event_id AND o.hook_key = ?1)
                """)
            statement.bind(1, to)
            statement.bind(2, JSON.array(argv))
            statement.bind(3, nowMilliseconds())
            statement.bind(4, from)
            try statement.run()
            return db.changes
        }
    }

    /// After a crash: deliveries left `running` become `retrying`, due at once (same event id,
    /// same attempt count, so the next attempt is numbered after it); one whose attempt was the
    /// last of `attempts` becomes `dead` (the crash counted it, and a hook that takes the
    /// machine down every time would otherwise run after every boot). Returns how many.
    public func recoverInterrupted(attempts: Int) throws {
        _ = try recoverInterruptedCount(attempts: attempts)
    }

    /// As `recoverInterrupted`, returning how many rows it recovered (retrying or dead).
    @discardableResult
    public func recoverInterruptedCount(attempts: Int = .max) throws -> Int {
        try db.transaction {
            let statement = try db.statement(
                "UPDATE deliveries SET status = CASE WHEN attempt >= ?2 THEN 'dead' ELSE 'retrying' END, "
                    + "last_error = CASE WHEN attempt >= ?2 THEN 'attempt ' || attempt || '/' || ?2 "
                    + "|| ': geomon stopped during it without recording its end (a crash, a reboot, or the hook took geomon down)' "
                    + "ELSE last_error END, next_attempt_at_ms = 0, updated_at_ms = ?1 WHERE status = 'running'")
            statement.bind(1, nowMilliseconds())
            statement.bind(2, attempts)
            try statement.run()
            return db.changes
        }
    }
}
