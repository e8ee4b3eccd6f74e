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

    /// Opens `path` (read-write, creating it when missing, or read-only). Read-only on a
    /// read-only file system without a write-ahead log opens it as immutable: nothing can
    /// change it there, and SQLite could not create the shared-memory file a WAL database
    /// needs otherwise. (With a log left behind, its -shm is there too and is used.)
    public init(path: String, readOnly: Bool = false, busyTimeoutMilliseconds: Int32 = 5000) throws {
        self.path = path
        var db: OpaquePointer?
        var flags = readOnly
            ? SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
            : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        var name = path
        if readOnly, path != ":memory:", Self.onReadOnlyFileSystem(path), !Self.hasLog(path) {
            flags |= SQLITE_OPEN_URI
            name = "file:" + Self.uriEscaped(path) + "?immutable=1"
        }
        let rc = sqlite3_open_v2(name, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            // The handle must be closed even when open fails.
            let error = SQLiteError(rc, on: db, sql: nil)
            sqlite3_close_v2(db)
            throw error
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    static func hasLog(_ path: String) -> Bool {
        var info = stat()
        return stat(path + "-wal", &info) == 0 && info.st_size > 0
    }

    static func onReadOnlyFileSystem(_ path: String) -> Bool {
        var fs = statvfs()
        return statvfs(path, &fs) == 0 && fs.f_flag & 1 != 0 // 1 = ST_RDONLY
    }

    /// A path as the path part of a `file:` URI (RFC 3986: `%`, `?`, `#` and bytes outside
    /// printable ASCII percent-encoded).
    static func uriEscaped(_ path: String) -> String {
        var out = ""
        for byte in path.utf8 {
            if byte > 0x20, byte < 0x7F, byte != 0x25, byte != 0x3F, byte != 0x23 {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = Array("0123456789ABCDEF")
                out += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 0xF)])
            }
        }
        return out
    }

    /// Runs one or more statements without results.
    public func execute(_ sql: String) throws {
        try check(sqlite3_exec(handle, sql, nil, nil, nil), sql: sql)
    }

    /// Prepares a statement.
    public func prepare(_ sql: String) throws -> Statement {
        try Statement(connection: self, sql: sql)
    }

    private var cache: [String: Statement] = [:]

    /// The prepared statement for `sql`, prepared once per connection and reset for reuse.
    public func statement(_ sql: String) throws -> Statement {
        if let statement = cache[sql] { return statement.reset() }
        let statement = try prepare(sql)
        cache[sql] = statement
        return statement
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

    /// Every result code goes through here: OK, ROW and DONE pass, anything else is the
    /// `SQLiteError` SQLite describes.
    @discardableResult
    func check(_ rc: Int32, sql: String?) throws -> Int32 {
        guard rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE else {
            throw SQLiteError(rc, on: handle, sql: sql)
        }
        return rc
    }
}
