import GeomonFormat
import GeomonCore
#if canImport(Glibc)
import Glibc
#endif

/// A JSON syntax error at a byte offset.

/// The single-pass reader behind `GeoJSONFences`.
final class GeoJSONReader {
    let p: UnsafeBufferPointer<UInt8>
    let n: Int
    /// The read position (the lexer's, `GeoJSONReader+Lexer.swift`).
    var i = 0
    private let file: String
    private let options: GeoJSONFences.Options
    /// The properties that give a corridor's width or a circle's radius (`options`).
    private let sizeProperties: Set<String>
    private var idProperty: String? { options.idProperty }
    private var checkPolygons: Bool { options.checkPolygons }
    private var lineStarts: [Int]?
    private var firstIDOffset: [String: (offset: Int, index: Int)] = [:]
    private let maxDiagnostics = 200
    private var stopped = false
    private var scratch = PositionBuffer()
    /// Shared by all fences (one set storage instead of one per fence).
    private let defaultEvents: Set<EventKind> = [.enter, .exit]
    /// The last position resolved by `location(_:)`, for the incremental (forward) case.
    private var lastLocated = (offset: 0, line: 1, lineStart: 0)
    /// 0-based index of the feature being read (messages name it as `features[i]`).
    private var featureIndex = 0
    /// Coordinates out of range in the feature being read: the first is reported, the rest counted.
    private var rangeProblems: (first: JSONCursor.Problem?, count: Int, latitude: Bool) = (nil, 0, false)
    /// Whether the `[longitude, latitude]` hint was given (once per file).
    private var orderHintGiven = false
    /// Features without an id: the first (where, which, its name), how many, and the property
    /// names every one of them has (one error for the file names them).
    private var missingIDs: (first: (offset: Int, index: Int, name: String?)?, count: Int, keysInAll: [String]) = (nil, 0, [])

    var fences: [Fence] = []
    var diagnostics: [Diagnostic] = []
    /// Takes each fence as it is read (instead of `fences`).
    var sink: ((Fence, FenceShape) -> Void)?
    /// Told each feature's start: the bytes before it are not needed for reading on.
    var progress: ((Int) -> Void)?
    private(set) var fenceCount = 0
    /// Property names over all features, first-seen order.
    private(set) var propertyNames: [String] = []
    private var propertyNameSet: Set<String> = []
    private(set) var featuresWithIDProperty = 0
    private(set) var repaired: [String] = []
    /// The feature being read has a ring defect the even-odd rule reads through.
    private var featureRepaired = false
    /// Cosmetic defects over the file (one warning at the end): rings wound against RFC 7946,
    /// and repeated consecutive positions; where the first of each was.
    private var windingCount = 0, windingFirst: (location: SourceLocation, feature: Int)?
    private var duplicateCount = 0, duplicateFirst: (location: SourceLocation, feature: Int)?

    init(_ buffer: UnsafeBufferPointer<UInt8>, file: String, options: GeoJSONFences.Options) {
        p = buffer
        n = buffer.count
        self.file = file
        self.options = options
        sizeProperties = Set([options.widthProperty, options.radiusProperty].compactMap { $0 })
    }

    // MARK: - Positions and diagnostics

