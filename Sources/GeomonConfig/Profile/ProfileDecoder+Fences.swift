import GeomonFormat
import GeomonCore
#if canImport(Glibc)
import Glibc
#endif

extension ProfileDecoder {
    static let fenceKeys = ["id", "name", "circle", "polygon", "holes", "corridor", "geojson", "file", "format", "id_property", "name_property",
                            "id_prefix", "width", "width_property", "radius", "radius_property", "strict", "overrides"] + fenceRuleKeys
    /// Keys of what a fence reports, also allowed in `defaults:`.
    static let fenceRuleKeys = ["events", "dwell", "approach", "active", "cooldown", "speed_limit", "lint"]
    /// Keys of a file entry (`geojson` or `file`) only.
    static let geojsonOnlyKeys = ["id_property", "name_property", "id_prefix", "width", "width_property", "radius", "radius_property", "strict",
                                  "overrides"]
    /// Keys of a GeoJSON file only (not of the other formats).
    static let geojsonPropertyKeys = ["id_property", "name_property", "width_property", "radius_property", "strict"]
    /// The formats other than GeoJSON that take a file entry's `radius` (for points without
    /// one) and `width` (for lines without one).
    static let radiusFormats: [PlaceFileFormat] = [.kml, .kmz, .gpx]
    static let widthFormats: [PlaceFileFormat] = [.kml, .kmz, .traccar]
    /// The most a fence file other than GeoJSON may hold (it is read whole).
    static let maxPlaceFileBytes = 64 << 20

    func decodeFenceEntry(_ item: YAMLNode, into records: inout [FenceRecord]) {
        guard let f = fields(item, path: "fence", allowed: Self.fenceKeys) else { return }
        let shapeKeys = ["circle", "polygon", "corridor", "geojson", "file"].filter { f.entries[$0] != nil }
        if shapeKeys.isEmpty {
            error("a fence needs a shape: one of 'circle', 'polygon', 'corridor', or a file of fences: 'file' (or 'geojson')", item)
            return
        }
        if shapeKeys.count > 1, let second = f.key(shapeKeys[1]), let first = f.key(shapeKeys[0]) {
            error("a fence has exactly one shape; '\(shapeKeys[1])' conflicts with '\(shapeKeys[0])' (\(position(first)))", second)
            return
        }
        if let holesKey = f.key("holes"), shapeKeys[0] != "polygon" {
            error("'holes' can only be used with 'polygon'", holesKey)
        }
        guard let rules = decodeRules(f, base: fenceDefaults) else { return }

        if let key = f.key("format"), shapeKeys[0] != "file" { error("'format' can only be used with 'file'", key) }
        if shapeKeys[0] == "geojson" {
            if let key = f.key("id") { error("'id' cannot be used with 'geojson'; ids come from the features (see 'id_property')", key) }
            if let key = f.key("name") { error("'name' cannot be used with 'geojson'; names come from the features' 'name' property (or the one 'name_property' names)", key) }
            if let n = f["geojson"] { decodeGeoJSONEntry(f, pathNode: n, rules: rules, into: &records) }
            return
        }
        if shapeKeys[0] == "file" {
            if let key = f.key("id") { error("'id' cannot be used with 'file'; ids come from the file (see 'id_prefix')", key) }
            if let key = f.key("name") { error("'name' cannot be used with 'file'; names come from the file", key) }
            decodeFileEntry(f, rules: rules, into: &records)
            return
        }
        for key in Self.geojsonOnlyKeys {
            if let node = f.key(key) { error("'\(key)' can only be used with a file of fences ('file' or 'geojson')", node) }
        }
        var id: String?
        if let n = f["id"] {
            if let text = string(n, "id") {
                if let problem = FenceIDRule.problem(text) {
                    error("fence 'id' \(problem)", n)
                } else if registerFenceID(text, at: location(item.alias == nil ? n : item), geojsonFile: nil, alias: item.alias) {
                    id = text
                }
            }
        } else {
            error("missing required key 'id' in 'fence'", item)
        }
        var name: String?
        if let n = f["name"] { name = string(n, "name") }

        var shape: FenceShape?
        var radiusNode: YAMLNode?
        if let circleNode = f["circle"] {
            if let c = fields(circleNode, path: "circle", allowed: ["lat", "lon", "radius"], required: ["lat", "lon", "radius"]) {
                let lat = c["lat"].flatMap { number($0, "lat", range: -90...90, unit: "degrees") }
                let lon = c["lon"].flatMap { number($0, "lon", range: -180...180, unit: "degrees") }
                radiusNode = c["radius"]
                let radius = c["radius"].flatMap { quantity($0, "radius", .distance, maximum: (geometryMaxCircleRadiusMeters, "1000km")) }
                if let lat, let lon, let radius {
                    shape = .circle(center: Coordinate(latitude: lat, longitude: lon), radiusMeters: radius)
                }
            }
        } else if let polygonNode = f["polygon"] {
            shape = decodeInlinePolygon(polygonNode, holes: f["holes"])
        } else if let corridorNode = f["corridor"] {
            shape = decodeCorridor(corridorNode)
        }
        guard let id, let shape else { return }
        // Shapes the geometry cannot answer for (near the poles, wider than 180°, …).
        let limits = geometryLimitProblems(shape)
        for problem in limits { error("fence '\(id)': \(problem.text)", f["circle"] ?? f["polygon"] ?? f["corridor"] ?? item) }
        guard limits.isEmpty else { return }
        var fence = Fence(id: id, name: name, shape: shape)
        rules.apply(to: &fence)
        let anchorNode = f["id"] ?? item
        fence.location = location(anchorNode)
        append(fence, FenceRecord(radiusLocation: radiusNode.map(location), geojsonFile: nil,
                                  center: Self.center(of: shape), digest: shape.hashValue, lint: rules.lint), shape: shape, into: &records)
    }

