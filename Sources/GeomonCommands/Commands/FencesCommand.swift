import GeomonConfig
import GeomonCore
import GeomonDaemon
import GeomonFormat
import GeomonStore
import GeomonSystem

#if canImport(Glibc)
import Glibc
#endif

/// `geomon fences`: what a profile monitors, fence by fence.
struct FencesCommand: GeomonCommand {
    static let spec = CommandSpec(
        "fences",
        abstract: "Lists the fences a profile monitors",
        discussion: """
        Loads the profile as `run` does (diagnostics on stderr; exit 65 when invalid, 66 when
        missing) and lists its fences in order: id, name, kind (circle, polygon, corridor),
        vertices, area, bounding box, where it came from (the profile's line, or the fence
        file's line for fences read from a file) and whether the fence was used by the even-odd
        rule despite ring defects ('repaired'; `geomon validate` says which), then the bounds the
        power policy plans with (policy.activity, docs/power.md). --format json
        prints one object per fence and line. --format geojson prints a FeatureCollection of
        exactly what geomon monitors (fences from files as the index holds them, after repair):
        polygons as Polygon or MultiPolygon, circles as 64-sided polygons with their centre and
        radius in the properties, corridors as their lines with the width, for QGIS or
        geojson.io. --format otrw prints the circles as an OwnTracks waypoints export (`desc`
        the name, `rid` the id; OwnTracks has no other shapes: stderr says how many were left
        out), for the OwnTracks apps or a `fences: - file:` entry of another profile. With --db,
        the fences a server pushed over MQTT and stored in that database are listed too, after
        the profile's, when the profile has `publish.mqtt.commands` (as `run` monitors them);
        their source says when and by which command (`geomon events --db PATH --commands`
        lists the commands), and the fences placed with `geomon fences here` (always monitored).
        The 'active' column says whether a fence with `active:` windows
        reports events now (or at --at TIME) and when that next changes ('-': always active).
        --inside (with --db) lists instead the fences the device is inside as that database
        records them: id, name, since when (the first fix inside) and for how long until now
        (or --at TIME); json: one object per fence with `since` and `inside_s`.
        """,
        options: [
            .option("--profile", "PROFILE", "the profile", completion: .file(["yaml", "yml"])),
            .choice("--format", ["text", "json", "geojson", "otrw"], "a table (default), json lines, a GeoJSON FeatureCollection or OwnTracks waypoints"),
            .flag("--insecure-permissions", "accept group/world-writable profiles, GeoJSON files and programs"),
            readDatabaseOption,
            .option("--at", "TIME", "say which fences are active at TIME (RFC 3339) instead of now"),
            .flag("--inside", "list the fences the device is inside (needs --db) with since when"),
        ],
        required: ["--profile"]
    )

    var profilePath: String
    var format: String
    var insecurePermissions: Bool
    var db: String?
    var at: UTCTime?
    var inside: Bool

    init(_ arguments: ParsedArguments) throws {
        db = arguments.value("--db")
        inside = arguments.flag("--inside")
        if inside, db == nil { throw UsageError("option '--inside' needs '--db PATH' (the database that records the stays)") }
        if let text = arguments.value("--at") {
            guard let time = UTCTime(rfc3339: text) else {
                throw UsageError("option '--at' must be an RFC 3339 time such as 2026-12-07T07:30:00Z (got '\(text)')")
            }
            at = time
        }
        profilePath = try arguments.required("--profile")
        format = arguments.choice("--format", default: "text")
        if inside, format != "text", format != "json" {
            throw UsageError("option '--inside' lists as text or json (got --format \(format))")
        }
        insecurePermissions = arguments.flag("--insecure-permissions")
    }

