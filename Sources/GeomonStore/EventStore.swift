public import GeomonCore
import CSQLite
import GeomonFormat
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// geomon's database: fence states, events, hook deliveries, recent fixes, the receiver log,
/// MQTT publications, the daemon's status and the engine's state, in one SQLite file (WAL,
/// mode 0600, `user_version` migrations). Each table has its record type and its typed
/// repository (`Tables/`) over the one connection, used directly (`deliveryQueue`, `outbox`,
/// `eventLog`, …); this is the connection's owner and the one place a commit's writes go
/// together into one transaction.
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
    /// `geomon run`'s rule: commits carrying events are synced to the disk (`init`).
    public let syncEventCommits: Bool
    /// Commits made with `synchronous=FULL` (carrying events, with `syncEventCommits`).
    public private(set) var syncedCommits = 0

    // One typed repository per table, over the one connection.
    var engineStateTable: EngineStateTable { EngineStateTable(db: db) }
    var approachStateTable: ApproachStateTable { ApproachStateTable(db: db) }
    var fenceStateTable: FenceStateTable { FenceStateTable(db: db) }

    /// The hook outbox (`deliveries`): the queue the delivery worker drives, the rows
    /// `geomon hooks` lists and requeues.
    public var deliveryQueue: DeliveryTable { DeliveryTable(db: db, path: path) }
    /// The MQTT outbox (`publications`): the stream the publisher drives, bounded by
    /// `publicationLimits`.
    public var outbox: PublicationTable { PublicationTable(db: db, limits: publicationLimits) }

    /// The decided events, in event order.
    public var eventLog: EventTable { EventTable(db: db) }
    /// The recent fixes (`storage.keep_fixes`), packed per commit.
    public var fixLog: FixChunkTable { FixChunkTable(db: db) }
    /// The receiver's switches, as long as the fixes.
    public var receiverSwitchLog: ReceiverLogTable { ReceiverLogTable(db: db) }
    /// What a running daemon last wrote about itself (`geomon status`).
    public var daemonStatus: RuntimeStatusTable { RuntimeStatusTable(db: db) }
    /// The commands received over MQTT, and the fences they pushed.
    public var commandLog: CommandTable { CommandTable(db: db) }
    public var pushedFenceList: PushedFenceTable { PushedFenceTable(db: db) }
    public var placedFenceList: PlacedFenceTable { PlacedFenceTable(db: db) }

    /// Opens (and for writers creates and migrates) the database at `path`.
    ///
    /// Never overwrites a file that is not a geomon database: such a file gives
    /// `StoreError(.notADatabase)`; a newer schema gives `StoreError(.newerSchema)`.
    ///
    /// `synchronous=NORMAL` in WAL mode survives a crash or `kill -9` of the process; only a
    /// power loss may roll back the last commits (the database stays consistent).
    /// `syncEventCommits` (`geomon run`) makes every commit that carries events reach the disk
    /// before it returns (`synchronous=FULL` for that transaction): hooks and the broker act on
    /// an event only once a power cut can no longer take it back, so it is never decided again
    /// under another id. Fix-only commits stay unsynced (at most the last second of fixes is
    /// decided again after a power cut). Replay uses neither.
    ///
    /// `create`: a writer may make the database (a new file, or an empty one); the maintenance
    /// commands open only what a run or replay made.
    public init(path: String, readOnly: Bool = false, create: Bool = true, keepFixes: Duration = .seconds(7 * 86400),
                syncEventCommits: Bool = false) throws {
        self.path = path
        self.syncEventCommits = syncEventCommits
        self.readOnly = readOnly
        self.keepFixes = keepFixes
        if path != ":memory:" { try Self.checkHeader(path: path, readOnly: readOnly || !create) }
        do {
            db = try Connection(path: path, readOnly: readOnly)
            let version = try Int(db.scalarInt("PRAGMA user_version") ?? 0)
            if version > 0 {
                // A schema version without geomon's first tables: another program's file that
                // sets `user_version`; refused before any pragma or migration changes it.
                let own = try db.scalarInt("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('kv', 'fence_state', 'events')") ?? 0
                if own < 3 {
                    throw StoreError(.notADatabase, path: path, message:
                        "not a geomon database (an SQLite database with schema version \(version) but without geomon's tables); the file was left untouched")
                }
            }
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
                if version == 0 {
                    // Another program's SQLite database is left as it is, never merged into.
                    let tables = try db.scalarInt("SELECT count(*) FROM sqlite_master") ?? 0
                    if tables > 0 {
                        throw StoreError(.notADatabase, path: path, message:
                            "not a geomon database (an SQLite database with tables of another program); the file was left untouched")
                    }
                    if !create { throw StoreError(.olderSchema, path: path, message: "not a geomon database (no schema)") }
                }
                try db.execute("PRAGMA journal_mode=WAL")
                try db.execute("PRAGMA synchronous=NORMAL")
                try migrate(from: version)
            }
            oldestFixMilliseconds = try FixChunkTable(db: db).oldestMilliseconds()
        } catch let error as SQLiteError where error.code == SQLiteError.notADatabase || error.code == SQLiteError.corrupt {
            throw StoreError(.notADatabase, path: path, message: "not a geomon database, or it is damaged (\(error.message)); the file was left untouched")
        }
    }

    /// Throws unless `path` is there and an SQLite file (a directory, another file: the
    /// reason), touching nothing: for a command to check before it makes a lock file beside it.
    public static func checkIsDatabaseFile(path: String) throws {
        try checkHeader(path: path, readOnly: true)
    }

    /// Throws when something is at `path` that is no database to open or create (a
    /// directory, another file); nothing there, or an empty file, passes. Touches nothing: for
    /// a command that would create the database, before it makes a lock file beside it.
    public static func checkIsNoOtherFile(path: String) throws {
        var info = stat()
        guard path != ":memory:", stat(path, &info) == 0 else { return }
        try checkHeader(path: path, readOnly: true)
    }

    /// Refuses files that are not SQLite databases before SQLite touches them, and creates a
    /// new database file with mode 0600.
    private static func checkHeader(path: String, readOnly: Bool) throws {
        var info = stat()
        if stat(path, &info) != 0 {
            // Not there is one thing; a directory this user may not search (/var/lib/geomon
            // is the geomon user's alone) is another.
            if errno != ENOENT, errno != ENOTDIR {
                throw StoreError(.missing, path: path, message: "cannot read database: \(String(cString: strerror(errno)))"
                    + (errno == EACCES ? " (a daemon's database is its user's: run this as that user, or as root)" : ""))
            }
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
        if info.st_mode & S_IFMT == S_IFDIR { throw StoreError(.missing, path: path, message: "is a directory, not a database") }
        guard info.st_size > 0 else {
            // An empty file becomes a database (location history): private, as one geomon
            // creates, whatever the umask made it.
            if !readOnly, info.st_mode & S_IFMT == S_IFREG, info.st_mode & 0o077 != 0 { _ = chmod(path, 0o600) }
            return
        }
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
                let step = Migrations.all[next]
                try db.execute(step.sql)
                try step.code?(db)
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

    // MARK: - Engine state

    /// The engine's stored scalars and the database's owner; nil before the first commit.
    public func engineState() throws -> EngineState? {
        try engineStateTable.read()
    }

    /// The engine snapshot last committed (empty for a new database).
    /// Runs `body`'s reads in one read transaction: one commit's state, whatever a running
    /// daemon commits meanwhile (`geomon status`).
    public func consistentRead<T>(_ body: () throws -> T) throws -> T {
        try db.transaction(immediate: false, body)
    }

    public func loadSnapshot() throws -> EngineSnapshot {
        var snapshot = EngineSnapshot()
        snapshot.records = try fenceStateTable.all()
        if let state = try engineStateTable.read() {
            snapshot.usableFixCount = state.usableFixCount
            snapshot.implicitOutside = state.implicitState == .outside
            snapshot.lastFixTime = state.lastFixTime
            snapshot.location = state.location
            snapshot.assumptions = state.assumptions ?? AssumptionState()
            snapshot.movement = state.movement ?? MovementState()
            snapshot.cooldowns = state.cooldowns ?? []
            snapshot.speeding = state.speeding ?? []
            snapshot.mode = state.mode
        }
        snapshot.approaches = try approachStateTable.all()
        return snapshot
    }

    /// The time of the last committed fix (resume point).
    public func lastFixTime() throws -> UTCTime? {
        try engineStateTable.read()?.lastFixTime
    }

    /// Stored fence records, ordered by fence id.
    public func fenceStates() throws -> [FenceStateRecord] {
        try fenceStateTable.all()
    }

    // MARK: - Commit

    /// Commits a batch in ONE transaction: fixes, fence records, scalars, events and one
    /// delivery row per (event, hook), the receiver's switches, MQTT messages, the daemon's
    /// status. Events whose id is already stored are skipped (with their deliveries and
    /// messages), so an event can never be stored twice. Returns the events that were newly
    /// stored, with their sequence numbers.
    @discardableResult
    public func commit(_ batch: CommitBatch) throws -> [StoredEvent] {
        let synced = syncEventCommits && !batch.events.isEmpty
        if synced { try db.execute("PRAGMA synchronous=FULL") }
        defer { if synced { try? db.execute("PRAGMA synchronous=NORMAL") } }
        let stored = try db.transaction {
            // All fixes of the batch in one chunk row (fixes are strictly increasing in time).
            try fixLog.insert(batch.fixes)
            for record in batch.changes.upserts { try fenceStateTable.upsert(record) }
            for id in batch.changes.removals { try fenceStateTable.delete(fenceID: id) }
            if let approaches = batch.changes.approaches { try approachStateTable.replace(with: approaches) }
            try engineStateTable.write(EngineState(profile: batch.profileName, usableFixCount: batch.usableFixCount, lastFixTime: batch.lastFixTime,
                                                   location: batch.location, implicitState: batch.implicitState, assumptions: batch.assumptions,
                                                   movement: batch.movement, cooldowns: batch.cooldowns,
                                                   speeding: batch.speeding, mode: batch.mode))
            var stored: [StoredEvent] = []
            var storedIDs = Set<String>()
            for (event, targets) in batch.events {
                guard let seq = try eventLog.insert(event, profile: batch.profileName) else { continue }
                stored.append(StoredEvent(seq: seq, profile: batch.profileName, event: event))
                storedIDs.insert(event.id)
                for target in targets { try deliveryQueue.insert(event: event, seq: seq, target: target, at: batch.committedAt) }
            }
            if let status = batch.runtimeStatus { try daemonStatus.write(status) }
            if let shift = batch.receiverLogShift { try receiverSwitchLog.shift(afterRow: shift.afterRow, by: shift.by) }
            for change in batch.receiverSwitches { try receiverSwitchLog.insert(change) }
            let publications = batch.publications.filter { $0.eventID.map(storedIDs.contains) ?? true }
            if !publications.isEmpty { try outbox.insert(publications, at: batch.committedAt) }
            if let newest = batch.fixes.last?.time { try pruneFixes(newest: newest) }
            return stored
        }
        if synced { syncedCommits += 1 }
        return stored
    }

    /// Deletes fixes (and the receiver's history) older than `keepFixes` before `newest`.
    private func pruneFixes(newest: UTCTime) throws {
        let cutoff = (newest - keepFixes).millisecondsSince1970
        if oldestFixMilliseconds == nil { oldestFixMilliseconds = try fixLog.oldestMilliseconds() }
        guard let oldest = oldestFixMilliseconds, oldest < cutoff else { return }
        try fixLog.prune(before: cutoff)
        oldestFixMilliseconds = try fixLog.oldestMilliseconds()
        // The receiver's history is kept as long as the fixes.
        try receiverSwitchLog.prune(before: cutoff)
    }

    /// The error a delivery is marked dead with when its event is not stored (a damaged
    /// database): such a row is left out of every listing and never run.
    public static let missingEventError = "its event is not stored (a damaged database)"
}