    /// Adds a decoded fence: to the index being built and to the records. A GeoJSON fence's
    /// polygon or corridor is then kept only in the index (a big file is not held twice).
    func append(_ fence: Fence, _ record: FenceRecord, shape: FenceShape, into records: inout [FenceRecord]) {
        var fence = fence
        var record = record
        if let needed = inradiusNeeded {
            let inradius = Inradius.meters(of: shape, upTo: needed)
            if inradius < needed { record.smallInradius = (inradius, shape.kind) }
        }
        indexBuilder.add(shape)
        // Circles are a centre and a radius: kept with the fence (the lint rules read them).
        fence.shape = record.geojsonFile != nil && shape.kind != "circle" ? nil : shape
        decodedFences.append(fence)
        records.append(record)
    }

    /// What a fence entry (or `defaults:`) reports: `events`, `dwell` and `approach`, each
    /// taken from `base` when the entry does not set it. nil when invalid.
    func decodeRules(_ f: Fields, base: FenceRules?) -> FenceRules? {
        var rules = base ?? FenceRules()
        var dwellItem: YAMLNode?
        if let n = f["events"] {
            guard let items = list(n, "events") else { return nil }
            var set: Set<EventKind> = []
            var ok = true
            for item in items {
                if item.scalar == "location" {
                    error("'location' is not a fence event (it is reported in significant-change mode); use enter, exit or dwell", item)
                    ok = false
                    continue
                }
                if item.scalar == "approach" {
                    error("'approach' is not listed in 'events'; give the fence 'approach: {bands: [1km, 200m]}'", item)
                    ok = false
                    continue
                }
                guard let text = choice(item, "events", ["enter", "exit", "dwell"]), let kind = EventKind(rawValue: text) else {
                    ok = false
                    continue
                }
                if kind == .dwell { dwellItem = item }
                set.insert(kind)
            }
            if items.isEmpty {
                error("'events' must list at least one of enter, exit or dwell", n)
                ok = false
            }
            guard ok else { return nil }
            rules.events = set
        }
        var dwellBad = false
        if let n = f["dwell"] {
            if let (after, every) = decodeDwell(n) {
                rules.dwell = after
                rules.dwellEvery = every
            } else {
                dwellBad = true
            }
        }
        if let dwellItem, rules.dwell == nil, !dwellBad {
            error("the 'dwell' event needs a dwell time: add 'dwell: 5m' to this fence", dwellItem)
        } else if !dwellBad, let key = f.key("dwell"), !rules.events.contains(.dwell) {
            warning("'dwell' time is set but 'dwell' is not in 'events'; no dwell event will be reported", key)
        }
        if let n = f["approach"] {
            guard let approach = decodeApproach(n) else { return nil }
            rules.approach = approach
        }
        if let n = f["active"] {
            guard let schedule = decodeSchedule(n) else { return nil }
            rules.active = schedule
        }
        if let n = f["cooldown"] {
            guard let cooldown = duration(n, "cooldown", .nonNegative) else { return nil }
            rules.cooldown = cooldown > .zero ? cooldown : nil
        }
        if let n = f["speed_limit"] {
            guard let limit = decodeSpeedLimit(n) else { return nil }
            rules.speedLimit = limit
        }
        if let n = f["lint"] {
            guard let lint = boolean(n, "lint") else { return nil }
            rules.lint = lint
        }
        return rules
    }

