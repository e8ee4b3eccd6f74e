import GeomonCore
import GeomonStore
import GeomonDaemon
import Foundation

/// `geomon status`: Shows fence states, the last fix and pending deliveries.
enum StatusCommand: Command {
    static let name = "status"
    static let summary = "Shows fence states, the last fix and pending deliveries"
    static let help = """
    usage: geomon status --db PATH [--format text|json]

    Shows what the database records: the profile, the last processed fix, every fence with a
    stored state (fences not listed are in the implicit state shown), and delivery counts.
    For a database a `geomon run` instance owns, also the daemon's own status: whether it is
    running, the receiver state and why, gpsd's state, the fences inside. Small and cheap
    enough for a status bar to poll.

    options:
      --db PATH         the database (opened read-only)
      --format FORMAT   text (default) or json
    """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        let json = try arguments.choice("--format", ["text", "json"], default: "text") == "json"
        let store = try openReadOnlyStore(&arguments)
        try arguments.finish()
        let snapshot = try store.loadSnapshot()
        let profile = try store.value(forKey: "profile")
        let lastFix = try store.lastFix()
        let pending = try store.pendingDeliveryCount()
        let dead = try store.deliveries(status: .dead).count
        let eventCount = try store.events().count
        // Fences without a row are in the engine's implicit state (outside once confirmed).
        let implicit = try store.value(forKey: "implicit_state") ?? "unknown"
        let dbPath = store.path
        let running = InstanceLock.isHeld(databasePath: dbPath)
        // The daemon's last written status; "running" is decided by the instance lock, so a
        // killed daemon is not reported as running.
        var daemon = try store.value(forKey: "runtime_status")
        if let text = daemon, text.hasPrefix("{\"running\":") {
            let rest = text.drop(while: { $0 != "," })
            daemon = "{\"running\":\(running)" + rest
        }
        if json {
            var out = "{\"profile\":" + (profile.map(JSONText.string) ?? "null")
            out += ",\"schema_version\":\(try store.userVersion())"
            out += ",\"last_fix_time\":" + (snapshot.lastFixTime.map { JSONText.string($0.rfc3339) } ?? "null")
            if let lastFix {
                out += ",\"last_fix\":{\"time\":\(JSONText.string(lastFix.time.rfc3339)),\"lat\":\(JSONText.number(lastFix.coordinate.latitude)),\"lon\":\(JSONText.number(lastFix.coordinate.longitude)),\"accuracy_m\":\(JSONText.number(lastFix.horizontalAccuracyMeters))}"
            } else {
                out += ",\"last_fix\":null"
            }
            out += ",\"usable_fixes\":\(snapshot.usableFixCount),\"other_fences\":\(JSONText.string(implicit))"
            let fences = snapshot.records.map { r -> String in
                var f = "{\"id\":\(JSONText.string(r.fenceID)),\"state\":\(JSONText.string(r.state.rawValue))"
                f += ",\"since\":" + (r.stateSince.map { JSONText.string($0.rfc3339) } ?? "null")
                f += ",\"dwell_fired\":\(r.dwellFired)"
                if let p = r.pending {
                    f += ",\"pending\":{\"state\":\(JSONText.string(p.state.rawValue)),\"count\":\(p.count),\"since\":\(JSONText.string(p.firstTime.rfc3339))}"
                } else {
                    f += ",\"pending\":null"
                }
                return f + "}"
            }
            out += ",\"fences\":[" + fences.joined(separator: ",") + "]"
            out += ",\"events\":\(eventCount),\"pending_deliveries\":\(pending),\"dead_deliveries\":\(dead)"
            out += ",\"daemon\":" + (daemon ?? "null") + "}"
            print(out)
        } else {
            print("profile:            \(profile ?? "-")")
            print("daemon:             \(running ? "running" : "not running")" + (daemon.flatMap(receiverSummary).map { ", \($0)" } ?? ""))
            print("last fix:           " + (lastFix.map { "\($0.time.rfc3339)  \($0.coordinate.latitude),\($0.coordinate.longitude)  ±\(JSONText.number($0.horizontalAccuracyMeters)) m" } ?? "none"))
            print("events:             \(eventCount)")
            print("pending deliveries: \(pending)")
            print("dead deliveries:    \(dead)")
            print("fences:             (others \(implicit))")
            for r in snapshot.records {
                var line = "  \(r.fenceID)  \(r.state.rawValue)"
                if let since = r.stateSince { line += " since \(since.rfc3339)" }
                if r.dwellFired { line += ", dwell fired" }
                if let p = r.pending { line += ", pending \(p.state.rawValue) ×\(p.count) since \(p.firstTime.rfc3339)" }
                print(line)
            }
        }
        return 0
    }

    /// "receiver on (reason)" from the daemon status JSON.
    private static func receiverSummary(_ json: String) -> String? {
        guard let start = json.range(of: "\"receiver\":{\"state\":\"") else { return nil }
        let rest = json[start.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        var summary = "receiver \(rest[..<end])"
        if let r = rest.range(of: "\"reason\":\""), let e = rest[r.upperBound...].firstIndex(of: "\"") {
            summary += " (\(rest[r.upperBound..<e]))"
        }
        return summary
    }
}
