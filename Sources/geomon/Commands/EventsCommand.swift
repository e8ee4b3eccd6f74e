import Foundation
import GeomonCore
import GeomonDaemon
import GeomonStore

/// `geomon events`: Lists stored events.
enum EventsCommand: Command {
    static let name = "events"
    static let summary = "Lists stored events"
    static let help = """
    usage: geomon events --db PATH [--format text|json] [--since TIME]
       geomon events --db PATH --svg FILE [--profile PROFILE]

    Lists the events stored in a database, in the order they were decided.

    options:
      --db PATH         the database (opened read-only)
      --format FORMAT   text (default) or json (one object per line, as replay prints)
      --since TIME      only events at or after TIME (RFC 3339)
      --svg FILE        draw the stored fixes and events as a map and timeline instead
                        (fences from --profile; the receiver as `replay` stored it, else on)
    """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        let json = try arguments.choice("--format", ["text", "json"], default: "text") == "json"
        let since = try sinceOption(&arguments)
        let svgPath = try arguments.option("--svg")
        let profilePath = try arguments.option("--profile")
        let store = try openReadOnlyStore(&arguments)
        try arguments.finish()
        if let svgPath {
            let profile = try profilePath.map { try loadProfileOrExit($0) }
            let svg = try ReplayPicture.svg(store: store, profile: profile, title: "geomon events · \(store.path)")
            do {
                try Data(svg.utf8).write(to: URL(fileURLWithPath: svgPath))
            } catch {
                writeStderr("geomon: error: cannot write \(svgPath): \((error as NSError).localizedDescription)")
                return ExitCode.failure.code
            }
            return 0
        }
        for stored in try store.events(since: since) {
            print(EventFormatter.line(stored.event, json: json))
        }
        return 0
    }
}