    /// `speed_limit: 30km/h`, or `speed_limit: {limit: 30km/h, tolerance: 5km/h, for: 10s}`.
    private func decodeSpeedLimit(_ n: YAMLNode) -> SpeedLimit? {
        guard case .mapping = n.kind else { return quantity(n, "speed_limit", .speed).map { SpeedLimit(limitMetersPerSecond: $0) } }
        guard let f = fields(n, path: "speed_limit", allowed: ["limit", "tolerance", "for"], required: ["limit"]),
              let m = f["limit"], let limit = quantity(m, "limit", .speed) else { return nil }
        var result = SpeedLimit(limitMetersPerSecond: limit)
        if let m = f["tolerance"] {
            guard let v = quantity(m, "tolerance", .speed, .nonNegative) else { return nil }
            result.toleranceMetersPerSecond = v
        }
        if let m = f["for"] {
            guard let v = duration(m, "for", .nonNegative) else { return nil }
            result.duration = v
        }
        return result
    }

    /// `dwell: 5m`, or `dwell: {after: 2h, every: 1h}`.
    private func decodeDwell(_ n: YAMLNode) -> (Duration, Duration?)? {
        guard case .mapping = n.kind else { return duration(n, "dwell").map { ($0, nil) } }
        guard let d = fields(n, path: "dwell", allowed: ["after", "every"], required: ["after"]),
              let m = d["after"], let after = duration(m, "after") else { return nil }
        var every: Duration?
        if let m = d["every"] {
            guard let v = duration(m, "every") else { return nil }
            guard v >= .seconds(60) else {
                error("'every' must be at least 1m (got \(m.scalar ?? "")): a dwell repeats at most once a minute", m)
                return nil
            }
            every = v
        }
        return (after, every)
    }

