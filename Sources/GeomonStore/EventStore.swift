public import GeomonCore
import CSQLite
import GeomonFormat
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// geomon's database: fence states, events, deliveries, recent fixes and a small key/value
/// table, in one SQLite file (WAL, mode 0600, `user_version` migrations).
///
/// One writer; readers (`status`, `events`, `export`) open the same file with `readOnly`.
public final class EventStore {
    public let path: String
    public let readOnly: Bool
    let db: Connection
    /// Retention of the fixes table, relative to the newest stored fix.
    public var keepFixes: Duration
    /// The outbox's bound (`publish.mqtt.keep`); nil keeps every message.
    public var publicationLimits: PublicationLimits?

    /// The schema version this geomon writes.
    public static var schemaVersion: Int { Migrations.latestVersion }

    private var oldestFixMilliseconds: Int64?
    private lazy var insertChunk = try? db.prepare(
        "INSERT OR REPLACE INTO fix_chunks(first_ms, last_ms, count, data) VALUES (?,?,?,?)")

    /// Opens (and for writers creates and migrates) the database at `path`.
    ///
    /// Never overwrites a file that is not a geomon database: such a file gives
    /// `StoreError(.notADatabase)`; a newer schema gives `StoreError(.newerSchema)`.
    ///
    /// `syncEveryCommit` selects `PRAGMA synchronous=FULL` (every commit reaches the disk before
    /// it returns; for `geomon run`); the default `NORMAL` in WAL mode survives a crash or
    /// `kill -9` of the process, and only a power loss may roll back the last commits (the
    /// database stays consistent). Replay uses the default.
    public init(path: String, readOnly: Bool = false, keepFixes: Duration = .seconds(7 * 86400), syncEveryCommit: Bool = false) throws {
        self.path = path
        self.readOnly = readOnly
        self.keepFixes = keepFixes
        if path != ":memory:" { try Self.checkHeader(path: path, readOnly: readOnly) }
        do {
            db = try Connection(path: path, readOnly: readOnly)
            let version = try Int(db.scalarInt("PRAGMA user_version") ?? 0)
            if version > Migrations.latestVersion {
                throw StoreError(.newerSchema, path: path, message:
                    "database schema version \(version) is newer than this geomon supports (\(Migrations.latestVersion)); use a newer geomon")
            }
            if readOnly {
                if version < Migrations.latestVersion {
                    throw StoreError(.olderSchema, path: path, message:
                        version == 0 ? "not a geomon database (no schema)"
                                     : "database schema version \(version) is older than \(Migrations.latestVersion); open it once with 'geomon replay' or 'geomon run' to migrate")
                }
            } else {
                try db.execute("PRAGMA journal_mode=WAL")
                try db.execute(syncEveryCommit ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL")
                try migrate(from: version)
            }
            oldestFixMilliseconds = try db.scalarInt("SELECT min(first_ms) FROM fix_chunks")
        } catch let error as SQLiteError where error.code == SQLiteError.notADatabase || error.code == SQLiteError.corrupt {
            throw StoreError(.notADatabase, path: path, message: "not a geomon database, or it is damaged (\(error.message)); the file was left untouched")
        }
    }

    /// Refuses files that are not SQLite databases before SQLite touches them, and creates a
    /// new database file with mode 0600.
    private static func checkHeader(path: String, readOnly: Bool) throws {
        var info = stat()
        if stat(path, &info) != 0 {
            guard !readOnly else {
                throw StoreError(.missing, path: path, message: "no such database")
            }
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                throw StoreError(.missing, path: path, message: "cannot create database: \(String(cString: strerror(errno)))")
            }
            close(fd)
            return
        }
        guard info.st_size > 0 else { return }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw StoreError(.missing, path: path, message: "cannot open database: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var header = [UInt8](repeating: 0, count: 16)
        let count = read(fd, &header, 16)
        let magic = Array("SQLite format 3".utf8) + [0]
        if count != 16 || header != magic {
            throw StoreError(.notADatabase, path: path, message: "not a geomon database (not an SQLite file); the file was left untouched")
        }
    }

    private func migrate(from version: Int) throws {
        guard version < Migrations.latestVersion else { return }
        for next in version..<Migrations.latestVersion {
            try db.transaction {
                // Re-check inside the write lock: another writer may have migrated meanwhile.
                let current = try Int(db.scalarInt("PRAGMA user_version") ?? 0)
                guard current == next else { return }
                try db.execute(Migrations.all[next])
                try db.execute("PRAGMA user_version = \(next + 1)")
            }
        }
    }

    /// The database's `PRAGMA user_version`.
    public func userVersion() throws -> Int {
        try Int(db.scalarInt("PRAGMA user_version") ?? 0)
    }

    /// The journal mode (`wal` for a writer).
    public func journalMode() throws -> String {
        let statement = try db.prepare("PRAGMA journal_mode")
        return try statement.step() ? statement.text(0) : ""
    }

    // MARK: - Key/value

    public func value(forKey key: String) throws -> String? {
        let statement = try db.prepare("SELECT value FROM kv WHERE key = ?")
        statement.bind(1, key)
        return try statement.step() ? statement.text(0) : nil
    }

    public func setValue(_ value: String, forKey key: String) throws {
        try db.transaction { try writeValue(value, forKey: key) }
    }

    private lazy var upsertKV = try? db.prepare(
        "INSERT INTO kv(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value")

    private func writeValue(_ value: String, forKey key: String) throws {
        guard let statement = upsertKV else { throw storeBug("kv") }
        statement.reset()
        statement.bind(1, key)
        statement.bind(2, value)
        try statement.run()
    }

    // MARK: - Engine state

    /// The engine snapshot last committed (empty for a new database).
    public func loadSnapshot() throws -> EngineSnapshot {
        var snapshot = EngineSnapshot()
        snapshot.records = try fenceStates()
        if let text = try value(forKey: "usable_fix_count"), let count = Int(text) { snapshot.usableFixCount = count }
        if let text = try value(forKey: "last_fix_ms"), let ms = Int64(text) { snapshot.lastFixTime = UTCTime(millisecondsSince1970: ms) }
        if let text = try value(forKey: "location") {
            let parts = text.split(separator: ",")
            if parts.count == 3, let ms = Int64(parts[0]), let lat = Double(parts[1]), let lon = Double(parts[2]) {
                snapshot.location = LocationReference(time: UTCTime(millisecondsSince1970: ms), coordinate: Coordinate(latitude: lat, longitude: lon))
            }
        }
        return snapshot
    }

    /// The time of the last committed fix (resume point).
    public func lastFixTime() throws -> UTCTime? {
        try value(forKey: "last_fix_ms").flatMap(Int64.init).map { UTCTime(millisecondsSince1970: $0) }
    }

    /// Stored fence records, ordered by fence id.
    public func fenceStates() throws -> [FenceStateRecord] {
        let statement = try db.prepare("""
            SELECT fence_id, state, since_ms, since_lat, since_lon, since_accuracy_m, dwell_fired,
                   pending_state, pending_count, pending_ms, pending_lat, pending_lon, pending_accuracy_m, pending_s_m
            FROM fence_state ORDER BY fence_id
            """)
        var records: [FenceStateRecord] = []
        while try statement.step() {
            var record = FenceStateRecord(fenceID: statement.text(0), state: FenceState(rawValue: statement.text(1)) ?? .unknown)
            record.stateSince = statement.optionalInt64(2).map { UTCTime(millisecondsSince1970: $0) }
            if let lat = statement.optionalDouble(3), let lon = statement.optionalDouble(4) {
                record.sinceCoordinate = Coordinate(latitude: lat, longitude: lon)
            }
            record.sinceAccuracyMeters = statement.optionalDouble(5)
            record.dwellFired = statement.int64(6) != 0
            if let pendingText = statement.optionalText(7), let state = FenceState(rawValue: pendingText),
               let ms = statement.optionalInt64(9) {
                record.pending = PendingTransition(
                    state: state, count: statement.int(8), firstTime: UTCTime(millisecondsSince1970: ms),
                    firstCoordinate: Coordinate(latitude: statement.double(10), longitude: statement.double(11)),
                    firstAccuracyMeters: statement.double(12),
                    firstSignedDistanceMeters: statement.optionalDouble(13) ?? .infinity)
            }
            records.append(record)
        }
        return records
    }

    private lazy var upsertFence = try? db.prepare("""
        INSERT OR REPLACE INTO fence_state(fence_id, state, since_ms, since_lat, since_lon, since_accuracy_m, dwell_fired,
            pending_state, pending_count, pending_ms, pending_lat, pending_lon, pending_accuracy_m, pending_s_m)
        VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)
        """)
    private lazy var deleteFence = try? db.prepare("DELETE FROM fence_state WHERE fence_id = ?")
    private lazy var insertEvent = try? db.prepare("""
        INSERT INTO events(id, profile, kind, fence_id, fence_name, time_ms, lat, lon, accuracy_m, rule)
        VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO NOTHING
        """)
    private lazy var insertDelivery = try? db.prepare("""
        INSERT OR IGNORE INTO deliveries(event_id, hook_key, argv, fence_id, seq, status, attempt, next_attempt_at_ms, updated_at_ms)
        VALUES (?,?,?,?,?,'pending',0,?,?)
        """)

    private func storeBug(_ what: String) -> SQLiteError {
        SQLiteError(code: 1, extended: 1, message: "could not prepare the \(what) statement")
    }

    /// Commits a batch in ONE transaction: fixes, fence records, scalars, events and one
    /// delivery row per (event, hook). Events whose id is already stored are skipped (with
    /// their deliveries), so an event can never be stored twice. Returns the events that were
    /// newly stored, with their sequence numbers.
    @discardableResult
    public func commit(_ batch: CommitBatch) throws -> [StoredEvent] {
        guard let insertChunk, let upsertFence, let deleteFence, let insertEvent, let insertDelivery else {
            throw storeBug("commit")
        }
        return try db.transaction {
            // All fixes of the batch in one chunk row (fixes are strictly increasing in time).
            if let first = batch.fixes.first, let last = batch.fixes.last {
                insertChunk.bind(1, first.time.millisecondsSince1970)
                insertChunk.bind(2, last.time.millisecondsSince1970)
                insertChunk.bind(3, batch.fixes.count)
                insertChunk.bind(4, blob: FixChunk.encode(batch.fixes))
                try insertChunk.run()
            }
            for record in batch.changes.upserts {
                upsertFence.reset()
                upsertFence.bind(1, record.fenceID)
                upsertFence.bind(2, record.state.rawValue)
                upsertFence.bind(3, record.stateSince?.millisecondsSince1970)
                upsertFence.bind(4, record.sinceCoordinate?.latitude)
                upsertFence.bind(5, record.sinceCoordinate?.longitude)
                upsertFence.bind(6, record.sinceAccuracyMeters)
                upsertFence.bind(7, record.dwellFired ? 1 : 0)
                upsertFence.bind(8, record.pending?.state.rawValue)
                upsertFence.bind(9, record.pending?.count ?? 0)
                upsertFence.bind(10, record.pending?.firstTime.millisecondsSince1970)
                upsertFence.bind(11, record.pending?.firstCoordinate.latitude)
                upsertFence.bind(12, record.pending?.firstCoordinate.longitude)
                upsertFence.bind(13, record.pending?.firstAccuracyMeters)
                let s = record.pending?.firstSignedDistanceMeters
                upsertFence.bind(14, s.flatMap { $0.isFinite ? $0 : nil })
                try upsertFence.run()
            }
            for id in batch.changes.removals {
                deleteFence.reset()
                deleteFence.bind(1, id)
                try deleteFence.run()
            }
            if let last = batch.lastFixTime {
                try writeValue(String(last.millisecondsSince1970), forKey: "last_fix_ms")
            }
            try writeValue(String(batch.usableFixCount), forKey: "usable_fix_count")
            if let location = batch.location {
                try writeValue("\(location.time.millisecondsSince1970),\(location.coordinate.latitude),\(location.coordinate.longitude)", forKey: "location")
            }
            try writeValue(batch.profileName, forKey: "profile")
            for (key, value) in batch.keyValues.sorted(by: { $0.key < $1.key }) {
                try writeValue(value, forKey: key)
            }
            var stored: [StoredEvent] = []
            var storedIDs = Set<String>()
            for (event, targets) in batch.events {
                insertEvent.reset()
                insertEvent.bind(1, event.id)
                insertEvent.bind(2, batch.profileName)
                insertEvent.bind(3, event.kind.rawValue)
                insertEvent.bind(4, event.fenceID)
                insertEvent.bind(5, event.fenceName)
                insertEvent.bind(6, event.time.millisecondsSince1970)
                insertEvent.bind(7, event.coordinate.latitude)
                insertEvent.bind(8, event.coordinate.longitude)
                insertEvent.bind(9, event.accuracyMeters)
                insertEvent.bind(10, event.rule.text)
                try insertEvent.run()
                guard db.changes == 1 else { continue }
                let seq = db.lastInsertRowID
                stored.append(StoredEvent(seq: seq, profile: batch.profileName, event: event))
                storedIDs.insert(event.id)
                for target in targets {
                    insertDelivery.reset()
                    insertDelivery.bind(1, event.id)
                    insertDelivery.bind(2, target.hookKey)
                    insertDelivery.bind(3, JSON.array(target.argv))
                    insertDelivery.bind(4, event.fenceID ?? "")
                    insertDelivery.bind(5, seq)
                    insertDelivery.bind(6, Int64(0))  // due at once, whatever clock the worker runs on
                    insertDelivery.bind(7, batch.committedAt.millisecondsSince1970)
                    try insertDelivery.run()
                }
            }
            if let status = batch.runtimeStatus {
                try RuntimeStatusTable(db: db).write(status)
            }
            if let shift = batch.receiverLogShift {
                let update = try db.prepare("UPDATE receiver_log SET time_ms = time_ms + ? WHERE rowid > ?")
                update.bind(1, shift.by.wholeMilliseconds)
                update.bind(2, shift.afterRow)
                try update.run()
            }
            if !batch.receiverSwitches.isEmpty {
                let insert = try db.prepare("INSERT INTO receiver_log (time_ms, receiver_on, reason) VALUES (?, ?, ?)")
                for change in batch.receiverSwitches {
                    insert.reset()
                    insert.bind(1, change.time.millisecondsSince1970)
                    insert.bind(2, change.on ? 1 : 0)
                    insert.bind(3, change.reason)
                    try insert.run()
                }
            }
            if !batch.publications.isEmpty {
                try insertPublications(batch.publications.filter { $0.eventID.map(storedIDs.contains) ?? true }, at: batch.committedAt)
            }
            if let newest = batch.fixes.last?.time {
                try pruneFixes(newest: newest)
            }
            return stored
        }
    }

    /// Deletes fixes older than `keepFixes` before `newest`: whole chunks at once, at most
    /// 1,000 per commit, and the one chunk straddling the cutoff is rewritten without them.
    private func pruneFixes(newest: UTCTime) throws {
        let cutoff = (newest - keepFixes).millisecondsSince1970
        if oldestFixMilliseconds == nil { oldestFixMilliseconds = (try? db.scalarInt("SELECT min(first_ms) FROM fix_chunks")) ?? nil }
        guard let oldest = oldestFixMilliseconds, oldest < cutoff else { return }
        let delete = try db.prepare(
            "DELETE FROM fix_chunks WHERE first_ms IN (SELECT first_ms FROM fix_chunks WHERE last_ms < ? ORDER BY first_ms LIMIT 1000)")
        delete.bind(1, cutoff)
        try delete.run()
        let straddling = try db.prepare("SELECT first_ms, data FROM fix_chunks WHERE first_ms < ? AND last_ms >= ?")
        straddling.bind(1, cutoff)
        straddling.bind(2, cutoff)
        var rewrite: (Int64, [Fix])?
        if try straddling.step() {
            rewrite = (straddling.int64(0), straddling.withBlob(1) { FixChunk.decode($0) }.filter { $0.time.millisecondsSince1970 >= cutoff })
        }
        straddling.reset()
        if let (firstMilliseconds, kept) = rewrite {
            let remove = try db.prepare("DELETE FROM fix_chunks WHERE first_ms = ?")
            remove.bind(1, firstMilliseconds)
            try remove.run()
            if let first = kept.first, let last = kept.last, let insertChunk {
                insertChunk.bind(1, first.time.millisecondsSince1970)
                insertChunk.bind(2, last.time.millisecondsSince1970)
                insertChunk.bind(3, kept.count)
                insertChunk.bind(4, blob: FixChunk.encode(kept))
                try insertChunk.run()
            }
        }
        oldestFixMilliseconds = try db.scalarInt("SELECT min(first_ms) FROM fix_chunks")
        // The receiver's history is kept as long as the fixes.
        let log = try db.prepare("DELETE FROM receiver_log WHERE time_ms < ?")
        log.bind(1, cutoff)
        try log.run()
    }

    // MARK: - Reading

    /// Stored events in event order, optionally only those at or after `since`, of one fence,
    /// and at most `limit` of them (the latest, still in event order).
    public func events(since: UTCTime? = nil, fence: String? = nil, limit: Int? = nil) throws -> [StoredEvent] {
        let statement = try db.prepare("""
            SELECT * FROM (
              SELECT seq, profile, id, kind, fence_id, fence_name, time_ms, lat, lon, accuracy_m, rule
              FROM events WHERE time_ms >= ?1 AND (?2 IS NULL OR fence_id = ?2) ORDER BY seq DESC LIMIT ?3
            ) ORDER BY seq
            """)
        statement.bind(1, since?.millisecondsSince1970 ?? Int64.min)
        statement.bind(2, fence)
        statement.bind(3, limit ?? -1)
        return try readEvents(statement)
    }

    /// How many events are stored.
    public func eventCount() throws -> Int {
        try Int(db.scalarInt("SELECT count(*) FROM events") ?? 0)
    }

    /// Rows of `seq, profile, id, kind, fence_id, fence_name, time_ms, lat, lon, accuracy_m, rule`.
    func readEvents(_ statement: Statement) throws -> [StoredEvent] {
        var result: [StoredEvent] = []
        while try statement.step() {
            let event = GeoEvent(
                id: statement.text(2), kind: EventKind(rawValue: statement.text(3)) ?? .location,
                fenceID: statement.optionalText(4), fenceName: statement.optionalText(5),
                time: UTCTime(millisecondsSince1970: statement.int64(6)),
                coordinate: Coordinate(latitude: statement.double(7), longitude: statement.double(8)),
                accuracyMeters: statement.double(9), rule: .recorded(statement.text(10)))
            result.append(StoredEvent(seq: statement.int64(0), profile: statement.text(1), event: event))
        }
        return result
    }

    /// Calls `body` for each stored fix in time order (at or after `since`).
    public func forEachFix(since: UTCTime? = nil, _ body: (Fix) throws -> Void) throws {
        let from = since?.millisecondsSince1970 ?? Int64.min
        let statement = try db.prepare("SELECT data FROM fix_chunks WHERE last_ms >= ? ORDER BY first_ms")
        statement.bind(1, from)
        while try statement.step() {
            for fix in statement.withBlob(0, { FixChunk.decode($0) }) where fix.time.millisecondsSince1970 >= from {
                try body(fix)
            }
        }
    }

    /// What the daemon last wrote about itself, if it ever ran on this database.
    public func runtimeStatus() throws -> RuntimeStatus? {
        try RuntimeStatusTable(db: db).read()
    }

    /// The receiver log's last row (0 when empty): the switches stored after it are a later
    /// run's.
    public func receiverLogLastRow() throws -> Int64 {
        try db.scalarInt("SELECT coalesce(max(rowid), 0) FROM receiver_log") ?? 0
    }

    /// The stored receiver switches in time order (as long as fixes are kept).
    public func receiverSwitches() throws -> [ReceiverSwitch] {
        let statement = try db.prepare("SELECT time_ms, receiver_on, reason FROM receiver_log ORDER BY time_ms, rowid")
        var result: [ReceiverSwitch] = []
        while try statement.step() {
            result.append(ReceiverSwitch(time: UTCTime(millisecondsSince1970: statement.int64(0)), on: statement.int64(1) != 0, reason: statement.text(2)))
        }
        return result
    }

    public func fixCount() throws -> Int {
        try Int(db.scalarInt("SELECT coalesce(sum(count), 0) FROM fix_chunks") ?? 0)
    }

    /// The newest stored fix, if any.
    public func lastFix() throws -> Fix? {
        let statement = try db.prepare("SELECT data FROM fix_chunks ORDER BY first_ms DESC LIMIT 1")
        guard try statement.step() else { return nil }
        return statement.withBlob(0) { FixChunk.decode($0) }.last
    }
}
