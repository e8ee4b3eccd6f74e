import CSQLite

/// An SQLite failure: the primary and extended result codes, SQLite's message, and the SQL
/// that failed (bound values are never included, so they cannot leak into logs).
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// Primary result code (`extended & 0xFF`), e.g. 26 for SQLITE_NOTADB.
    public var code: Int32
    public var extended: Int32
    public var message: String
    public var sql: String?

    public init(code: Int32, extended: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.extended = extended
        self.message = message
        self.sql = sql
    }

    /// What SQLite says of result code `rc` on a connection: its message and extended code.
    init(_ rc: Int32, on handle: OpaquePointer?, sql: String?) {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
        let extended = handle.map { sqlite3_extended_errcode($0) } ?? rc
        self.init(code: rc & 0xFF, extended: extended, message: message, sql: sql)
    }

    public static let busy: Int32 = 5
    public static let corrupt: Int32 = 11
    public static let notADatabase: Int32 = 26
    public static let constraint: Int32 = 19

    public var description: String {
        var text = "SQLite error \(code) (extended \(extended)): \(message)"
        // The statement's first line names it; a migration's whole script is no error message.
        if let sql {
            let lines = sql.split(whereSeparator: \.isNewline).map { String($0.drop(while: \.isWhitespace)) }.filter { !$0.isEmpty }
            if let first = lines.first { text += " [\(first)\(lines.count > 1 ? " …" : "")]" }
        }
        return text
    }
}