    /// `approach: {bands: [5km, 1km, 200m], reset:, window:, min_speed:}`, or the list of
    /// bands alone.
    private func decodeApproach(_ n: YAMLNode) -> ApproachSettings? {
        var bandsNode: YAMLNode? = n
        var etaNode: YAMLNode?
        var f: Fields?
        if case .mapping = n.kind {
            guard let fields = fields(n, path: "approach", allowed: ["bands", "eta", "reset", "window", "min_speed"]) else { return nil }
            guard fields["bands"] != nil || fields["eta"] != nil else {
                error("'approach' needs 'bands' (distances from the boundary, e.g. [5km, 1km]) or 'eta' (times to arrival, e.g. [10m, 2m])", n)
                return nil
            }
            f = fields
            bandsNode = fields["bands"]
            etaNode = fields["eta"]
        }
        var bands: [Double] = []
        if let bandsNode {
            guard let items = list(bandsNode, "bands") else { return nil }
            guard (1...ApproachSettings.maxBands).contains(items.count) else {
                error("'bands' must list 1 to \(ApproachSettings.maxBands) distances from the boundary, e.g. [5km, 1km, 200m] (got \(items.count))", bandsNode)
                return nil
            }
            for item in items {
                guard let v = quantity(item, "bands", .distance, maximum: (1_000_000, "1000km")) else { return nil }
                if bands.contains(v) {
                    error("band \(item.scalar ?? "") is listed twice", item)
                    return nil
                }
                bands.append(v)
            }
        }
        var etaBands: [Duration] = []
        if let etaNode {
            guard let items = list(etaNode, "eta") else { return nil }
            guard (1...ApproachSettings.maxBands).contains(items.count) else {
                error("'eta' must list 1 to \(ApproachSettings.maxBands) times to arrival, e.g. [10m, 2m] (got \(items.count))", etaNode)
                return nil
            }
            for item in items {
                guard let v = duration(item, "eta") else { return nil }
                guard v <= .seconds(86_400) else {
                    error("an 'eta' band must be at most 1d (got \(item.scalar ?? ""))", item)
                    return nil
                }
                if etaBands.contains(v) {
                    error("eta band \(item.scalar ?? "") is listed twice", item)
                    return nil
                }
                etaBands.append(v)
            }
        }
        if bands.count + etaBands.count > ApproachSettings.maxBands {
            error("'approach' has \(bands.count + etaBands.count) bands; at most \(ApproachSettings.maxBands) in all", n)
            return nil
        }
        var settings = ApproachSettings(bandsMeters: bands, etaBands: etaBands)
        if let f {
            if let m = f["reset"] {
                guard let v = quantity(m, "reset", .distance, .nonNegative, maximum: (1_000_000, "1000km")) else { return nil }
                settings.resetMeters = v
            }
            if let m = f["window"] {
                guard let v = duration(m, "window") else { return nil }
                guard v >= .seconds(2) && v <= .seconds(3600) else {
                    error("'window' must be between 2s and 1h (got \(m.scalar ?? ""))", m)
                    return nil
                }
                settings.window = v
            }
            if let m = f["min_speed"] {
                guard let v = quantity(m, "min_speed", .speed) else { return nil }
                settings.minSpeedMetersPerSecond = v
            }
        }
        return settings
    }

    private func decodePoint(_ node: YAMLNode) -> Coordinate? {
        if case .sequence = node.kind {
            error("a point must be a mapping {lat: …, lon: …} (lists are ambiguous about the order)", node)
            return nil
        }
        guard let p = fields(node, path: "point", allowed: ["lat", "lon"], required: ["lat", "lon"]) else { return nil }
        let lat = p["lat"].flatMap { number($0, "lat", range: -90...90, unit: "degrees") }
        let lon = p["lon"].flatMap { number($0, "lon", range: -180...180, unit: "degrees") }
        guard let lat, let lon else { return nil }
        return Coordinate(latitude: lat, longitude: lon)
    }

    private func decodeRing(_ node: YAMLNode, _ name: String) -> (points: [Coordinate], nodes: [YAMLNode])? {
        guard let items = list(node, name) else { return nil }
        var points: [Coordinate] = []
        var ok = true
        for item in items {
            if let point = decodePoint(item) { points.append(point) } else { ok = false }
        }
        return ok ? (points, items) : nil
    }

    /// `corridor: {points: [{lat, lon}, …], width: 50m}`: everything within width/2 of the line.
    private func decodeCorridor(_ node: YAMLNode) -> FenceShape? {
        guard let c = fields(node, path: "corridor", allowed: ["points", "width"], required: ["points", "width"]) else { return nil }
        let width = c["width"].flatMap { quantity($0, "width", .distance, maximum: (2 * geometryMaxCircleRadiusMeters, "2000km")) }
        guard let pointsNode = c["points"], let line = decodeRing(pointsNode, "points") else { return nil }
        if Set(line.points).count < 2 {
            error("a corridor needs at least 2 distinct points (got \(Set(line.points).count))", pointsNode)
            return nil
        }
        guard let width else { return nil }
        return .corridor(lines: [line.points], widthMeters: width)
    }

