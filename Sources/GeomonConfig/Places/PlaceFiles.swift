public import GeomonCore
import GeomonFormat

/// The file formats fences are read from (`fences: - file: …`, `format:`).
public enum PlaceFileFormat: String, CaseIterable, Sendable {
    case geojson
    /// Home Assistant's `zone:` entries (a `configuration.yaml`, or a file holding the list).
    case homeassistant
    /// OwnTracks waypoints: an `.otrw` export or a `waypoints` / `setWaypoints` message.
    case owntracks
    case kml
    /// KML zipped (`doc.kml`, else the first `.kml` member).
    case kmz
    /// GPX waypoints (`<wpt>`).
    case gpx
    /// Traccar geofences: the JSON list its API returns, each with a WKT `area`.
    case traccar

    /// The format a file name says (`.json` is looked into: GeoJSON, OwnTracks or Traccar).
    public static func inferred(path: String, bytes: [UInt8]?) -> PlaceFileFormat? {
        let lower = path.lowercased()
        let suffixes: [(String, PlaceFileFormat)] = [
            (".geojson", .geojson), (".otrw", .owntracks), (".kml", .kml), (".kmz", .kmz), (".gpx", .gpx),
            (".yaml", .homeassistant), (".yml", .homeassistant),
        ]
        for (suffix, format) in suffixes where lower.hasSuffix(suffix) { return format }
        guard lower.hasSuffix(".json"), let bytes else { return nil }
        return sniffJSON(bytes)
    }

    /// The format's name in messages ("Home Assistant", "GPX").
    var displayName: String {
        switch self {
        case .geojson: "GeoJSON"
        case .homeassistant: "Home Assistant"
        case .owntracks: "OwnTracks"
        case .kml: "KML"
        case .kmz: "KMZ"
        case .gpx: "GPX"
        case .traccar: "Traccar"
        }
    }

    /// GeoJSON has `"type"`, OwnTracks `"_type"`, Traccar's list objects an `"area"`, Home
    /// Assistant's zones made in its UI (`.storage/zone`) `"key": "zone"`.
    static func sniffJSON(_ bytes: [UInt8]) -> PlaceFileFormat? {
        guard let root = try? JSONTree.parse(bytes) else { return nil }
        if root["key"]?.string == "zone", root["data"] != nil { return .homeassistant }
        if root["_type"] != nil { return .owntracks }
        if root["type"] != nil { return .geojson }
        if let items = root.array {
            if items.first?["area"] != nil { return .traccar }
            if items.first?["_type"] != nil { return .owntracks }
        }
        return nil
    }
}

/// One place read from a file: a fence to be.
public struct PlaceRecord: Sendable {
    public var id: String
    public var name: String?
    public var shape: FenceShape
    public var location: SourceLocation
}

/// What a place file gave: its places, and its problems at `file:line:column`.
public struct PlaceFileRead: Sendable {
    public var places: [PlaceRecord] = []
    public var diagnostics: [Diagnostic] = []
}

/// The readers of place files other than GeoJSON (`GeoJSONFences`). Each reads a whole file
/// held in memory; a place that cannot be used is reported and skipped, the others are kept.
/// Coordinates are degrees (WGS 84), radii and widths metres; each format's axis order is its
/// own (docs/profile-reference.md, "Fence files").
public enum PlaceFiles {
    /// Defaults for what a file leaves out.
    public struct Options: Sendable {
        /// The radius of a point without one (KML, GPX; HA's own default is 100 m too).
        public var radius: Double = 100
        /// The width of a line without one (KML, Traccar).
        public var width: Double = 50
        public init() {}
    }

    /// `readFile` reads a file named as written beside this one (HA's `!include` and
    /// `secrets.yaml`), nil when it cannot (the caller's trust rules apply).
    /// `listYAML` lists the `*.yaml` files of a directory named beside this one as Home
    /// Assistant's `!include_dir_*` take them (recursively, hidden names and `secrets.yaml`
    /// left out, sorted), as paths relative to this file's directory; nil when it cannot.
    public static func read(_ bytes: [UInt8], file: String, format: PlaceFileFormat, options: Options = Options(),
                            readFile: (String) -> [UInt8]? = { _ in nil }, listYAML: (String) -> [String]? = { _ in nil }) -> PlaceFileRead {
        var reader = Reader(file: file, bytes: bytes, options: options)
        switch format {
        case .geojson:
            let read = GeoJSONFences.read(bytes, file: file, options: .init())
            var result = PlaceFileRead(diagnostics: read.diagnostics)
            for fence in read.fences {
                guard let shape = fence.shape else { continue }
                result.places.append(PlaceRecord(id: fence.id, name: fence.name, shape: shape,
                                                 location: fence.location ?? SourceLocation(file: file, line: 1, column: 1)))
            }
            return result
        case .homeassistant: reader.homeAssistant(readFile: readFile, listYAML: listYAML)
        case .owntracks: reader.ownTracks()
        case .kml: reader.kml()
        case .kmz: reader.kmz()
        case .gpx: reader.gpx()
        case .traccar: reader.traccar()
        }
        return reader.result
    }