    func run() throws -> Int32 {
        var repaired: Set<String> = []
        var profile: Profile
        do {
            profile = try loadProfile(path: profilePath, insecurePermissions: insecurePermissions, warn: { warnings in
                repaired = Set(warnings.repairedFences)
                writeStderr("geomon: " + warnings.summary(profilePath: profilePath))
            })
        } catch {
            writeStderr(error.commandLineText)
            return error.isMissing ? ExitCode.noInput.code : ExitCode.dataError.code
        }
        if let db, !inside {
            let store = try openReadOnlyStore(db)
            // Another profile's database: its fences are not this profile's (`run` and
            // `replay` refuse the pair).
            if let owner = try store.engineState()?.profile, owner != profile.name {
                throw CommandFailure("\(db): the database belongs to profile '\(owner)', not '\(profile.name)'", exitCode: .dataError)
            }
            var pushed = try store.pushedFenceList.all()
            if profile.publish.mqtt?.commands != true {
                if !pushed.isEmpty {
                    writeStderr("geomon: note: \(pushed.count) fences pushed over MQTT are stored in \(db) but not monitored: publish.mqtt.commands is off")
                }
                pushed = []
            }
            profile = profile.withPushed(pushed, placed: try store.placedFenceList.all(), refused: { fence in
                writeStderr("geomon: warning: the pushed fence '\(fence.fenceID)' (\(fence.origin)) has the id of a profile fence and is not monitored")
            }, refusedPlaced: { fence in
                writeStderr("geomon: warning: the placed fence '\(fence.fenceID)' (\(fence.origin)) has the id of another fence and is not monitored")
            })
        }
        let now = at ?? WallClock.now()
        if inside, let db { return try listInside(db: db, profile: profile, now: now) }
        let rows = profile.fences.indices.map { i in
            var row = FenceSummary(profile.fences[i], shape: profile.shape(of: i), repaired: repaired)
            if let schedule = profile.fences[i].active {
                row.activity = (schedule.isActive(at: now, zone: profile.timeZone), schedule.nextChange(after: now, zone: profile.timeZone))
            }
            return row
        }
        switch format {
        case "json":
            for row in rows { print(row.json) }
        case "geojson":
            print(GeoJSONText.featureCollection(rows.map(\.geojson)))
        case "otrw":
            let fences = rows.map { row in
                var fence = row.fence
                fence.shape = row.shape
                return fence
            }
            let circles = fences.filter { if case .circle? = $0.shape { true } else { false } }.count
            if circles < fences.count {
                writeStderr("geomon: note: \(fences.count - circles) of \(fences.count) fences are not circles and are not in the OwnTracks export (it holds circles only)")
            }
            print(OwnTracks.waypointsPayload(fences: fences) ?? #"{"_type":"waypoints","waypoints":[]}"#)
        default:
            print(FenceSummary.table(rows), terminator: "")
            print(profile.policy.plannedBoundsText)
        }
        return 0
    }
}

extension FencesCommand {
    /// `--inside`: the stays the database records, in fence id order.
    func listInside(db: String, profile: Profile, now: UTCTime) throws -> Int32 {
        let records = try openReadOnlyStore(db).fenceStates().filter { $0.state == .inside }
        for record in records {
            let name = record.name ?? profile.fences.first { $0.id == record.fenceID }?.name
            let seconds = record.stateSince.map { max(0, (now - $0).secondsValue) }
            if format == "json" {
                var o = JSONObject()
                o.add("id", record.fenceID)
                o.add("name", name)
                o.add("since", record.stateSince?.rfc3339)
                o.add("inside_s", seconds, decimals: 1)
                print(o.text)
            } else {
                print("\(record.fenceID)\t\(name ?? "-")\tsince \(record.stateSince?.rfc3339 ?? "?")"
                      + (seconds.map { "\tinside for \(Self.span($0))" } ?? ""))
            }
        }
        if records.isEmpty, format != "json" { writeStderr("geomon: note: \(db) records the device inside no fence") }
        return 0
    }
}

/// `1 h 05 min`, `4 min 10 s`, `12 s`.
extension FencesCommand {
    static func span(_ seconds: Double) -> String {
        let s = seconds.roundedClampedToInt
        if s >= 3600 { return "\(s / 3600) h \(s % 3600 / 60 < 10 ? "0" : "")\(s % 3600 / 60) min" }
        if s >= 60 { return "\(s / 60) min \(s % 60) s" }
        return "\(s) s"
    }
}

/// One fence as `geomon fences` shows it.
struct FenceSummary {
    var fence: Fence
    var shape: FenceShape
    var repaired: Bool
    var vertices: Int
    var areaSquareMeters: Double
    var box: (minLon: Double, minLat: Double, maxLon: Double, maxLat: Double)
    /// For a fence with `active:` windows: whether it is active at the listing's time, and
    /// when that next changes.
    var activity: (now: Bool, next: UTCTime?)?