    func location(_ offset: Int) -> SourceLocation {
        if offset >= lastLocated.offset && offset <= n {
            // Forward from the last answer: count newlines in between (one pass overall).
            var line = lastLocated.line
            var lineStart = lastLocated.lineStart
            if let base = p.baseAddress {
                var k = lastLocated.offset
                while k < offset, let hit = memchr(base + k, 0x0A, offset - k) {
                    let newline = UnsafeRawPointer(hit).assumingMemoryBound(to: UInt8.self) - base
                    line += 1
                    lineStart = newline + 1
                    k = newline + 1
                }
            }
            lastLocated = (offset, line, lineStart)
            return SourceLocation(file: file, line: line, column: column(from: lineStart, to: offset))
        }
        if lineStarts == nil {
            var starts = [0]
            for k in 0..<n where p[k] == 0x0A { starts.append(k + 1) }
            lineStarts = starts
        }
        let starts = lineStarts ?? [0]
        var lo = 0, hi = starts.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if starts[mid] <= offset { lo = mid } else { hi = mid - 1 }
        }
        return SourceLocation(file: file, line: lo + 1, column: column(from: starts[lo], to: offset))
    }

    private func column(from lineStart: Int, to offset: Int) -> Int {
        TextPositions.column(in: p, lineStart: lineStart, offset: offset)
    }

    /// A ring defect: a warning (the fence is used by the even-odd rule), or an error in
    /// strict mode. Returns true when the feature stays usable.
    private func defect(_ message: String, at offset: Int) -> Bool {
        if options.strict {
            report(message + " (an error in strict mode)", at: offset)
            return false
        }
        guard !stopped else { return true }
        var warning = Diagnostic.warning(message + "; used by the even-odd rule", at: location(offset))
        warning.topic = .ringDefect
        diagnostics.append(warning)
        featureRepaired = true
        return true
    }

    private func report(_ message: String, at offset: Int) {
        guard !stopped else { return }
        if diagnostics.count >= maxDiagnostics {
            diagnostics.append(.error("too many errors in this file; stopping", at: location(offset)))
            stopped = true
            return
        }
        diagnostics.append(.error(message, at: location(offset)))
    }

    // MARK: - Driver

    func run() {
        do {
            if n >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF { i = 3 }
            try skipSpace()
            guard i < n else {
                report("GeoJSON file is empty", at: 0)
                return
            }
            try parseRoot()
            reportCosmetics()
            try skipSpace()
            if i < n { throw JSONSyntaxError(offset: i, message: "unexpected text after the end of the JSON value") }
        } catch let error as JSONSyntaxError {
            stopped = false
            report("invalid JSON: \(error.message)", at: error.offset)
        } catch {
            report("invalid JSON", at: i)
        }
    }

    private func parseRoot() throws {
        let start = i
        guard peek() == UInt8(ascii: "{") else {
            throw JSONSyntaxError(offset: i, message: "a GeoJSON file must be an object (a FeatureCollection)")
        }
        var type: String?
        var typeOffset = start
        var sawFeatures = false
        try parseObject { key, offset in
            switch key {
            case "type":
                typeOffset = self.i
                type = try self.parseStringValue()
            case "features":
                sawFeatures = true
                try self.parseFeatures()
            default:
                try self.skipValue(depth: 1)
            }
            _ = offset
        }
        reportMissingIDs()
        if let type, type != "FeatureCollection" {
            report("GeoJSON root must be a FeatureCollection (got '\(type)')", at: typeOffset)
        } else if type == nil {
            report("GeoJSON root has no \"type\": \"FeatureCollection\"", at: start)
        } else if !sawFeatures {
            report("GeoJSON FeatureCollection has no 'features' array", at: start)
        }
    }

    private func parseFeatures() throws {
        guard peek() == UInt8(ascii: "[") else {
            let at = i
            try skipValue(depth: 1)
            report("'features' must be an array", at: at)
            return
        }
        try parseArray { index in
            if self.stopped {
                try self.skipValue(depth: 2)
            } else {
                self.featureIndex = index
                self.progress?(self.i)
                try self.parseFeature()
            }
        }
    }

    private func parseFeature() throws {
        let start = i
        let firstDiagnostic = diagnostics.count
        rangeProblems = (nil, 0, false)
        featureRepaired = false
        // Located first: positions are found walking forward through the file (a later one
        // first would send this one back through the whole file).
        let startLocation = location(start)
        guard peek() == UInt8(ascii: "{") else {
            try skipValue(depth: 2)
            report("features[\(featureIndex)]: a feature must be an object", at: start)
            return
        }
        var propertyKeys: [String] = []
        var typeOK = false
        var typeSeen = false
        var id: String?
        var idBad = false
        var propertyID: String?
        var propertyIDBad = false
        var name: String?
        var geometry: ParsedGeometry?
        var geometryOffset = start
        var geometrySeen = false
        var geometryBad = false
        // Per-feature corridor width and circle radius (metres), when the options name them.
        var sizes: [String: (value: Double?, offset: Int)] = [:]
        let sizeProperties = self.sizeProperties
        let idProperty = self.idProperty
        let nameProperty = options.nameProperty
        try parseObject { key, _ in
            switch key {
            case "type":
                typeSeen = true
                let offset = self.i
                let value = try self.parseStringValue()
                typeOK = value == "Feature"
                if !typeOK { self.report("feature type must be 'Feature' (got '\(value ?? "non-string")')", at: offset) }
            case "id":
                let offset = self.i
                if let value = try self.parseIDValue() {
                    id = value
                } else {
                    idBad = true
                    self.report("feature 'id' must be a string or a number", at: offset)
                }
            case "properties":
                if self.peek() == UInt8(ascii: "{") {
                    try self.parseObject { pkey, _ in
                        propertyKeys.append(pkey)
                        if self.propertyNameSet.insert(pkey).inserted { self.propertyNames.append(pkey) }
                        if let idProperty, pkey == idProperty {
                            self.featuresWithIDProperty += 1
                            let offset = self.i
                            if let value = try self.parseIDValue() {
                                propertyID = value
                                if pkey == nameProperty { name = value }
                            } else {
                                propertyIDBad = true
                                self.report("property '\(idProperty)' must be a string or a number", at: offset)
                            }
                        } else if pkey == nameProperty {
                            // A string or a number; anything else (null) is no name.
                            name = try self.parseIDValue()
                        } else if sizeProperties.contains(pkey) {
                            let offset = self.i
                            sizes[pkey] = (try self.parseNumberValue(), offset)
                        } else {
                            try self.skipValue(depth: 4)
                        }
                    }
                } else {
                    try self.skipValue(depth: 3)
                }
            case "geometry":
                geometrySeen = true
                geometryOffset = self.i
                if let parsed = try self.parseGeometry() {
                    geometry = parsed
                } else {
                    geometryBad = true
                }
            default:
                try self.skipValue(depth: 3)
            }
        }
        if !typeSeen { report("no \"type\": \"Feature\"", at: start) }
        if !geometrySeen { report("no 'geometry'", at: start) }
        reportRangeProblems()
        var fenceID = propertyID ?? id
        if propertyID == nil && !propertyIDBad && id == nil && !idBad {
            // Reported once for the file, after the last feature (`reportMissingIDs`).
            if missingIDs.first == nil { missingIDs.first = (start, featureIndex, name) }
            missingIDs.count += 1
            missingIDs.keysInAll = missingIDs.count == 1 ? propertyKeys : missingIDs.keysInAll.filter(propertyKeys.contains)
        }
        if let candidate = fenceID {
            if let problem = FenceIDRule.problem(candidate) {
                report("the id \(problem)", at: start)
                fenceID = nil
            } else {
                if firstIDOffset.count == firstIDOffset.capacity { reserveIDs() }
                // One probe for the usual case, a new id; a repeated one is put back.
                if let first = firstIDOffset.updateValue((start, featureIndex), forKey: candidate) {
                    firstIDOffset[candidate] = first
                    let at = location(first.offset)
                    report("duplicate feature id '\(candidate)' (first: features[\(first.index)] at line \(at.line), column \(at.column))", at: start)
                    fenceID = nil
                }
            }
        }
        var shape: FenceShape?
        if typeOK, !geometryBad, let geometry {
            shape = self.shape(geometry, sizes: sizes, at: geometryOffset)
        }
        if let candidate = shape, fenceID != nil, checkPolygons {
            let limits = geometryLimitProblems(candidate)
            for problem in limits { report(problem.text, at: start) }
            if !limits.isEmpty { shape = nil }
        }
        nameFeature(from: firstDiagnostic, id: propertyID ?? id, name: name)
        guard let fenceID, let shape else { return }
        if featureRepaired { repaired.append(fenceID) }
        fenceCount += 1
        if let sink {
            var fence = Fence(id: fenceID, name: name, shape: nil, events: defaultEvents)
            fence.location = startLocation
            sink(fence, shape)
        } else {
            var fence = Fence(id: fenceID, name: name, shape: shape, events: defaultEvents)
            fence.location = startLocation
            fences.append(fence)
        }
    }

    /// A parsed geometry, before the properties that size it are known.
    enum ParsedGeometry {
        case polygons([PolygonRings])
        case lines([[Coordinate]])
        case point(Coordinate)
    }

    /// Makes room in `firstIDOffset` for the ids the rest of the file likely holds.
    private func reserveIDs() {
        firstIDOffset.reserveCapacity(StreamGrowth.room(count: featureIndex, capacity: firstIDOffset.capacity, read: i, total: n))
    }

    /// The fence shape of a geometry: lines need a width, a point a radius (the feature's
    /// property, else the entry's default).
    private func shape(_ geometry: ParsedGeometry, sizes: [String: (value: Double?, offset: Int)], at offset: Int) -> FenceShape? {
        func size(property: String?, fallback: Double?, what: String, key: String, propertyKey: String) -> Double? {
            if let property, let given = sizes[property] {
                guard let value = given.value, value.isFinite, value > 0 else {
                    report("property '\(property)' must be a positive number of metres (the \(what))", at: given.offset)
                    return nil
                }
                return value
            }
            if let fallback { return fallback }
            let hint = property.map { "this feature has no '\($0)' property and the entry no '\(key)'" }
                ?? "set '\(key)' on the fence entry, or '\(propertyKey)' to read it from each feature"
            report("a \(what == "corridor width" ? "line" : "point") is a fence only with a \(what): \(hint)", at: offset)
            return nil
        }
        switch geometry {
        case let .polygons(polygons):
            return .polygons(polygons)
        case let .lines(lines):
            guard let width = size(property: options.widthProperty, fallback: options.width, what: "corridor width", key: "width", propertyKey: "width_property") else { return nil }
            return .corridor(lines: lines, widthMeters: width)
        case let .point(center):
            guard let radius = size(property: options.radiusProperty, fallback: options.radius, what: "circle radius", key: "radius", propertyKey: "radius_property") else { return nil }
            guard radius <= geometryMaxCircleRadiusMeters else {
                report("a circle radius of \(NumberText.short(radius, 1)) m is over the supported 1000 km", at: offset)
                return nil
            }
            return .circle(center: center, radiusMeters: radius)
        }
    }

    /// One error for every feature without an id, at the first of them: how many, which
    /// properties they all have, and the id property to name (an id-like property they all
    /// have, or one near the named property's spelling).
    private func reportMissingIDs() {
        guard let first = missingIDs.first else { return }
        let count = missingIDs.count
        let which = count == 1 ? "features[\(first.index)]" + (first.name.map { " (name '\($0.clipped)')" } ?? "") + " has"
            : "\(count) features (the first: features[\(first.index)]" + (first.name.map { ", name '\($0.clipped)'" } ?? "") + ") have"
        var message = which + (idProperty.map { " no id (no 'id' member and no '\($0)' property)" } ?? " no 'id'")
        let keys = missingIDs.keysInAll
        if !keys.isEmpty {
            message += "; " + (count == 1 ? "its" : "all have the") + " properties " + keys.prefix(8).map { "'\($0)'" }.joined(separator: ", ") + (keys.count > 8 ? ", …" : "")
        }
        let spell = options.idPropertySpelling
        if let idProperty, let suggestion = EditDistance.suggestion(for: idProperty, among: keys) {
            message += "; did you mean '\(spell(suggestion))'?"
        } else if idProperty == nil, let likely = Self.idLikeProperties.first(where: keys.contains) {
            message += "; name the property that identifies each feature, e.g. '\(spell(likely))'"
        } else if idProperty == nil {
            message += "; give each feature an 'id', or name the property that identifies it with '\(spell("PROPERTY"))'"
        }
        report(message, at: first.offset)
    }

    /// Property names that usually identify a feature, most specific first.
    static let idLikeProperties = ["id", "ID", "Id", "fid", "FID", "osm_id", "@id", "code", "CODE", "ref", "name", "NAME", "Name", "nazev", "NAZEV"]

    /// Prefixes the diagnostics of the feature just read with which feature it is:
    /// `features[3] (id 'ams-12', name 'Vondelpark'): …`.
    private func nameFeature(from first: Int, id: String?, name: String?) {
        guard first < diagnostics.count else { return }
        var parts: [String] = []
        if let id, !id.isEmpty { parts.append("id '\(id.clipped)'") }
        if let name, !name.isEmpty { parts.append("name '\(name.clipped)'") }
        let prefix = "features[\(featureIndex)]" + (parts.isEmpty ? "" : " (" + parts.joined(separator: ", ") + ")") + ": "
        for k in first..<diagnostics.count where !diagnostics[k].message.hasPrefix("too many errors") {
            diagnostics[k].message = prefix + diagnostics[k].message
        }
    }

    /// One diagnostic for the feature's coordinates out of range: the first, how many more,
    /// and (once per file, for latitudes) that GeoJSON positions are `[longitude, latitude]`.
    private func reportRangeProblems() {
        guard let first = rangeProblems.first else { return }
        var message = first.message
        if rangeProblems.count > 1 { message += " (and \(rangeProblems.count - 1) more \(rangeProblems.count == 2 ? "position" : "positions") out of range in this feature)" }
        if rangeProblems.latitude && !orderHintGiven {
            message += "; GeoJSON positions are [longitude, latitude]: are these written [latitude, longitude]?"
            orderHintGiven = true
        }
        report(message, at: first.offset)
    }

    /// The geometry types a fence can be made of.
    static let fenceGeometryTypes = ["Polygon", "MultiPolygon", "LineString", "MultiLineString", "Point"]

    /// A geometry object → its parsed coordinates, or nil after reporting why not.
    private func parseGeometry() throws -> ParsedGeometry? {
        let start = i
        if peekLiteral("null") {
            try skipValue(depth: 3)
            report("feature geometry is null; a fence needs a Polygon, MultiPolygon, LineString, MultiLineString or Point", at: start)
            return nil
        }
        guard peek() == UInt8(ascii: "{") else {
            try skipValue(depth: 3)
            report("feature 'geometry' must be an object", at: start)
            return nil
        }
        var type: String?
        var typeOffset = start
        var coordinatesOffset: Int?
        var parsed: ParsedGeometry??
        try parseObject { key, _ in
            switch key {
            case "type":
                typeOffset = self.i
                type = try self.parseStringValue()
            case "coordinates":
                coordinatesOffset = self.i
                if let type, Self.fenceGeometryTypes.contains(type) {
                    // The usual order: read the coordinates right away.
                    parsed = .some(try self.parseCoordinates(type: type))
                } else {
                    // Type not known yet: come back once it is.
                    try self.skipValue(depth: 4)
                }
            default:
                try self.skipValue(depth: 4)
            }
        }
        let end = i
        guard let type else {
            report("geometry has no 'type'", at: start)
            return nil
        }
        guard Self.fenceGeometryTypes.contains(type) else {
            report("geometry type '\(type)' is not supported; fences are Polygon, MultiPolygon, LineString or MultiLineString (corridors, with a width) or Point (a circle, with a radius)", at: typeOffset)
            return nil
        }
        guard let coordinatesOffset else {
            report("\(type) has no 'coordinates'", at: start)
            return nil
        }
        if let parsed { return parsed }
        i = coordinatesOffset
        defer { i = end }
        return try parseCoordinates(type: type)
    }

    /// The coordinates of a geometry of `type` at `i`; nil after reporting problems.
    private func parseCoordinates(type: String) throws -> ParsedGeometry? {
        switch type {
        case "Polygon", "MultiPolygon":
            return try parseCoordinates(multi: type == "MultiPolygon").map(ParsedGeometry.polygons)
        case "Point":
            var cursor = JSONCursor(p, at: i)
            guard peek() == UInt8(ascii: "[") else {
                try skipValue(depth: 5)
                report("Point coordinates must be a position [longitude, latitude]", at: cursor.j)
                return nil
            }
            var problems: [JSONCursor.Problem] = []
            let point = try cursor.position(&problems)
            i = cursor.j
            routeProblems(problems)
            return point.map(ParsedGeometry.point)
        default:
            let start = i
            var lines: [[Coordinate]] = []
            var bad = false
            func line() throws {
                let offset = self.i
                guard try self.expectArray("a line must be an array of positions") else { bad = true; return }
                var cursor = JSONCursor(self.p, at: self.i)
                var problems: [JSONCursor.Problem] = []
                let (points, _) = try cursor.ring(&problems, scratch: &self.scratch)
                self.i = cursor.j
                self.routeProblems(problems)
                guard let points else { bad = true; return }
                if Set(points).count < 2 {
                    self.report("a line needs at least 2 distinct positions (got \(Set(points).count))", at: offset)
                    bad = true
                    return
                }
                lines.append(points)
            }
            if type == "LineString" {
                try line()
            } else {
                guard try expectArray("MultiLineString coordinates must be an array of lines") else { return nil }
                try parseArray { _ in try line() }
                if lines.isEmpty && !bad {
                    report("MultiLineString has no lines", at: start)
                    bad = true
                }
            }
            return bad ? nil : .lines(lines)
        }
    }

    /// The coordinates of a Polygon or MultiPolygon at `i`; nil after reporting problems.
    private func parseCoordinates(multi: Bool) throws -> [PolygonRings]? {
        let coordinatesOffset = i
        var bad = false
        var polygons: [PolygonRings] = []
        if !multi {
            if let polygon = try parsePolygon(&bad) { polygons.append(polygon) }
        } else {
            guard try expectArray("MultiPolygon coordinates must be an array of polygons") else { return nil }
            try parseArray { _ in
                if let polygon = try self.parsePolygon(&bad) { polygons.append(polygon) }
            }
            if polygons.isEmpty && !bad {
                report("MultiPolygon has no polygons", at: coordinatesOffset)
                bad = true
            }
        }
        return bad ? nil : polygons
    }

    private func expectArray(_ message: String) throws -> Bool {
        if peek() == UInt8(ascii: "[") { return true }
        let at = i
        try skipValue(depth: 5)
        report(message, at: at)
        return false
    }

    private func parsePolygon(_ bad: inout Bool) throws -> PolygonRings? {
        let start = i
        guard try expectArray("polygon coordinates must be an array of rings") else { bad = true; return nil }
        var rings: [[Coordinate]] = []
        var ringOffsets: [Int] = []
        var failed = false
        try parseArray { _ in
            let offset = self.i
            if let ring = try self.parseRing() {
                rings.append(ring)
                ringOffsets.append(offset)
            } else {
                failed = true
            }
        }
        if failed { bad = true; return nil }
        guard let shell = rings.first else {
            report("polygon has no rings", at: start)
            bad = true
            return nil
        }
        let polygon = PolygonRings(shell: shell, holes: Array(rings.dropFirst()))
        if checkPolygons {
            // A ring without area is unusable; crossings and misplaced holes are defects the
            // even-odd rule reads through (errors only in strict mode).
            // Judged as the index reads it: across the antimeridian, unwrapped.
            let checked = PolygonValidity.unwrapped(polygon)
            let surveys = ([checked.shell] + checked.holes).map(PolygonValidity.survey(ofRing:))
            for problem in PolygonValidity.problems(of: checked, surveys: surveys) {
                switch problem {
                case .shell(let ringProblem):
                    if !reportRing(ringProblem, ringOffset: ringOffsets[0], what: "polygon") { bad = true }
                case .hole(let h, let ringProblem):
                    if !reportRing(ringProblem, ringOffset: ringOffsets[h + 1], what: "hole \(h + 1)") { bad = true }
                case .holeOutsideShell(let h):
                    if !defect("hole \(h + 1) is not inside the polygon's outer ring (or crosses it)", at: ringOffsets[h + 1]) { bad = true }
                case .holesOverlap(let a, let b):
                    if !defect("holes \(a + 1) and \(b + 1) overlap (their common part counts as inside)", at: ringOffsets[b + 1]) { bad = true }
                }
            }
            for (r, survey) in surveys.enumerated() { noteCosmetics(survey, isShell: r == 0, offset: ringOffsets[r]) }
        }
        return bad ? nil : polygon
    }

    /// Reports a ring problem; true when the ring stays usable (a defect read by even-odd).
    private func reportRing(_ problem: PolygonValidity.RingProblem, ringOffset: Int, what: String) -> Bool {
        switch problem {
        case .invalidCoordinate(let index):
            report("\(what): position \(index + 1) is out of range", at: positionOffset(ringOffset, index))
            return false
        case .tooFewDistinctPoints(let count):
            report("\(what) needs at least 3 distinct positions (got \(count))", at: ringOffset)
            return false
        case .zeroArea:
            report("\(what) has zero area (all positions on one line)", at: ringOffset)
            return false
        case .selfIntersection(let a, let b):
            return defect("\(what) edges cross or touch: positions \(a.from + 1)–\(a.to + 1) and \(b.from + 1)–\(b.to + 1)", at: positionOffset(ringOffset, b.from))
        }
    }

    /// Counts what RFC 7946 asks of a ring but no answer depends on: the winding (outer rings
    /// counterclockwise, holes clockwise) and repeated consecutive positions.
    private func noteCosmetics(_ survey: PolygonValidity.RingSurvey, isShell: Bool, offset: Int) {
        let twiceArea = survey.twiceSignedArea
        if twiceArea != 0, (twiceArea > 0) != isShell {
            windingCount += 1
            // The position now, while the reader is there (no walk back through the file later).
            if windingFirst == nil { windingFirst = (location(offset), featureIndex) }
        }
        if survey.repeatsPosition {
            duplicateCount += 1
            if duplicateFirst == nil { duplicateFirst = (location(offset), featureIndex) }
        }
    }

    /// The file's cosmetic defects, one warning each (errors in strict mode).
    private func reportCosmetics() {
        if let first = windingFirst {
            let which = windingCount == 1 ? "a ring in features[\(first.feature)] is" : "\(windingCount) rings are (the first in features[\(first.feature)])"
            _ = fileDefect("\(which) wound against RFC 7946 (outer rings counterclockwise, holes clockwise); the even-odd rule does not depend on the winding", at: first.location)
        }
        if let first = duplicateFirst {
            let which = duplicateCount == 1 ? "a ring in features[\(first.feature)] repeats" : "\(duplicateCount) rings (the first in features[\(first.feature)]) repeat"
            _ = fileDefect("\(which) a position twice in a row; the repeats are ignored", at: first.location)
        }
    }

    private func fileDefect(_ message: String, at location: SourceLocation) -> Bool {
        if options.strict {
            diagnostics.append(.error(message + " (an error in strict mode)", at: location))
            return false
        }
        var warning = Diagnostic.warning(message, at: location)
        warning.topic = .ringDefect
        diagnostics.append(warning)
        return true
    }

    /// Byte offset of the `index`-th position of the ring starting at `ringOffset`.
    private func positionOffset(_ ringOffset: Int, _ index: Int) -> Int {
        let saved = i
        defer { i = saved }
        i = ringOffset
        var result = ringOffset
        do {
            try parseArray { k in
                if k == index { result = self.i }
                try self.skipValue(depth: 8)
            }
        } catch {}
        return result
    }

    /// Problems of positions: out-of-range coordinates are collected (one message per
    /// feature), the others reported at once.
    private func routeProblems(_ problems: [JSONCursor.Problem]) {
        for problem in problems {
            switch problem.kind {
            case .latitudeRange, .longitudeRange:
                if rangeProblems.first == nil { rangeProblems.first = problem }
                rangeProblems.count += 1
                if problem.kind == .latitudeRange { rangeProblems.latitude = true }
            case .other:
                report(problem.message, at: problem.offset)
            }
        }
    }

    /// One linear ring, coordinates in range. RFC 7946 wants it closed with ≥ 4 positions; an
    /// unclosed ring is a defect (closed here), and the distinct positions are checked later.
    private func parseRing() throws -> [Coordinate]? {
        let start = i
        guard try expectArray("a polygon ring must be an array of positions") else { return nil }
        var cursor = JSONCursor(p, at: i)
        var problems: [JSONCursor.Problem] = []
        let (points, lastOffset) = try cursor.ring(&problems, scratch: &scratch)
        i = cursor.j
        routeProblems(problems)
        guard var ring = points else { return nil }
        if let first = ring.first, first != ring.last {
            guard defect("polygon ring is not closed: its last position differs from its first (closed here)", at: lastOffset) else { return nil }
            ring.append(first)
        }
        // Structure, checked even for trusted files: three positions and the closing one.
        guard ring.count >= 4 else {
            report("a polygon ring needs at least 4 positions, the last repeating the first (got \(points?.count ?? 0))", at: start)
            return nil
        }
        return ring
    }
}
