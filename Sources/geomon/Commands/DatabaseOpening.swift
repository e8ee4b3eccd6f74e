import GeomonCore
import GeomonStore

/// Opens `--db PATH` read-only for the listing commands, mapping store errors to exit codes.
func openReadOnlyStore(_ arguments: inout Arguments) throws -> EventStore {
    guard let path = try arguments.option("--db") else { throw UsageError("missing '--db PATH'") }
    do {
        return try EventStore(path: path, readOnly: true)
    } catch let error as StoreError {
        writeStderr("geomon: error: \(error)")
        throw error.kind == .missing ? ExitCode.noInput : ExitCode.dataError
    }
}

/// Parses `--since TIME` (RFC 3339).
func sinceOption(_ arguments: inout Arguments) throws -> UTCTime? {
    guard let text = try arguments.option("--since") else { return nil }
    guard let time = UTCTime(rfc3339: text) else {
        throw UsageError("option '--since' needs an RFC 3339 time like 2024-05-01T12:00:00Z (got '\(text)')")
    }
    return time
}