    init(_ fence: Fence, shape: FenceShape, repaired: Set<String>) {
        self.fence = fence
        self.shape = shape
        self.repaired = repaired.contains(fence.id)
        switch shape {
        case let .circle(center, radius):
            vertices = 0
            areaSquareMeters = Double.pi * radius * radius
            let k = Geodesy.metersPerDegree(atLatitude: center.latitude)
            let dLat = radius / k.latitude, dLon = radius / max(k.longitude, 1)
            box = (Self.wrapped(center.longitude - dLon), center.latitude - dLat, Self.wrapped(center.longitude + dLon), center.latitude + dLat)
        case let .polygons(members):
            let rings = members.flatMap { [$0.shell] + $0.holes }
            vertices = rings.reduce(0) { $0 + $1.count - ($1.first == $1.last && $1.count > 1 ? 1 : 0) }
            // Even-odd: shells add, holes take away (planar, in the fence's local metre).
            var area = 0.0
            for member in members {
                area += abs(Self.ringArea(member.shell))
                for hole in member.holes { area -= abs(Self.ringArea(hole)) }
            }
            areaSquareMeters = max(0, area)
            box = Self.box(rings.flatMap { $0 })
        case let .corridor(lines, width):
            vertices = lines.reduce(0) { $0 + $1.count }
            var length = 0.0
            for line in lines {
                for k in line.indices.dropFirst() { length += Geodesy.localDistanceMeters(from: line[k - 1], to: line[k]) }
            }
            areaSquareMeters = length * width + Double.pi * width * width / 4
            let points = lines.flatMap { $0 }
            let b = Self.box(points)
            let lat = max(abs(b.minLat), abs(b.maxLat))
            let k = Geodesy.metersPerDegree(atLatitude: lat)
            let dLat = width / 2 / k.latitude, dLon = width / 2 / max(k.longitude, 1)
            box = (Self.wrapped(b.minLon - dLon), b.minLat - dLat, Self.wrapped(b.maxLon + dLon), b.maxLat + dLat)
        }
    }

    /// Shoelace area in square metres (local metric at the ring's first vertex; longitudes
    /// the short way).
    static func ringArea(_ ring: [Coordinate]) -> Double {
        guard let origin = ring.first, ring.count >= 3 else { return 0 }
        let k = Geodesy.metersPerDegree(atLatitude: origin.latitude)
        var sum = 0.0
        var previous = (x: 0.0, y: 0.0)
        for point in ring.dropFirst() + [origin] {
            let p = (x: Geodesy.longitudeDelta(origin.longitude, point.longitude) * k.longitude, y: (point.latitude - origin.latitude) * k.latitude)
            sum += previous.x * p.y - p.x * previous.y
            previous = p
        }
        return sum / 2
    }

    /// The bounding box as RFC 7946 §5.2 writes it: west and east edges, with west greater
    /// than east for a shape across the antimeridian (longitudes taken the short way from the
    /// first point, as the fence's geometry takes them).
    static func box(_ points: [Coordinate]) -> (minLon: Double, minLat: Double, maxLon: Double, maxLat: Double) {
        guard let first = points.first else { return (0, 0, 0, 0) }
        var b = (west: 0.0, minLat: first.latitude, east: 0.0, maxLat: first.latitude)
        for p in points {
            let d = Geodesy.longitudeDelta(first.longitude, p.longitude)
            b.west = min(b.west, d); b.east = max(b.east, d)
            b.minLat = min(b.minLat, p.latitude); b.maxLat = max(b.maxLat, p.latitude)
        }
        return (wrapped(first.longitude + b.west), b.minLat, wrapped(first.longitude + b.east), b.maxLat)
    }

