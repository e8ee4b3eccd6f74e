import GeomonCore
import GeomonDaemon
import GeomonStore

/// `geomon events`: Lists stored events.
enum EventsCommand: Command {
    static let name = "events"
    static let summary = "Lists stored events"
    static let help = """
    usage: geomon events --db PATH [--format text|json] [--since TIME]

    Lists the events stored in a database, in the order they were decided.

    options:
      --db PATH         the database (opened read-only)
      --format FORMAT   text (default) or json (one object per line, as replay prints)
      --since TIME      only events at or after TIME (RFC 3339)
    """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        let json = try arguments.choice("--format", ["text", "json"], default: "text") == "json"
        let since = try sinceOption(&arguments)
        let store = try openReadOnlyStore(&arguments)
        try arguments.finish()
        for stored in try store.events(since: since) {
            print(EventFormatter.line(stored.event, json: json))
        }
        return 0
    }
}