    /// Home Assistant's entity id part for a name (`slugify` with `_`): lower case, Latin
    /// letters without their accents (`ß` → `ss`, `æ` → `ae`, `ø` → `o`, …), every run of other
    /// characters one `_`, none at either end; `unknown` when nothing is left.
    public static func slug(_ name: String) -> String {
        var out = ""
        var pendingSeparator = false
        for scalar in name.lowercased().unicodeScalars {
            let ascii: String
            if scalar.isASCII {
                ascii = scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) ? String(scalar) : ""
            } else {
                ascii = Self.latin[scalar] ?? ""
            }
            if ascii.isEmpty {
                pendingSeparator = !out.isEmpty
                continue
            }
            if pendingSeparator { out += "_" }
            pendingSeparator = false
            out += ascii
        }
        return out.isEmpty ? "unknown" : out
    }

    /// Lower-case Latin letters with diacritics and their ASCII spelling (unidecode's).
    static let latin: [Unicode.Scalar: String] = {
        let table: [(String, String)] = [
            ("àáâãäåāăą", "a"), ("æ", "ae"), ("çćĉċč", "c"), ("ďđð", "d"), ("èéêëēĕėęě", "e"), ("ĝğġģ", "g"),
            ("ĥħ", "h"), ("ìíîïĩīĭįı", "i"), ("ĳ", "ij"), ("ĵ", "j"), ("ķ", "k"), ("ĺļľŀł", "l"), ("ñńņňŉ", "n"),
            ("òóôõöøōŏő", "o"), ("œ", "oe"), ("ŕŗř", "r"), ("śŝşšș", "s"), ("ß", "ss"), ("ţťŧț", "t"), ("þ", "th"),
            ("ùúûüũūŭůűų", "u"), ("ŵ", "w"), ("ýÿŷ", "y"), ("źżž", "z"),
        ]
        var map: [Unicode.Scalar: String] = [:]
        for (letters, ascii) in table {
            for scalar in letters.unicodeScalars { map[scalar] = ascii }
        }
        return map
    }()
}

/// One file's reading: its places, its diagnostics, how ids are made unique within it.
private struct Reader {
    let file: String
    let bytes: [UInt8]
    let options: PlaceFiles.Options
    let positions: TextPositions
    var result = PlaceFileRead()
    private var idCounts: [String: Int] = [:]
    /// The fence ids given so far (numbered ones included).
    private var usedIDs: Set<String> = []
    /// Where the Home Assistant core home zone is in `result.places`, until a zone named
    /// Home replaces it.
    private var coreHome: Int?

    init(file: String, bytes: [UInt8], options: PlaceFiles.Options) {
        self.file = file
        // An XML file declared in a Latin encoding is read as written (names, ids).
        let bytes = XMLEncoding.utf8(bytes)
        self.bytes = bytes
        self.options = options
        positions = TextPositions(file: file, bytes: bytes)
    }

    func at(_ offset: Int) -> SourceLocation { positions.location(offset) }

    mutating func error(_ message: String, _ location: SourceLocation) {
        result.diagnostics.append(.error(message, at: location))
    }

    mutating func warning(_ message: String, _ location: SourceLocation) {
        result.diagnostics.append(.warning(message, at: location))
    }

    /// Keeps a place whose shape passes the geometry's rules; `id` made unique within the file
    /// by `disambiguate` (the second `Home` becomes `Home (2)`, or `home_2` for HA).
    mutating func add(id rawID: String, name: String?, shape: FenceShape, at location: SourceLocation, style: IDStyle = .parenthesized) {
        var id = String(rawID.trimmingWhitespace())
        if let problem = FenceIDRule.problem(id) {
            error("this place cannot be a fence: its id \(problem)", location)
            return
        }
        if let problems = shapeProblems(shape) {
            error("'\(id)': \(problems)", location)
            return
        }
        let seen = idCounts[id, default: 0]
        idCounts[id] = seen + 1
        if seen > 0 || usedIDs.contains(id) {
            // The next number no place of the file holds (a third `Work` beside a `Work 2`
            // is `work_3`, as Home Assistant numbers its entity ids).
            func numbered(_ n: Int) -> String { style == .homeAssistant ? "\(id)_\(n)" : "\(id) (\(n))" }
            var n = max(seen + 1, 2)
            while usedIDs.contains(numbered(n)) { n += 1 }
            let unique = numbered(n)
            warning(seen > 0 ? "a second place named '\(id)': its fence id is '\(unique)'"
                             : "a place named '\(id)' after another's fence id: its fence id is '\(unique)'", location)
            id = unique
        }
        usedIDs.insert(id)
        result.places.append(PlaceRecord(id: id, name: name, shape: shape, location: location))
    }

