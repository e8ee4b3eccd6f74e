import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// `SQLITE_TRANSIENT` does not import into Swift; defined as GRDB does.
let SQLITE_TRANSIENT = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

/// One SQLite connection. Owns the handle and closes it in `deinit`.
public final class Connection {
    let handle: OpaquePointer
    public let path: String

    /// Opens `path` (read-write, creating it when missing, or read-only).
    public init(path: String, readOnly: Bool = false, busyTimeoutMilliseconds: Int32 = 5000) throws {
        self.path = path
        var db: OpaquePointer?
        let flags = readOnly
            ? SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
            : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            // The handle must be closed even when open fails.
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            let extended = db.map { sqlite3_extended_errcode($0) } ?? rc
            sqlite3_close_v2(db)
            throw SQLiteError(code: rc & 0xFF, extended: extended, message: message)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements without results.
    public func execute(_ sql: String) throws {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(errorMessage)
            throw SQLiteError(code: rc & 0xFF, extended: sqlite3_extended_errcode(handle), message: message, sql: sql)
        }
    }

    /// Prepares a statement.
    public func prepare(_ sql: String) throws -> Statement {
        try Statement(connection: self, sql: sql)
    }

    /// An integer from a single-value query (`PRAGMA user_version`, `SELECT count(*)`).
    public func scalarInt(_ sql: String) throws -> Int64? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.isNull(0) ? nil : statement.int64(0)
    }

    /// Runs `body` in a transaction (`BEGIN IMMEDIATE` by default); rolls back and rethrows
    /// the first error on a throw.
    public func transaction<T>(immediate: Bool = true, _ body: () throws -> T) throws -> T {
        try execute(immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Rows changed by the last statement.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    func check(_ rc: Int32, sql: String?) throws {
        guard rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE else {
            throw SQLiteError(code: rc & 0xFF, extended: sqlite3_extended_errcode(handle),
                              message: String(cString: sqlite3_errmsg(handle)), sql: sql)
        }
    }
}
