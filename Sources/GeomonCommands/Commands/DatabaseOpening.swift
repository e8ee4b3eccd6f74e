import GeomonCore
import GeomonStore

/// Opens a database read-only for the reading commands (`status`, `events`, `export`, `hooks
/// list`), mapping store errors to exit codes: a missing file 66, not a geomon database 65.
func openReadOnlyStore(_ path: String) throws -> EventStore {
    do {
        return try EventStore(path: path, readOnly: true)
    } catch let error as StoreError {
        throw CommandFailure(error)
    }
}

extension CommandFailure {
    /// A store's refusal with its exit code: a missing file (or a directory) 66, not a geomon
    /// database 65.
    init(_ error: StoreError) {
        self.init("\(error)", exitCode: error.kind == .missing ? .noInput : .dataError)
    }
}

/// The `--db PATH` option of the reading commands.
let readDatabaseOption = OptionSpec.option("--db", "PATH", "the database (opened read-only)", completion: .file(["db"]))

/// `--profile PROFILE` beside `--db`: the database `geomon run --profile PROFILE` uses without
/// `--db` (its `storage.path`, else `/var/lib/geomon/NAME.db`).
let profileDatabaseOption = OptionSpec.option("--profile", "PROFILE",
    "instead of --db: the database of this profile, as 'geomon run --profile' without --db uses it (its storage.path, else /var/lib/geomon/NAME.db)",
    completion: .file(["yaml", "yml"]))

/// Which database a reading command names: `--db`, or the one `--profile`'s run uses.
struct DatabaseChoice {
    var db: String?
    var profile: String?
    var insecurePermissions: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        db = arguments.value("--db")
        profile = arguments.value("--profile")
        insecurePermissions = arguments.flag("--insecure-permissions")
        if db == nil, profile == nil { throw UsageError("one of --db or --profile is required") }
    }

    /// The path: `--db`, else the profile's `storage.path`, else `/var/lib/geomon/NAME.db`
    /// (an invalid profile exits 65, as everywhere).
    func path() throws -> String {
        if let db { return db }
        let loaded = try loadProfileOrExit(profile ?? "", insecurePermissions: insecurePermissions, lint: .quiet)
        return loaded.storage.path ?? "/var/lib/geomon/\(loaded.name).db"
    }
}

/// The `--since TIME` option of the reading commands.
let sinceOption = OptionSpec.option("--since", "TIME", "only what happened at or after TIME: RFC 3339 (2029-11-25T08:00:00Z), a date (2029-11-25, midnight UTC) or a time ago (90s, 30m, 2h, 1d)")