    enum IDStyle { case parenthesized, homeAssistant }

    /// Why the geometry cannot take `shape`, nil when it can.
    func shapeProblems(_ shape: FenceShape) -> String? {
        switch shape {
        case let .circle(center, radius):
            if !center.isValid { return "the position (\(center.latitude), \(center.longitude)) is out of range" }
            if !(radius > 0) { return "the radius must be more than 0 m (got \(radius))" }
        case let .polygons(members):
            for member in members {
                if let problem = PolygonValidity.problems(of: PolygonValidity.unwrapped(member)).first { return Self.describe(problem) }
            }
        case let .corridor(lines, width):
            if !(width > 0) { return "the width must be more than 0 m (got \(width))" }
            if lines.contains(where: { $0.contains { !$0.isValid } }) { return "a point of the line is out of range" }
            if lines.contains(where: { Set($0).count < 2 }) { return "a line needs at least 2 distinct points" }
        }
        let limits = geometryLimitProblems(shape)
        return limits.isEmpty ? nil : limits.map(\.text).joined(separator: "; ")
    }

    static func describe(_ problem: PolygonValidity.PolygonProblem) -> String {
        switch problem {
        case .shell(let p): p.text("the polygon")
        case .hole(let h, let p): p.text("hole \(h + 1)")
        case .holeOutsideShell(let h): "hole \(h + 1) is not inside the polygon"
        case .holesOverlap(let a, let b): "holes \(a + 1) and \(b + 1) overlap"
        }
    }

    // MARK: Home Assistant

