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
          gpx       a track of the fixes plus one waypoint per event
          geojson   a FeatureCollection (RFC 7946): the fixes as a LineString (a Point when there
                    is one fix), one Point per event
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
        let events = try store.events(since: since)
        switch format {
        case "jsonl":
            try store.forEachFix(since: since) { fix in print(Self.fixJSON(fix)) }
            for stored in events { print(EventEncoding.json(stored.event)) }
        case "geojson":
            var coordinates: [String] = []
            var first: String?, last: String?
            try store.forEachFix(since: since) { fix in
                coordinates.append(Self.position(fix.coordinate))
                if first == nil { first = fix.time.rfc3339 }
                last = fix.time.rfc3339
            }
            var features: [String] = []
            if !coordinates.isEmpty {
                var properties = JSONObject()
                properties.add("kind", "track")
                properties.add("start", first)
                properties.add("end", last)
                properties.add("fixes", coordinates.count)
                // RFC 7946: a LineString has two or more positions.
                let geometry = coordinates.count == 1
                    ? "{\"type\":\"Point\",\"coordinates\":\(coordinates[0])}"
                    : "{\"type\":\"LineString\",\"coordinates\":\(JSON.array(raw: coordinates))}"
                features.append("{\"type\":\"Feature\",\"properties\":\(properties.text),\"geometry\":\(geometry)}")
            }
            for stored in events {
                let e = stored.event
                var properties = EventEncoding.object(e)
                properties.add("kind", "event")
                features.append("{\"type\":\"Feature\",\"id\":\(JSON.string(e.id)),\"properties\":\(properties.text),"
                                + "\"geometry\":{\"type\":\"Point\",\"coordinates\":\(Self.position(e.coordinate))}}")
            }
            print("{\"type\":\"FeatureCollection\",\"features\":" + JSON.array(raw: features) + "}")
        default:
            print("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
            print("<gpx version=\"1.1\" creator=\"geomon\" xmlns=\"http://www.topografix.com/GPX/1/1\">")
            for stored in events {
                let e = stored.event
                print("  <wpt lat=\"\(Self.degrees(e.coordinate.latitude))\" lon=\"\(Self.degrees(e.coordinate.longitude))\"><time>\(e.time.rfc3339)</time>"
                      + "<name>\(Self.xml(e.kind.rawValue + " " + (e.fenceID ?? "")))</name><desc>\(Self.xml(e.rule.text))</desc><type>\(e.kind.rawValue)</type></wpt>")
            }
            print("  <trk><name>geomon</name><trkseg>")
            try store.forEachFix(since: since) { fix in
                print("    <trkpt lat=\"\(Self.degrees(fix.coordinate.latitude))\" lon=\"\(Self.degrees(fix.coordinate.longitude))\"><time>\(fix.time.rfc3339)</time></trkpt>")
            }
            print("  </trkseg></trk>")
            print("</gpx>")
        }
        return 0
    }

    static func degrees(_ value: Double) -> String { JSON.number(value, decimals: 7) }

    static func position(_ c: Coordinate) -> String { "[\(degrees(c.longitude)),\(degrees(c.latitude))]" }

    /// A fix as replay reads it back.
    static func fixJSON(_ fix: Fix) -> String {
        var o = JSONObject()
        o.add("time", fix.time.rfc3339)
        o.add("lat", fix.coordinate.latitude, decimals: 7)
        o.add("lon", fix.coordinate.longitude, decimals: 7)
        o.add("accuracy_m", fix.horizontalAccuracyMeters, decimals: 1)
        if let s = fix.speedMetersPerSecond { o.add("speed_mps", s, decimals: 2) }
        if let c = fix.courseDegrees { o.add("course_deg", c, decimals: 1) }
        if fix.source != .gnss { o.add("source", fix.source.rawValue) }
        return o.text
    }

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