    private func decodeInlinePolygon(_ node: YAMLNode, holes holesNode: YAMLNode?) -> FenceShape? {
        let shell = decodeRing(node, "polygon")
        var holes: [(points: [Coordinate], nodes: [YAMLNode], node: YAMLNode)] = []
        var holesOK = true
        if let holesNode, let items = list(holesNode, "holes") {
            for item in items {
                if let ring = decodeRing(item, "hole") { holes.append((ring.points, ring.nodes, item)) } else { holesOK = false }
            }
        } else if holesNode != nil {
            holesOK = false
        }
        guard let shell, holesOK else { return nil }
        let polygon = PolygonRings(shell: shell.points, holes: holes.map(\.points))
        let problems = PolygonValidity.problems(of: PolygonValidity.unwrapped(polygon))
        for problem in problems {
            switch problem {
            case .shell(let ring):
                reportRing(ring, what: "polygon", node: node, points: shell.nodes)
            case .hole(let h, let ring):
                reportRing(ring, what: "hole \(h + 1)", node: holes[h].node, points: holes[h].nodes)
            case .holeOutsideShell(let h):
                error("hole \(h + 1) is not inside the polygon", holes[h].node)
            case .holesOverlap(let a, let b):
                error("holes \(a + 1) and \(b + 1) overlap (their common part would count as inside)", holes[b].node)
            }
        }
        return problems.isEmpty ? .polygons([polygon]) : nil
    }

    private func reportRing(_ problem: PolygonValidity.RingProblem, what: String, node: YAMLNode, points: [YAMLNode]) {
        let point: Int? = switch problem {
        case .invalidCoordinate(let index): index
        case .selfIntersection(_, let b): b.from
        case .tooFewDistinctPoints, .zeroArea: nil
        }
        error(problem.text(what), point.flatMap { points.indices.contains($0) ? points[$0] : nil } ?? node)
    }

    /// `file: PATH` with `format:` given or inferred from the name (`PlaceFileFormat.inferred`):
    /// GeoJSON goes to the streaming reader, the other formats to `PlaceFiles`.
    private func decodeFileEntry(_ f: Fields, rules: FenceRules, into records: inout [FenceRecord]) {
        guard let n = f["file"], let relative = string(n, "file") else { return }
        if relative.isEmpty {
            error("'file' must name a file", n)
            return
        }
        var format: PlaceFileFormat?
        if let node = f["format"] {
            guard let text = choice(node, "format", PlaceFileFormat.allCases.map(\.rawValue)) else { return }
            format = PlaceFileFormat(rawValue: text)
        }
        if format == nil, !relative.lowercased().hasSuffix(".json") {
            format = PlaceFileFormat.inferred(path: relative, bytes: nil)
        }
        if format == .geojson {
            decodeGeoJSONEntry(f, pathNode: n, rules: rules, into: &records)
            return
        }
        let shown = displayPath(relative)
        if let problem = trust.problem(resolvedPath(relative), what: "fence file", shown: relative) {
            error(problem, n)
            return
        }
        // A `.json` file too large to be read whole can only be GeoJSON (the one format that
        // streams).
        var info = stat()
        if format == nil, stat(resolvedPath(relative), &info) == 0, Int(info.st_size) > Self.maxPlaceFileBytes {
            decodeGeoJSONEntry(f, pathNode: n, rules: rules, into: &records)
            return
        }
        let bytes: [UInt8]
        switch FileBytes.read(resolvedPath(relative), limit: Self.maxPlaceFileBytes) {
        case .failure(let message):
            error("cannot read fence file \(quotedPath(relative)): \(message)", n)
            return
        case .success(let read):
            bytes = read
        }
        if format == nil {
            format = PlaceFileFormat.sniffJSON(bytes)
            if format == .geojson {
                decodeGeoJSONEntry(f, pathNode: n, rules: rules, into: &records)
                return
            }
        }
        guard let format else {
            error("cannot tell the format of \(quotedPath(relative)) from its name; add 'format:' (one of \(PlaceFileFormat.allCases.map(\.rawValue).joined(separator: ", ")))", n)
            return
        }
        for key in Self.geojsonPropertyKeys {
            if let node = f.key(key) { error("'\(key)' can only be used with a GeoJSON file (this one is \(format.rawValue))", node) }
        }
        if format == .homeassistant { homeAssistantZones = true }
        for (key, users) in [("radius", Self.radiusFormats), ("width", Self.widthFormats)] where !users.contains(format) {
            guard let node = f.key(key) else { continue }
            error("'\(key)' has no effect for \(format.displayName) files (only \(users.map(\.displayName).joined(separator: ", ")) and GeoJSON files use it)", node)
        }
        var options = PlaceFiles.Options()
        if let p = f["radius"], Self.radiusFormats.contains(format) {
            guard let v = quantity(p, "radius", .distance, maximum: (geometryMaxCircleRadiusMeters, "1000km")) else { return }
            options.radius = v
        }
        if let p = f["width"], Self.widthFormats.contains(format) {
            guard let v = quantity(p, "width", .distance, maximum: (2 * geometryMaxCircleRadiusMeters, "2000km")) else { return }
            options.width = v
        }
        guard let idPrefix = decodeIDPrefix(f) else { return }
        if let alias = f.node.alias {
            error("this entry is the alias '*\(alias)': it repeats the fence file '\(relative)', whose fence ids are already defined; give the copy its own 'id_prefix' in a separate entry instead", f.node)
            return
        }
        // Home Assistant's `!include` and `!secret`: files beside this one, trusted like it.
        let directory = directoryPart(of: resolvedPath(relative))
        let read = PlaceFiles.read(bytes, file: shown, format: format, options: options, readFile: { name in
            let path = name.hasPrefix("/") || directory.isEmpty ? name : directory + "/" + name
            guard self.trust.problem(path, what: "fence file", shown: name) == nil,
                  case .success(let included) = FileBytes.read(path, limit: Self.maxPlaceFileBytes) else { return nil }
            return included
        }, listYAML: { name in
            Self.yamlFiles(in: name, base: directory)
        })
        diagnostics += read.diagnostics
        guard var overrides = decodeOverrides(f, base: rules) else { return }
        for place in read.places {
            let id = idPrefix + place.id
            guard prefixedIDIsValid(id, prefix: idPrefix, at: place.location),
                  registerFenceID(id, at: place.location, geojsonFile: shown, entry: location(n)) else { continue }
            var fence = Fence(id: id, name: place.name, shape: place.shape)
            let own = overrides.take(id) ?? rules
            own.apply(to: &fence)
            fence.location = place.location
            append(fence, FenceRecord(radiusLocation: nil, geojsonFile: shown, center: Self.center(of: place.shape), digest: place.shape.hashValue,
                                      lint: own.lint),
                   shape: place.shape, into: &records)
        }
        overrides.reportUnused(file: relative, self)
        if read.places.isEmpty && !read.diagnostics.contains(where: { $0.severity == .error }) {
            warning("fence file \(quotedPath(relative)) has no places", n)
        }
    }