    /// `zone:` in a mapping (a configuration.yaml), or the file is the list itself; each entry
    /// `name`, `latitude`, `longitude`, `radius` (m, default 100), `passive`, `icon`. The fence
    /// id is the zone's entity id without `zone.` (`PlaceFiles.slug`). `!include FILE` as the
    /// value of `zone:` is followed; `!secret NAME` is looked up in `secrets.yaml` beside the file.
    mutating func homeAssistant(readFile: (String) -> [UInt8]?, listYAML: (String) -> [String]?) {
        if bytes.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }) == UInt8(ascii: "{") {
            homeAssistantStorage()
            return
        }
        // (YAMLParser would call an empty file an empty profile.)
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) || TextScan.isOnlyComments(bytes) {
            error("the file is empty: no Home Assistant zones", SourceLocation(file: file, line: 1, column: 1))
            return
        }
        let parsed = YAMLParser().parse(bytes, file: file)
        result.diagnostics += parsed.diagnostics.filter { $0.severity == .error }
        guard let root = parsed.root else { return }
        var list: YAMLNode?
        var listFile = file
        var secrets: YAMLNode?
        var secretsRead = false
        let secretsPath = directoryPart(of: file).isEmpty ? "secrets.yaml" : directoryPart(of: file) + "/secrets.yaml"
        /// A scalar, or the value `!secret NAME` names in `secrets.yaml` beside the file.
        func scalarValue(_ node: YAMLNode, _ secrets: inout YAMLNode?) -> String? {
            guard node.tag == "!secret" else { return node.scalar }
            if secrets == nil {
                let bytes = readFile("secrets.yaml")
                secretsRead = bytes != nil
                secrets = bytes.flatMap { YAMLParser().parse($0, file: secretsPath).root } ?? YAMLNode(.mapping([]), line: 1, column: 1)
            }
            guard let key = node.scalar, case .mapping(let pairs)? = secrets?.kind,
                  let value = pairs.last(where: { $0.key.scalar == key })?.value.scalar else { return nil }
            return value
        }
        /// Why `node` is no number: a `!secret` not found (naming it and the secrets file), or
        /// the text.
        func notANumber(_ node: YAMLNode) -> String {
            guard node.tag == "!secret" else { return "must be a number (got '\((node.scalar ?? node.kindDescription).clipped)')" }
            let name = node.scalar ?? ""
            if !secretsRead { return "is '!secret \(name)', but \(secretsPath) cannot be read" }
            return "is '!secret \(name)', which \(secretsPath) does not hold as a number"
        }
        switch root.kind {
        case .sequence:
            list = root
        case .mapping(let pairs):
            // The home zone (`zone.home`) is the core configuration's location.
            let core = pairs.last(where: { $0.key.scalar == "homeassistant" })?.value
            if let core, case .mapping(let settings) = core.kind {
                func value(_ key: String) -> YAMLNode? { settings.last { $0.key.scalar == key }?.value }
                if let latNode = value("latitude"), let lonNode = value("longitude") {
                    let lat = scalarValue(latNode, &secrets).flatMap(Double.init), lon = scalarValue(lonNode, &secrets).flatMap(Double.init)
                    // Home Assistant's default radius is for a missing one only.
                    var radius: Double? = 100
                    if let radiusNode = value("radius") {
                        radius = scalarValue(radiusNode, &secrets).flatMap(Double.init).flatMap { $0.isFinite ? $0 : nil }
                        if radius == nil { error("the home zone: 'homeassistant: radius' \(notANumber(radiusNode))", location(radiusNode)) }
                    }
                    if let lat, let lon, let radius, lat.isFinite, lon.isFinite {
                        // `zone.home`, named "Home" as Home Assistant shows it (`homeassistant:
                        // name` names the installation, not the zone).
                        let before = result.places.count
                        add(id: "home", name: "Home", shape: .circle(center: Coordinate(latitude: lat, longitude: lon), radiusMeters: radius),
                            at: location(latNode), style: .homeAssistant)
                        // Only a home zone that was kept can be overridden.
                        if result.places.count > before { coreHome = result.places.count - 1 }
                    } else {
                        for (key, node) in [("latitude", latNode), ("longitude", lonNode)] where scalarValue(node, &secrets).flatMap(Double.init) == nil {
                            error("the home zone: 'homeassistant: \(key)' \(notANumber(node))", location(node))
                        }
                    }
                }
            }
            guard let zone = pairs.last(where: { $0.key.scalar == "zone" }) else {
                if result.places.isEmpty { error("no 'zone:' entry (and no home location under 'homeassistant:') in this Home Assistant file", location(root)) }
                return
            }
            list = zone.value
            let directory = directoryPart(of: file)
            let besideFile = { (name: String) in directory.isEmpty ? name : directory + "/" + name }
            switch zone.value.tag {
            case "!include":
                guard let name = zone.value.scalar else { break }
                guard let included = readFile(name) else {
                    error("cannot read the file '\(name)' that 'zone: !include' names", location(zone.value))
                    return
                }
                let inner = YAMLParser().parse(included, file: besideFile(name))
                result.diagnostics += inner.diagnostics.filter { $0.severity == .error }
                list = inner.root
                listFile = besideFile(name)
            case "!include_dir_list", "!include_dir_merge_list":
                // Each file one zone, or each file a list of zones, merged (files that hold
                // something else are left out, as Home Assistant leaves them).
                let tag = zone.value.tag ?? ""
                guard let name = zone.value.scalar, let files = listYAML(name) else {
                    error("cannot read the directory '\(zone.value.scalar ?? "")' that 'zone: \(tag)' names", location(zone.value))
                    return
                }
                var items: [(YAMLNode, String)] = []
                for relative in files {
                    guard let included = readFile(relative) else {
                        error("cannot read the file '\(relative)' that 'zone: \(tag) \(name)' includes", location(zone.value))
                        continue
                    }
                    let inner = YAMLParser().parse(included, file: besideFile(relative))
                    result.diagnostics += inner.diagnostics.filter { $0.severity == .error }
                    guard let root = inner.root else { continue }
                    if tag == "!include_dir_list" {
                        items.append((root, besideFile(relative)))
                    } else if case .sequence(let entries) = root.kind {
                        items += entries.map { ($0, besideFile(relative)) }
                    }
                }
                zones(items, secrets: &secrets, notANumber: notANumber, resolve: scalarValue)
                return
            case "!include_dir_named", "!include_dir_merge_named":
                error("'zone: \(zone.value.tag ?? "")' gives a mapping, but 'zone:' takes a list of zones: use !include_dir_list (a zone per file) or !include_dir_merge_list (lists of zones)",
                      location(zone.value))
                return
            default:
                break
            }
        case .scalar:
            error("a Home Assistant zone file is a mapping with 'zone:' or a list of zones", location(root))
            return
        }
        guard let list else { return }
        guard case .sequence(let items) = list.kind else {
            error("'zone:' must be a list of zones (got \(list.kindDescription))", location(list, listFile))
            return
        }
        zones(items.map { ($0, listFile) }, secrets: &secrets, notANumber: notANumber, resolve: scalarValue)
    }

    /// The zones of a `zone:` list: each `name`, `latitude`, `longitude`, `radius` (100 m by
    /// default); a zone named Home replaces the core home zone, as in Home Assistant.
    private mutating func zones(_ items: [(YAMLNode, String)], secrets: inout YAMLNode?, notANumber: (YAMLNode) -> String,
                                resolve: (YAMLNode, inout YAMLNode?) -> String?) {
        func scalarValue(_ node: YAMLNode) -> String? { resolve(node, &secrets) }
        for (item, listFile) in items {
            guard case .mapping(let pairs) = item.kind else {
                error("a zone must be a mapping with name, latitude, longitude (got \(item.kindDescription))", location(item, listFile))
                continue
            }
            func value(_ key: String) -> YAMLNode? { pairs.last { $0.key.scalar == key }?.value }
            let here = location(item, listFile)
            guard let nameNode = value("name"), let name = scalarValue(nameNode), !name.isEmpty else {
                error("a zone needs a 'name'", here)
                continue
            }
            var numbers: [String: Double] = [:]
            var bad = false
            for key in ["latitude", "longitude", "radius"] {
                guard let node = value(key) else { continue }
                guard let text = scalarValue(node), let number = Double(text), number.isFinite else {
                    error("zone '\(name)': '\(key)' \(notANumber(node))", location(node, listFile))
                    bad = true
                    continue
                }
                numbers[key] = number
            }
            if bad { continue }
            guard let lat = numbers["latitude"], let lon = numbers["longitude"] else {
                error("zone '\(name)' needs 'latitude' and 'longitude'", here)
                continue
            }
            let radius = numbers["radius"] ?? 100
            let shape = FenceShape.circle(center: Coordinate(latitude: lat, longitude: lon), radiusMeters: radius)
            if PlaceFiles.slug(name) == "home", let k = coreHome {
                // Home Assistant: a zone named Home overrides the home zone of `homeassistant:`,
                // checked as any zone is.
                if let problems = shapeProblems(shape) {
                    error("'home': \(problems)", here)
                    continue
                }
                result.places[k] = PlaceRecord(id: "home", name: name, shape: shape, location: here)
                coreHome = nil
                continue
            }
            add(id: PlaceFiles.slug(name), name: name, shape: shape, at: here, style: .homeAssistant)
        }
    }

    /// The zones made in Home Assistant's UI: its `.storage/zone` file (JSON, `{"key": "zone",
    /// "data": {"items": [{id, name, latitude, longitude, radius, passive, icon}]}}`). The fence
    /// id is the name's slug, as Home Assistant makes the zone's entity id when it is created.
    mutating func homeAssistantStorage() {
        let root: JSONTree.Node
        do { root = try JSONTree.parse(bytes) } catch {
            self.error("not valid JSON: \(error.message)", at(error.offset))
            return
        }
        guard root["key"]?.string == "zone", let items = root["data"]?["items"]?.array else {
            error("expected Home Assistant's zone storage ('.storage/zone': {\"key\": \"zone\", \"data\": {\"items\": […]}})", at(root.offset))
            return
        }
        for item in items {
            let here = at(item.offset)
            guard let name = item["name"]?.string.map({ String($0.trimmingWhitespace()) }), !name.isEmpty else {
                error("a zone needs a 'name'", here)
                continue
            }
            guard let lat = item["latitude"]?.number, let lon = item["longitude"]?.number else {
                error("zone '\(name)' needs numbers 'latitude' and 'longitude'", here)
                continue
            }
            // Home Assistant's default radius is for a missing one only.
            var radius = 100.0
            if let radiusNode = item["radius"] {
                guard let number = radiusNode.number else {
                    error("zone '\(name)': 'radius' must be a number of metres (got \(radiusNode.string.map { "the string \"\($0.clipped)\"" } ?? radiusNode.kind))", at(radiusNode.offset))
                    continue
                }
                radius = number
            }
            add(id: PlaceFiles.slug(name), name: name, shape: .circle(center: Coordinate(latitude: lat, longitude: lon), radiusMeters: radius),
                at: here, style: .homeAssistant)
        }
        if items.isEmpty { warning("no zones in this Home Assistant zone storage", at(root.offset)) }
    }

    func location(_ node: YAMLNode, _ file: String? = nil) -> SourceLocation {
        SourceLocation(file: file ?? self.file, line: node.line, column: node.column)
    }

    // MARK: OwnTracks

    /// `{"_type":"waypoints","waypoints":[…]}` (an `.otrw` export, the `waypoints` message),
    /// a `cmd` with `setWaypoints` (the list under `waypoints` or `payload`), a single
    /// `waypoint`, or a bare list; follow regions (`desc` `+follow…`) are skipped;
    /// each `{"_type":"waypoint","desc","lat","lon","rad","tst","rid"}`. The fence id is `rid`
    /// when given (geomon's own export writes the fence id there), else `desc`.
    mutating func ownTracks() {
        let root: JSONTree.Node
        do { root = try JSONTree.parse(bytes) } catch {
            self.error("not valid JSON: \(error.message)", at(error.offset))
            return
        }
        guard let list = OwnTracksCommand.waypointList(root) ?? OwnTracksCommand.waypointList(root["payload"]) else {
            error("no waypoints: expected an OwnTracks 'waypoints' message or export (a 'waypoints' list)", at(root.offset))
            return
        }
        for item in list {
            switch OwnTracksCommand.waypoint(item) {
            case .failure(let problem) where problem.notAPlace:
                warning("waypoint \(problem.message): skipped", at(item.offset))
            case .failure(let problem):
                error("waypoint: \(problem.message)", at(item.offset))
            case .success(let w) where w.removes && w.radiusMeters > 0:
                error("waypoint '\(w.name)': the position (\(w.center.latitude), \(w.center.longitude)) is out of range", at(item.offset))
            case .success(let w) where w.removes:
                warning("waypoint '\(w.name)' has no region ('rad' missing or 0): skipped", at(item.offset))
            case .success(let w):
                add(id: w.fenceID, name: w.name, shape: .circle(center: w.center, radiusMeters: w.radiusMeters), at: at(item.offset))
            }
        }
    }

    // MARK: KML / KMZ

    mutating func kmz() {
        do {
            let archive = try ZipArchive(bytes)
            let kmls = archive.members.filter { $0.name.lowercased().hasSuffix(".kml") }
            guard let member = kmls.first(where: { $0.name.lowercased() == "doc.kml" }) ?? kmls.first else {
                error("no .kml file inside this KMZ archive", SourceLocation(file: file, line: 1, column: 1))
                return
            }
            let inner = try archive.read(member)
            var nested = Reader(file: file + "/" + member.name, bytes: inner, options: options)
            nested.kml()
            result.places += nested.result.places
            result.diagnostics += nested.result.diagnostics
        } catch {
            self.error("cannot read the KMZ archive: \(error.message)", SourceLocation(file: file, line: 1, column: 1))
        }
    }

    /// Every `Placemark` (in folders or not): a `Point` is a circle (radius from ExtendedData
    /// `radius`, else the entry's `radius`, else 100 m), a `Polygon` with its
    /// `innerBoundaryIs` holes, a `LineString` a corridor (width from ExtendedData `width`,
    /// else the entry's `width`, else 50 m), a `MultiGeometry` of polygons one fence.
    /// Coordinates are `lon,lat[,alt]` tuples.
    mutating func kml() {
        let root: XMLTree.Element
        do { root = try XMLTree.parse(bytes) } catch {
            self.error("not valid XML: \(error.message)", at(error.offset))
            return
        }
        let placemarks = root.localName == "Placemark" ? [root] : root.descendants("Placemark")
        if placemarks.isEmpty { warning("no Placemark in this KML file", at(root.offset)) }
        for (n, placemark) in placemarks.enumerated() {
            let here = at(placemark.offset)
            let name = placemark.childText("name").flatMap { $0.isEmpty ? nil : $0 } ?? placemark.attribute("id") ?? "placemark \(n + 1)"
            let data = extendedData(placemark)
            var polygons: [PolygonRings] = []
            var lines: [[Coordinate]] = []
            var points: [Coordinate] = []
            var bad = false
            for geometry in geometries(placemark) {
                switch geometry.localName {
                case "Point":
                    guard let c = coordinates(geometry.child("coordinates"), in: name, at: geometry) else { bad = true; continue }
                    guard c.count == 1 else {
                        error("'\(name)': a Point has one lon,lat tuple (this one has \(c.count))", at(geometry.offset))
                        bad = true
                        continue
                    }
                    points.append(c[0])
                case "LineString":
                    guard let c = coordinates(geometry.child("coordinates"), in: name, at: geometry) else { bad = true; continue }
                    lines.append(c)
                case "Polygon":
                    let outer = geometry.child("outerBoundaryIs")?.child("LinearRing")?.child("coordinates")
                    guard let shell = coordinates(outer, in: name, at: geometry) else { bad = true; continue }
                    var holes: [[Coordinate]] = []
                    for inner in geometry.children("innerBoundaryIs") {
                        guard let hole = coordinates(inner.child("LinearRing")?.child("coordinates"), in: name, at: inner) else { bad = true; continue }
                        holes.append(hole)
                    }
                    polygons.append(PolygonRings(shell: shell, holes: holes))
                default:
                    warning("'\(name)': \(geometry.localName) is not a shape geomon monitors; skipped", at(geometry.offset))
                }
            }
            if bad { continue }
            let kinds = [points.isEmpty, lines.isEmpty, polygons.isEmpty].filter { !$0 }.count
            if kinds == 0 {
                warning("'\(name)' has no Point, LineString or Polygon: skipped", here)
                continue
            }
            if kinds > 1 || points.count > 1 {
                error("'\(name)' mixes shapes (a fence is one circle, one set of polygons or one set of lines)", here)
                continue
            }
            if let point = points.first {
                guard let radius = metres(data["radius"], "radius", in: name, at: here, default: options.radius) else { continue }
                add(id: name, name: name, shape: .circle(center: point, radiusMeters: radius), at: here)
            } else if !lines.isEmpty {
                guard let width = metres(data["width"], "width", in: name, at: here, default: options.width) else { continue }
                add(id: name, name: name, shape: .corridor(lines: lines, widthMeters: width), at: here)
            } else {
                add(id: name, name: name, shape: .polygons(polygons), at: here)
            }
        }
    }

    /// Metres written in ExtendedData, `fallback` when absent, nil (with an error) when not a
    /// positive number.
    private mutating func metres(_ text: String?, _ key: String, in name: String, at location: SourceLocation, default fallback: Double) -> Double? {
        guard let text else { return fallback }
        guard let value = Double(text.trimmingWhitespace()), value.isFinite, value > 0 else {
            error("'\(name)': ExtendedData '\(key)' must be a number of metres (got '\(text.clipped)')", location)
            return nil
        }
        return value
    }

    /// The geometries of a placemark, a `MultiGeometry`'s members included.
    private func geometries(_ placemark: XMLTree.Element) -> [XMLTree.Element] {
        var out: [XMLTree.Element] = []
        var stack = placemark.children.reversed() as [XMLTree.Element]
        while let e = stack.popLast() {
            switch e.localName {
            case "MultiGeometry": stack.append(contentsOf: e.children.reversed())
            case "Point", "LineString", "Polygon", "LinearRing", "Model", "Track", "MultiTrack": out.append(e)
            default: break
            }
        }
        return out
    }

    /// `<ExtendedData>`: `<Data name="…"><value>…</value></Data>` and `<SimpleData name="…">`.
    private func extendedData(_ placemark: XMLTree.Element) -> [String: String] {
        var values: [String: String] = [:]
        guard let data = placemark.child("ExtendedData") else { return values }
        for d in data.descendants("Data") {
            if let key = d.attribute("name"), let value = d.childText("value") { values[key.lowercased()] = value }
        }
        for d in data.descendants("SimpleData") {
            if let key = d.attribute("name") { values[key.lowercased()] = String(d.text.trimmingWhitespace()) }
        }
        return values
    }

    /// `lon,lat[,alt]` tuples separated by white space.
    private mutating func coordinates(_ element: XMLTree.Element?, in name: String, at geometry: XMLTree.Element) -> [Coordinate]? {
        guard let element else {
            error("'\(name)': a \(geometry.localName) without <coordinates>", at(geometry.offset))
            return nil
        }
        var out: [Coordinate] = []
        for tuple in element.text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }) {
            let parts = tuple.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2 || parts.count == 3, let lon = Double(parts[0]), let lat = Double(parts[1]) else {
                error("'\(name)': '\(String(tuple).clipped)' is not a lon,lat[,alt] tuple", at(element.offset))
                return nil
            }
            out.append(Coordinate(latitude: lat, longitude: lon))
        }
        if out.isEmpty {
            error("'\(name)': <coordinates> is empty", at(element.offset))
            return nil
        }
        return out
    }

    // MARK: GPX

    /// Every `<wpt lat lon>`: a circle named by `<name>`, its radius from the Garmin extension's
    /// `<gpxx:Proximity>` (metres), else the entry's `radius`, else 100 m.
    mutating func gpx() {
        let root: XMLTree.Element
        do { root = try XMLTree.parse(bytes) } catch {
            self.error("not valid XML: \(error.message)", at(error.offset))
            return
        }
        let waypoints = root.children("wpt")
        if waypoints.isEmpty { warning("no waypoint (<wpt>) in this GPX file", at(root.offset)) }
        for (n, wpt) in waypoints.enumerated() {
            let here = at(wpt.offset)
            guard let lat = wpt.attribute("lat").flatMap({ Double($0.trimmingWhitespace()) }),
                  let lon = wpt.attribute("lon").flatMap({ Double($0.trimmingWhitespace()) }) else {
                error("a waypoint needs numbers 'lat' and 'lon'", here)
                continue
            }
            let name = wpt.childText("name").flatMap { $0.isEmpty ? nil : $0 } ?? "waypoint \(n + 1)"
            var radius = options.radius
            if let proximity = wpt.child("extensions")?.descendants("Proximity").first {
                guard let value = Double(proximity.text.trimmingWhitespace()), value.isFinite, value > 0 else {
                    error("'\(name)': Proximity must be a number of metres (got '\(proximity.text.clipped)')", at(proximity.offset))
                    continue
                }
                radius = value
            }
            add(id: name, name: name, shape: .circle(center: Coordinate(latitude: lat, longitude: lon), radiusMeters: radius), at: here)
        }
    }

    // MARK: Traccar

    /// The list Traccar's `/api/geofences` returns: objects with `name` and `area`, a WKT
    /// string with latitude BEFORE longitude: `CIRCLE (lat lon, radius)`,
    /// `POLYGON ((lat lon, lat lon, …))` (open or closed), `LINESTRING (lat lon, …)` (a
    /// corridor twice the geofence's `attributes.polylineDistance` wide, else the entry's
    /// `width`, else 50 m: Traccar's own default is 25 m either side). Longitudes past ±180
    /// (Traccar writes them by the antimeridian) are taken modulo 360.
    mutating func traccar() {
        let root: JSONTree.Node
        do { root = try JSONTree.parse(bytes) } catch {
            self.error("not valid JSON: \(error.message)", at(error.offset))
            return
        }
        guard let items = root.array ?? (root["area"] != nil ? [root] : nil) else {
            error("expected the list of geofences Traccar's API returns (got \(root.kind))", at(root.offset))
            return
        }
        for (n, item) in items.enumerated() {
            let here = at(item.offset)
            let name = item["name"]?.string.flatMap { $0.isEmpty ? nil : $0 } ?? item["id"]?.number.flatMap { Int(exactly: $0) }.map { "geofence \($0)" } ?? "geofence \(n + 1)"
            guard let area = item["area"]?.string else {
                error("geofence '\(name)' needs an 'area' (WKT)", here)
                continue
            }
            // Traccar's per-geofence line distance (either side of the line).
            var width = options.width
            if let distance = item["attributes"]?["polylineDistance"]?.number, distance > 0 { width = 2 * distance }
            switch WKT.parse(area, width: width) {
            case .success(let shape): add(id: name, name: name, shape: shape, at: at(item["area"]?.offset ?? item.offset))
            case .failure(let failure): error("geofence '\(name)': \(failure.message)", at(item["area"]?.offset ?? item.offset))
            }
        }
    }
}

