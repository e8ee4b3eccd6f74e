import GeomonCore
import GeomonSystem
import GeomonFormat
import GeomonHooks
import GeomonStore

/// `geomon export`: Writes stored fixes and events as GPX, GeoJSON or JSON lines.
struct ExportCommand: GeomonCommand {
    static let spec = CommandSpec(
        "export",
        abstract: "Writes stored fixes and events as GPX, GeoJSON or JSON lines",
        discussion: """
        Writes the recorded fixes (within the retention window) and the events to stdout.
          gpx       a track of the fixes plus one waypoint per event with a position
          geojson   a FeatureCollection (RFC 7946): the fixes as a LineString (a Point when there
                    is one fix), one Point per event (a null geometry for an event without a
                    position: a mode change before the first fix)
          jsonl     one line per fix ({"time","lat","lon","accuracy_m"}, readable by replay),
                    then one line per event (the fields `replay` prints)
        """,
        options: [readDatabaseOption, .choice("--format", ["gpx", "geojson", "jsonl"], "gpx, geojson or jsonl"), sinceOption],
        required: ["--db", "--format"]
    )

    var db: String
    var format: String
    var since: UTCTime?

    init(_ arguments: ParsedArguments) throws {
        db = try arguments.required("--db")
        format = try arguments.required("--format")
        since = try arguments.time("--since", now: WallClock.now())
    }

    func run() throws -> Int32 {
        let store = try openReadOnlyStore(db)
        let events = try store.eventLog.events(since: since)
        switch format {
        case "jsonl":
            try store.fixLog.forEach(since: since) { fix in print(FixEncoding.json(fix)) }
            for stored in events { print(EventEncoding.json(stored.event)) }
        case "geojson":
            var track: [Coordinate] = []
            var first: String?, last: String?
            try store.fixLog.forEach(since: since) { fix in
                track.append(fix.coordinate)
                if first == nil { first = fix.time.rfc3339 }
                last = fix.time.rfc3339
            }
            var features: [String] = []
            if !track.isEmpty {
                var properties = JSONObject()
                properties.add("kind", "track")
                properties.add("start", first)
                properties.add("end", last)
                properties.add("fixes", track.count)
                // RFC 7946: a LineString has two or more positions.
                let geometry = track.count == 1 ? GeoJSONText.point(track[0]) : GeoJSONText.lines([track])
                features.append(GeoJSONText.feature(id: nil, properties: properties, geometry: geometry))
            }
            for stored in events {
                let e = stored.event
                var properties = EventEncoding.object(e)
                properties.add("kind", "event")
                // A mode change before the first fix has no position: an unlocated feature.
                features.append(GeoJSONText.feature(id: e.id, properties: properties, geometry: e.hasPosition ? GeoJSONText.point(e.coordinate) : nil))
            }
            print(GeoJSONText.featureCollection(features))
        default:
            print("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
            print("<gpx version=\"1.1\" creator=\"geomon\" xmlns=\"http://www.topografix.com/GPX/1/1\">")
            // A waypoint needs a position (a mode change before the first fix has none).
            for stored in events where stored.event.hasPosition {
                let e = stored.event
                print("  <wpt lat=\"\(Self.degrees(e.coordinate.latitude))\" lon=\"\(Self.degrees(e.coordinate.longitude))\"><time>\(e.time.rfc3339)</time>"
                      + "<name>\(Self.xml(e.kind.rawValue + " " + (e.fenceID ?? "")))</name><desc>\(Self.xml(e.rule.text))</desc><type>\(e.kind.rawValue)</type></wpt>")
            }
            print("  <trk><name>geomon</name><trkseg>")
            try store.fixLog.forEach(since: since) { fix in
                print("    <trkpt lat=\"\(Self.degrees(fix.coordinate.latitude))\" lon=\"\(Self.degrees(fix.coordinate.longitude))\"><time>\(fix.time.rfc3339)</time></trkpt>")
            }
            print("  </trkseg></trk>")
            print("</gpx>")
        }
        return 0
    }

    static func degrees(_ value: Double) -> String { NumberText.short(value, 7) }


    static func xml(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }
}