    /// `overrides:` of a file entry: per fence id (as geomon names it, `id_prefix` included),
    /// the rule keys (`events`, `dwell`, `approach`, `active`, `lint`) that replace the entry's
    /// for that fence — "approach bands for home only" among a file's zones. nil when invalid.
    private func decodeOverrides(_ f: Fields, base: FenceRules) -> FenceOverrides? {
        var result = FenceOverrides()
        guard let n = f["overrides"] else { return result }
        if n.isNull { return result }
        guard case .mapping(let pairs) = n.kind else {
            error("'overrides' must be a mapping of fence ids to rules, e.g. {home: {approach: {eta: [10m]}}} (got \(n.kindDescription))", n)
            return nil
        }
        var ok = true
        for pair in pairs {
            guard let id = pair.key.scalar, !id.isEmpty else {
                error("'overrides' keys must be fence ids", pair.key)
                ok = false
                continue
            }
            if result.byID[id] != nil {
                error("fence '\(id)' is listed twice in 'overrides'", pair.key)
                ok = false
                continue
            }
            guard let fields = fields(pair.value, path: "overrides.\(id)", allowed: Self.fenceRuleKeys),
                  let rules = decodeRules(fields, base: base) else {
                ok = false
                continue
            }
            result.byID[id] = (rules, pair.key)
        }
        return ok ? result : nil
    }

