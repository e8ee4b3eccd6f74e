import GeomonCore
import GeomonStore

/// Opens a database read-only for the reading commands (`status`, `events`, `export`, `hooks
/// list`), mapping store errors to exit codes: a missing file 66, not a geomon database 65.
func openReadOnlyStore(_ path: String) throws -> EventStore {
    do {
        return try EventStore(path: path, readOnly: true)
    } catch let error as StoreError {
        throw CommandFailure("\(error)", exitCode: error.kind == .missing ? .noInput : .dataError)
    }
}

/// The `--db PATH` option of the reading commands.
let readDatabaseOption = OptionSpec.option("--db", "PATH", "the database (opened read-only)", completion: .file(["db"]))

/// The `--since TIME` option of the reading commands.
let sinceOption = OptionSpec.option("--since", "TIME", "only what happened at or after TIME: RFC 3339 (2029-11-25T08:00:00Z), a date (2029-11-25, midnight UTC) or a time ago (90s, 30m, 2h, 1d)")