    /// A longitude in [-180, 180].
    static func wrapped(_ longitude: Double) -> Double {
        longitude > 180 ? longitude - 360 : longitude < -180 ? longitude + 360 : longitude
    }

    var source: String? { fence.pushed ?? fence.location.map { "\($0.file):\($0.line)" } }

    var json: String {
        var o = JSONObject()
        o.add("id", fence.id)
        o.add("name", fence.name)
        o.add("kind", shape.kind)
        o.add("vertices", vertices)
        o.add("area_m2", areaSquareMeters, decimals: 1)
        o.add("bbox", raw: "[" + [box.minLon, box.minLat, box.maxLon, box.maxLat].map { NumberText.fixed($0, 7) }.joined(separator: ",") + "]")
        o.add("events", fence.events.sorted().map(\.rawValue))
        if let dwell = fence.dwell { o.add("dwell_s", dwell.secondsValue, decimals: 3) }
        if case let .circle(_, radius) = shape { o.add("radius_m", radius, decimals: 2) }
        if case let .corridor(_, width) = shape { o.add("width_m", width, decimals: 2) }
        o.add("repaired", repaired)
        o.add("source", source)
        if let activity {
            o.add("active", activity.now)
            o.add("active_changes", activity.next?.rfc3339)
        }
        return o.text
    }

    /// The fence as a GeoJSON Feature (what is monitored).
    var geojson: String {
        let geometry: JSONObject
        var properties = JSONObject()
        properties.add("name", fence.name)
        properties.add("kind", shape.kind)
        switch shape {
        case let .circle(center, radius):
            let outline = (0..<64).map { Geodesy.destination(from: center, bearingDegrees: 360 * Double($0) / 64, distanceMeters: radius) }
            geometry = GeoJSONText.geometry("Polygon", coordinates: JSON.array(raw: [GeoJSONText.ring(outline.reversed())]))
            properties.add("center", raw: GeoJSONText.position(center))
            properties.add("radius_m", radius, decimals: 2)
        case let .polygons(members):
            geometry = GeoJSONText.polygons(members)
        case let .corridor(lines, width):
            geometry = GeoJSONText.lines(lines)
            properties.add("width_m", width, decimals: 2)
        }
        properties.add("repaired", repaired)
        return GeoJSONText.feature(id: fence.id, properties: properties, geometry: geometry)
    }

    static func table(_ rows: [FenceSummary]) -> String {
        var lines = [["id", "name", "kind", "vertices", "area", "bbox (lon, lat)", "active", "source", "note"]]
        for row in rows {
            let area = row.areaSquareMeters >= 1e6 ? "\(NumberText.fixed(row.areaSquareMeters / 1e6, 2)) km²" : "\(NumberText.fixed(row.areaSquareMeters, 0)) m²"
            let bbox = [row.box.minLon, row.box.minLat, row.box.maxLon, row.box.maxLat].map { NumberText.fixed($0, 5) }.joined(separator: " ")
            var active = "-"
            if let activity = row.activity {
                active = activity.now ? "yes" : "no"
                if let next = activity.next { active += " until \(next.rfc3339)" }
            }
            lines.append([row.fence.id, row.fence.name ?? "", row.shape.kind, row.vertices == 0 ? "-" : "\(row.vertices)", area, bbox,
                          active, row.source ?? "", row.repaired ? "repaired" : ""])
        }
        let widths = (0..<9).map { c in lines.map { $0[c].count }.max() ?? 0 }
        var out = ""
        for line in lines {
            var text = ""
            for (c, cell) in line.enumerated() {
                text += c == 8 ? cell : cell + String(repeating: " ", count: widths[c] - cell.count + 2)
            }
            while text.last == " " { text.removeLast() }
            out += text + "\n"
        }
        out += "\(rows.count) fence\(rows.count == 1 ? "" : "s")\n"
        return out
    }
}