    /// The `*.yaml` files under `name` (relative to `base`, or absolute) as Home Assistant's
    /// `!include_dir_*` take them: recursively, names starting with `.` and `secrets.yaml` left
    /// out, each directory's files sorted by name, then its subdirectories sorted by name
    /// (Home Assistant walks those in the file system's order); paths relative to `base`
    /// (absolute when `name` is). nil when the directory cannot be read. At most 10,000 files.
    static func yamlFiles(in name: String, base: String) -> [String]? {
        var result: [String] = []
        func walk(_ relative: String) -> Bool {
            let path = relative.hasPrefix("/") || base.isEmpty ? relative : base + "/" + relative
            guard let dir = opendir(path) else { return false }
            defer { closedir(dir) }
            var files: [String] = [], directories: [String] = []
            while let entry = readdir(dir) {
                let entryName = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
                }
                guard !entryName.hasPrefix(".") else { continue }
                var info = stat()
                guard stat(path + "/" + entryName, &info) == 0 else { continue }
                if info.st_mode & S_IFMT == S_IFDIR {
                    directories.append(entryName)
                } else if entryName.hasSuffix(".yaml"), entryName != "secrets.yaml" {
                    files.append(entryName)
                }
            }
            result += files.sorted().map { relative + "/" + $0 }
            for sub in directories.sorted() where result.count < 10_000 { _ = walk(relative + "/" + sub) }
            return true
        }
        var trimmed = name
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed.removeLast() }
        return walk(trimmed) ? Array(result.prefix(10_000)) : nil
    }

    /// `id_prefix`: "" when absent, nil (with an error) when invalid: 1 to 64 characters
    /// without spaces, and nothing a fence id may not hold (`FenceIDRule`).
    private func decodeIDPrefix(_ f: Fields) -> String? {
        guard let p = f["id_prefix"] else { return "" }
        guard let text = string(p, "id_prefix") else { return nil }
        if text.isEmpty || text.count > 64 || text.unicodeScalars.contains(where: { $0.properties.isWhitespace }) {
            error("'id_prefix' must be 1 to 64 characters without spaces (got '\(text.clipped)')", p)
            return nil
        }
        if let problem = FenceIDRule.problem(text) {
            error("'id_prefix' \(problem)", p)
            return nil
        }
        return text
    }

    /// Whether `id`, a file's id behind the entry's `prefix`, is still a fence id: the file's
    /// reader checked the id alone, and the two together may be longer than one may be.
    /// Reports it at `location` (the place in the file) when it is not.
    private func prefixedIDIsValid(_ id: String, prefix: String, at location: SourceLocation) -> Bool {
        guard !prefix.isEmpty, let problem = FenceIDRule.problem(id) else { return true }
        diagnostics.append(.error("this place cannot be a fence: its id with the entry's 'id_prefix' '\(prefix)' \(problem)", at: location))
        return false
    }

    private func decodeGeoJSONEntry(_ f: Fields, pathNode n: YAMLNode, rules: FenceRules, into records: inout [FenceRecord]) {
        let key = f["file"] != nil ? "file" : "geojson"
        guard let relative = string(n, key) else { return }
        var idProperty: String?
        if let p = f["id_property"] {
            guard let text = string(p, "id_property") else { return }
            idProperty = text
        }
        var options = GeoJSONFences.Options(idProperty: idProperty, strict: strictGeoJSON)
        // An empty property name would name no property: every one is reported.
        var emptyProperty = false
        if let p = f["name_property"] {
            guard let text = string(p, "name_property") else { return }
            if text.isEmpty {
                error("'name_property' must not be empty: it names a property of the features", p)
                emptyProperty = true
            }
            options.nameProperty = text
        }
        if let p = f["strict"], let v = boolean(p, "strict") { options.strict = options.strict || v }
        if let p = f["width"] {
            guard let v = quantity(p, "width", .distance, maximum: (2 * geometryMaxCircleRadiusMeters, "2000km")) else { return }
            options.width = v
        }
        if let p = f["radius"] {
            guard let v = quantity(p, "radius", .distance, maximum: (geometryMaxCircleRadiusMeters, "1000km")) else { return }
            options.radius = v
        }
        for (key, path) in [("width_property", \GeoJSONFences.Options.widthProperty), ("radius_property", \GeoJSONFences.Options.radiusProperty)] {
            guard let p = f[key] else { continue }
            guard let text = string(p, key) else { return }
            if text.isEmpty {
                error("'\(key)' must not be empty: it names a property of the features", p)
                emptyProperty = true
            }
            options[keyPath: path] = text
        }
        guard !emptyProperty else { return }
        guard let idPrefix = decodeIDPrefix(f) else { return }
        if relative.isEmpty {
            error("'\(key)' must name a file", n)
            return
        }
        if let alias = f.node.alias {
            error("this entry is the alias '*\(alias)': it repeats the GeoJSON file '\(relative)', whose fence ids are already defined; give the copy its own 'id_prefix' in a separate entry instead", f.node)
            return
        }
        let shown = displayPath(relative)
        if let problem = trust.problem(resolvedPath(relative), what: "GeoJSON file", shown: relative) {
            error(problem, n)
            return
        }
        let mapped: MappedFile
        switch MappedFile.open(resolvedPath(relative)) {
        case .failure(let failure):
            error("cannot read GeoJSON file \(quotedPath(relative)): \(failure.reason)", n)
            return
        case .success(let file):
            mapped = file
        }
        // Each fence goes to the index as it is read: no copy of the file's shapes is kept.
        indexBuilder.reserve(geoJSONBytes: mapped.size)
        // The fences before this file's (of the profile and its earlier files).
        let before = decodedFences.count
        guard var overrides = decodeOverrides(f, base: rules) else { return }
        let entry = location(n)
        let result = GeoJSONFences.read(mapped, file: shown, options: options) { fence, shape in
            if self.decodedFences.count == self.decodedFences.capacity {
                let room = before + StreamGrowth.room(count: self.decodedFences.count - before, capacity: self.decodedFences.capacity - before,
                                                      read: mapped.position, total: mapped.size)
                self.decodedFences.reserveCapacity(room)
                records.reserveCapacity(room)
                self.fenceIDs.reserveCapacity(room)
                self.indexBuilder.reserve(fences: room)
            }
            var fence = fence
            fence.id = idPrefix + fence.id
            guard self.prefixedIDIsValid(fence.id, prefix: idPrefix, at: fence.location ?? entry),
                  self.registerFenceID(fence.id, at: fence.location ?? entry, geojsonFile: shown, entry: entry) else { return }
            let own = overrides.isEmpty ? rules : overrides.take(fence.id) ?? rules
            own.apply(to: &fence)
            if fence.location == nil { fence.location = self.location(n) }
            self.append(fence, FenceRecord(radiusLocation: nil, geojsonFile: shown,
                                           center: Self.center(of: shape), digest: shape.hashValue, lint: own.lint), shape: shape, into: &records)
        }
        overrides.reportUnused(file: relative, self)
        diagnostics += result.diagnostics
        repairedFences += result.repaired.map { idPrefix + $0 }
        if let idProperty, let node = f["id_property"], result.featuresWithIDProperty == 0, result.fenceCount > 0 {
            // Not one feature has it: a typo, not features that fall back to their 'id'.
            var message = "no feature of GeoJSON file '\(relative)' has a property '\(idProperty)'"
            if let suggestion = EditDistance.suggestion(for: idProperty, among: result.propertyNames) {
                message += "; did you mean '\(suggestion)'?"
            } else if !result.propertyNames.isEmpty {
                message += " (its properties: " + result.propertyNames.prefix(8).map { "'\($0)'" }.joined(separator: ", ") + (result.propertyNames.count > 8 ? ", …" : "") + ")"
            }
            error(message, node)
            return
        }
        if result.fenceCount == 0 && result.diagnostics.isEmpty {
            warning("GeoJSON file \(quotedPath(relative)) has no features", n)
        }
    }
}

extension PolygonValidity.RingProblem {
    /// The problem as a message about the ring `what` ("polygon", "hole 2", …).
    func text(_ what: String) -> String {
        switch self {
        case .invalidCoordinate(let index): "\(what): point \(index + 1) is out of range"
        case .tooFewDistinctPoints(let count): "\(what) needs at least 3 distinct points (got \(count))"
        case .zeroArea: "\(what) has zero area (all points on one line)"
        case .selfIntersection(let a, let b): "\(what) edges cross: points \(a.from + 1)–\(a.to + 1) and \(b.from + 1)–\(b.to + 1)"
        }
    }
}
