import CSQLite

/// A prepared statement; finalized in `deinit`. Reuse it: `reset()` + bind + `step()`.
public final class Statement {
    let handle: OpaquePointer
    unowned let connection: Connection
    public let sql: String

    init(connection: Connection, sql: String) throws {
        self.connection = connection
        self.sql = sql
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        do {
            try connection.check(rc, sql: sql)
        } catch {
            sqlite3_finalize(statement)
            throw error
        }
        guard let statement else { throw SQLiteError(SQLITE_MISUSE, on: connection.handle, sql: sql) }
        handle = statement
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Resets the statement and clears its bindings.
    @discardableResult
    public func reset() -> Statement {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        return self
    }

    // Binding is 1-based, like SQLite.
    public func bind(_ index: Int32, _ value: Int64?) {
        if let value { sqlite3_bind_int64(handle, index, value) } else { sqlite3_bind_null(handle, index) }
    }

    public func bind(_ index: Int32, _ value: Int) {
        sqlite3_bind_int64(handle, index, Int64(value))
    }

    public func bind(_ index: Int32, _ value: Double?) {
        if let value { sqlite3_bind_double(handle, index, value) } else { sqlite3_bind_null(handle, index) }
    }

    public func bind(_ index: Int32, _ value: String?) {
        guard var value else {
            sqlite3_bind_null(handle, index)
            return
        }
        // Native strings hand out their UTF-8 without a copy; SQLite copies (TRANSIENT).
        value.withUTF8 { bytes in
            _ = bytes.withMemoryRebound(to: CChar.self) {
                sqlite3_bind_text(handle, index, $0.baseAddress, Int32($0.count), SQLITE_TRANSIENT)
            }
        }
    }

    public func bind(_ index: Int32, blob bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), SQLITE_TRANSIENT) }
    }

    /// The bytes of a BLOB column, valid only inside `body`.
    public func withBlob<T>(_ column: Int32, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let pointer = sqlite3_column_blob(handle, column) else {
            return try body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Steps once: true when a row is available, false when done.
    @discardableResult
    public func step() throws -> Bool {
        do {
            return try connection.check(sqlite3_step(handle), sql: sql) == SQLITE_ROW
        } catch {
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Steps to completion, then resets (for INSERT/UPDATE/DELETE).
    public func run() throws {
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    // Columns are 0-based, like SQLite.
    public func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
    public func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    public func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(handle, column)) }
    public func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
    public func optionalDouble(_ column: Int32) -> Double? { isNull(column) ? nil : double(column) }
    public func optionalInt64(_ column: Int32) -> Int64? { isNull(column) ? nil : int64(column) }
    public func text(_ column: Int32) -> String {
        guard let cString = sqlite3_column_text(handle, column) else { return "" }
        return String(cString: cString)
    }
    public func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }

    // Reading by column name: rows are decoded by what a column is called, not where it is.
    private var columnIndex: [String: Int32]?

    /// The index of the result column `name`; a name the statement does not select is a bug
    /// in the statement's repository (it traps).
    public func column(_ name: String) -> Int32 {
        if columnIndex == nil {
            var index: [String: Int32] = [:]
            for k in 0..<sqlite3_column_count(handle) {
                if let cName = sqlite3_column_name(handle, k) { index[String(cString: cName)] = k }
            }
            columnIndex = index
        }
        guard let k = columnIndex?[name] else { preconditionFailure("\(sql) selects no column \(name)") }
        return k
    }

    public func isNull(_ name: String) -> Bool { isNull(column(name)) }
    public func int64(_ name: String) -> Int64 { int64(column(name)) }
    public func int(_ name: String) -> Int { int(column(name)) }
    public func double(_ name: String) -> Double { double(column(name)) }
    public func text(_ name: String) -> String { text(column(name)) }
    public func optionalDouble(_ name: String) -> Double? { optionalDouble(column(name)) }
    public func optionalInt64(_ name: String) -> Int64? { optionalInt64(column(name)) }
    public func optionalText(_ name: String) -> String? { optionalText(column(name)) }
    public func withBlob<T>(_ name: String, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T { try withBlob(column(name), body) }
}