/// Traccar's WKT, latitude before longitude.
enum WKT {
    struct Failure: Error {
        let message: String
    }

    static func parse(_ text: String, width: Double) -> Result<FenceShape, Failure> {
        let trimmed = text.trimmingWhitespace()
        guard let open = trimmed.firstIndex(of: "("), trimmed.last == ")" else {
            return .failure(Failure(message: "'\(text.clipped)' is not WKT (KIND (…))"))
        }
        let kind = trimmed[..<open].trimmingWhitespace().uppercased()
        let body = trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)]
        func pairs(_ list: Substring) -> [Coordinate]? {
            var out: [Coordinate] = []
            for item in list.split(separator: ",") {
                let numbers = item.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).map { Double($0) }
                guard numbers.count == 2, let lat = numbers[0], let lon = numbers[1], lon.isFinite else { return nil }
                // Traccar writes longitudes just past ±180 near the antimeridian (-180.0014);
                // farther out is a mistake, left for the range check to report.
                out.append(Coordinate(latitude: lat, longitude: abs(lon) <= 180 || abs(lon) > 181 ? lon : Geodesy.normalizedLongitude(lon)))
            }
            return out
        }
        switch kind {
        case "CIRCLE":
            let parts = body.split(separator: ",")
            guard parts.count == 2, let center = pairs(parts[0]), center.count == 1,
                  let radius = Double(parts[1].trimmingWhitespace()) else {
                return .failure(Failure(message: "CIRCLE must be 'CIRCLE (lat lon, radius)' (got '\(text.clipped)')"))
            }
            return .success(.circle(center: center[0], radiusMeters: radius))
        case "POLYGON":
            let ring = body.trimmingWhitespace()
            guard ring.first == "(", ring.last == ")", let points = pairs(ring.dropFirst().dropLast()) else {
                return .failure(Failure(message: "POLYGON must be 'POLYGON ((lat lon, lat lon, …))' (got '\(text.clipped)')"))
            }
            return .success(.polygons([PolygonRings(shell: points)]))
        case "LINESTRING":
            guard let points = pairs(body) else {
                return .failure(Failure(message: "LINESTRING must be 'LINESTRING (lat lon, lat lon, …)' (got '\(text.clipped)')"))
            }
            return .success(.corridor(lines: [points], widthMeters: width))
        default:
            return .failure(Failure(message: "'\(kind)' is not a Traccar area (CIRCLE, POLYGON or LINESTRING)"))
        }
    }
}
