import GeomonCore
import GeomonStore

/// `geomon export`: Writes stored fixes and events as GPX, GeoJSON or JSON lines.
enum ExportCommand: Command {
    static let name = "export"
    static let summary = "Writes stored fixes and events as GPX, GeoJSON or JSON lines"
    static let help = """
    usage: geomon export --db PATH --format gpx|geojson|jsonl [--since TIME]

    Writes the recorded fixes (within the retention window) and the events to stdout.
      gpx       a track of the fixes plus one waypoint per event
      geojson   a FeatureCollection: a LineString of the fixes, one Point per event
      jsonl     one line per fix ({"time","lat","lon","accuracy_m"}, readable by replay),
                then one line per event (with "type")

    options:
      --db PATH         the database (opened read-only)
      --format FORMAT   gpx, geojson or jsonl (required)
      --since TIME      only fixes and events at or after TIME (RFC 3339)
    """

    static func run(_ arguments: inout Arguments) throws -> Int32 {
        guard let format = try arguments.option("--format") else { throw UsageError("missing '--format gpx|geojson|jsonl'") }
        guard ["gpx", "geojson", "jsonl"].contains(format) else {
            throw UsageError("option '--format' must be one of gpx, geojson, jsonl (got '\(format)')")
        }
        let since = try sinceOption(&arguments)
        let store = try openReadOnlyStore(&arguments)
        try arguments.finish()
        let events = try store.events(since: since)
        func n(_ v: Double) -> String { JSONText.number(v) }
        func xml(_ text: String) -> String {
            text.replacingAll("&", "&amp;").replacingAll("<", "&lt;").replacingAll(">", "&gt;").replacingAll("\"", "&quot;")
        }
        switch format {
        case "jsonl":
            try store.forEachFix(since: since) { fix in
                var line = "{\"time\":\(JSONText.string(fix.time.rfc3339)),\"lat\":\(n(fix.coordinate.latitude)),\"lon\":\(n(fix.coordinate.longitude)),\"accuracy_m\":\(n(fix.horizontalAccuracyMeters))"
                if let s = fix.speedMetersPerSecond { line += ",\"speed_mps\":\(n(s))" }
                if let c = fix.courseDegrees { line += ",\"course_deg\":\(n(c))" }
                if fix.source != .gnss { line += ",\"source\":\(JSONText.string(fix.source.rawValue))" }
                print(line + "}")
            }
            for stored in events { print(eventJSON(stored.event)) }
        case "geojson":
            print("{\"type\":\"FeatureCollection\",\"features\":[", terminator: "")
            var coordinates: [String] = []
            var first: String?, last: String?
            try store.forEachFix(since: since) { fix in
                coordinates.append("[\(n(fix.coordinate.longitude)),\(n(fix.coordinate.latitude))]")
                if first == nil { first = fix.time.rfc3339 }
                last = fix.time.rfc3339
            }
            var features: [String] = []
            if !coordinates.isEmpty {
                features.append("{\"type\":\"Feature\",\"properties\":{\"kind\":\"track\",\"start\":\(JSONText.string(first ?? "")),\"end\":\(JSONText.string(last ?? "")),\"fixes\":\(coordinates.count)},\"geometry\":{\"type\":\"LineString\",\"coordinates\":[\(coordinates.joined(separator: ","))]}}")
            }
            for stored in events {
                let e = stored.event
                features.append("{\"type\":\"Feature\",\"id\":\(JSONText.string(e.id)),\"properties\":{\"type\":\(JSONText.string(e.kind.rawValue)),\"fence\":\(e.fenceID.map(JSONText.string) ?? "null"),\"time\":\(JSONText.string(e.time.rfc3339)),\"accuracy_m\":\(n(e.accuracyMeters)),\"rule\":\(JSONText.string(e.rule))},\"geometry\":{\"type\":\"Point\",\"coordinates\":[\(n(e.coordinate.longitude)),\(n(e.coordinate.latitude))]}}")
            }
            print(features.joined(separator: ",") + "]}")
        default:
            print("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
            print("<gpx version=\"1.1\" creator=\"geomon\" xmlns=\"http://www.topografix.com/GPX/1/1\">")
            for stored in events {
                let e = stored.event
                print("  <wpt lat=\"\(n(e.coordinate.latitude))\" lon=\"\(n(e.coordinate.longitude))\"><time>\(e.time.rfc3339)</time><name>\(xml(e.kind.rawValue + " " + (e.fenceID ?? "")))</name><desc>\(xml(e.rule))</desc><type>\(e.kind.rawValue)</type></wpt>")
            }
            print("  <trk><name>geomon</name><trkseg>")
            try store.forEachFix(since: since) { fix in
                print("    <trkpt lat=\"\(n(fix.coordinate.latitude))\" lon=\"\(n(fix.coordinate.longitude))\"><time>\(fix.time.rfc3339)</time></trkpt>")
            }
            print("  </trkseg></trk>")
            print("</gpx>")
        }
        return 0
    }

    static func eventJSON(_ e: GeoEvent) -> String {
        "{\"type\":\(JSONText.string(e.kind.rawValue)),\"id\":\(JSONText.string(e.id)),\"fence\":\(e.fenceID.map(JSONText.string) ?? "null"),\"time\":\(JSONText.string(e.time.rfc3339)),\"lat\":\(JSONText.number(e.coordinate.latitude)),\"lon\":\(JSONText.number(e.coordinate.longitude)),\"accuracy_m\":\(JSONText.number(e.accuracyMeters)),\"rule\":\(JSONText.string(e.rule))}"
    }
}

extension String {
    func replacingAll(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
