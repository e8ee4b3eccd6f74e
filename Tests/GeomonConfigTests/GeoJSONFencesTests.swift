import Foundation
import GeomonConfig
import GeomonCore
import GeomonTestSupport
import Testing

struct GeoJSONFencesTests {
    func parse(_ text: String, idProperty: String? = nil) -> (fences: [Fence], diagnostics: [String]) {
        let result = GeoJSONFences.parse(Array(text.utf8), file: "f.geojson", idProperty: idProperty)
        return (result.fences, result.diagnostics.map(\.description))
    }

    static let square = "[[[6.0, 46.0], [6.1, 46.0], [6.1, 46.1], [6.0, 46.1], [6.0, 46.0]]]"
    static let square2 = "[[[7.0, 46.0], [7.1, 46.0], [7.1, 46.1], [7.0, 46.1], [7.0, 46.0]]]"

    @Test func readsPolygonsAndMultiPolygonsInAnyMemberOrder() throws {
        let text = """
        {"features": [
          {"geometry": {"coordinates": \(Self.square), "type": "Polygon"}, "id": 7, "type": "Feature",
           "properties": {"name": "Caf\\u00e9 \\"Zur Post\\"", "other": {"deep": [1, {"x": null}], "t": true}}},
          {"type": "Feature", "id": "m", "bbox": [6, 46, 7, 47],
           "geometry": {"type": "MultiPolygon", "coordinates": [\(Self.square), [[[7.0, 47.0], [7.1, 47.0], [7.1, 47.1], [7.0, 47.0]]]]}}
        ], "type": "FeatureCollection"}
        """
        let (fences, diagnostics) = parse(text)
        #expect(diagnostics == [])
        #expect(fences.map(\.id) == ["7", "m"])
        #expect(fences[0].name == "Café \"Zur Post\"")
        #expect(fences[0].location == SourceLocation(file: "f.geojson", line: 2, column: 3))
        guard case .polygons(let first) = fences[0].shape, case .polygons(let second) = fences[1].shape else {
            Issue.record("not polygons")
            return
        }
        #expect(first[0].shell[1] == Coordinate(latitude: 46.0, longitude: 6.1))
        #expect(second.count == 2)
        #expect(second[1].shell.count == 4)
    }

    @Test func idPropertyWinsOverFeatureID() {
        let text = #"{"type": "FeatureCollection", "features": [{"type": "Feature", "id": 1, "properties": {"ref": "park-9"}, "geometry": {"type": "Polygon", "coordinates": \#(Self.square)}}]}"#
        #expect(parse(text, idProperty: "ref").fences.map(\.id) == ["park-9"])
        #expect(parse(text).fences.map(\.id) == ["1"])
    }

    @Test func numbersAreParsedExactly() throws {
        // Random decimals in GeoJSON style must equal Swift's own (correctly rounded) parse.
        let seed = UInt64.random(in: 0...UInt64.max)
        print("seed \(seed)")
        var generator = SplitMix64(seed: seed)
        var texts: [String] = []
        for _ in 0..<2000 {
            let lon = Double.random(in: -180...180, using: &generator)
            let lat = Double.random(in: -90...90, using: &generator)
            texts.append("[\(lon), \(lat)]")
        }
        texts.append("[1e-7, -2.5E+1]")
        texts.append("[179.99999999999999999, 0.1234567890123456789]")
        texts.append("[-0.0, 12]")
        let ring = texts + [texts[0]]
        let text = #"{"type": "FeatureCollection", "features": [{"type": "Feature", "id": "r", "geometry": {"type": "Polygon", "coordinates": [[\#(ring.joined(separator: ","))]]}}]}"#
        let result = GeoJSONFences.parse(Array(text.utf8), file: "f", checkPolygons: false)
        #expect(result.diagnostics.isEmpty)
        guard case .polygons(let polygons) = try #require(result.fences.first).shape else {
            Issue.record("not a polygon: \(String(describing: result.fences.first?.shape))")
            return
        }
        for (k, position) in texts.enumerated() {
            let parts = position.dropFirst().dropLast().split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
            #expect(polygons[0].shell[k].longitude == parts[0])
            #expect(polygons[0].shell[k].latitude == parts[1])
        }
    }

    @Test func problemsArePositionedInsideTheFile() {
        let text = """
        {"type": "FeatureCollection", "features": [
          {"type": "Feature", "id": "a", "geometry": {"type": "Polygon", "coordinates": [[[6.0, 46.0], [6.1, 95.0], [6.1, 46.1], [6.0, 46.0]]]}},
          {"type": "Feature", "id": "a", "geometry": {"type": "Polygon", "coordinates": \(Self.square)}},
          {"type": "Feature", "geometry": {"type": "LineString", "coordinates": [[6.0, 46.0], [6.1, 46.0]]}}
        ]}
        """
        #expect(parse(text).diagnostics == [
            "f.geojson:2:102: error: features[0] (id 'a'): latitude 95 is out of range [-90, 90]; GeoJSON positions are [longitude, latitude]: are these written [latitude, longitude]?",
            "f.geojson:3:3: error: features[1] (id 'a'): duplicate feature id 'a' (first: features[0] at line 2, column 3)",
            "f.geojson:4:35: error: features[2]: a line is a fence only with a corridor width: set 'width' on the fence entry, or 'width_property' to read it from each feature",
            "f.geojson:4:3: error: features[2] has no 'id'; give each feature an 'id', or name the property that identifies it with 'id_property: PROPERTY'",
        ])
    }

    @Test func aFeatureWrittenLatLonGetsOneErrorAndTheFileOneHint() {
        // Positions [lat, lon] east of 90°E: every latitude is out of range.
        func feature(_ id: Int) -> String {
            #"{"type": "Feature", "id": \#(id), "properties": {"name": "Park \#(id)"}, "geometry": {"type": "Polygon", "coordinates": [[[35.1, 139.1], [35.1, 139.2], [35.2, 139.2], [35.1, 139.1]]]}}"#
        }
        let text = #"{"type": "FeatureCollection", "features": ["# + (1...3).map(feature).joined(separator: ",\n") + "]}"
        let diagnostics = parse(text).diagnostics
        #expect(diagnostics.count == 3)
        #expect(diagnostics[0].hasSuffix("error: features[0] (id '1', name 'Park 1'): latitude 139.1 is out of range [-90, 90] (and 3 more positions out of range in this feature); GeoJSON positions are [longitude, latitude]: are these written [latitude, longitude]?"))
        #expect(diagnostics[1].hasSuffix("error: features[1] (id '2', name 'Park 2'): latitude 139.1 is out of range [-90, 90] (and 3 more positions out of range in this feature)"))
        #expect(diagnostics.filter { $0.contains("[latitude, longitude]") }.count == 1)
    }

    @Test func aMissingIDPropertySuggestsOneTheFeatureHas() {
        let text = #"{"type": "FeatureCollection", "features": [{"type": "Feature", "properties": {"name": "Lake", "kind": "water"}, "geometry": {"type": "Polygon", "coordinates": \#(Self.square)}}]}"#
        let result = GeoJSONFences.read(Array(text.utf8), file: "f.geojson", idProperty: "nme")
        #expect(result.featuresWithIDProperty == 0 && result.propertyNames == ["name", "kind"])
        #expect(result.diagnostics.map(\.description) == ["f.geojson:1:44: error: features[0] (name 'Lake') has no id (no 'id' member and no 'nme' property); its properties 'name', 'kind'; did you mean 'id_property: name'?"])
    }

    /// City districts without ids (as open-data portals publish them): one error for the
    /// file, with the properties every feature has and the one to name.
    @Test func featuresWithoutIDsGetOneErrorForTheFile() {
        func feature(_ k: Int) -> String {
            #"{"type": "Feature", "properties": {"NAZEV": "Praha \#(k)", "KOD": \#(500_000 + k)}, "geometry": {"type": "Polygon", "coordinates": \#(Self.square)}}"#
        }
        let text = #"{"type": "FeatureCollection", "features": ["# + (1...57).map(feature).joined(separator: ",\n") + "]}"
        let result = GeoJSONFences.read(Array(text.utf8), file: "f.geojson", options: .init())
        #expect(result.diagnostics.map(\.description) == [
            "f.geojson:1:44: error: 57 features (the first: features[0]) have no 'id'; all have the properties 'NAZEV', 'KOD'; name the property that identifies each feature, e.g. 'id_property: NAZEV'",
        ])
        var cli = GeoJSONFences.Options()
        cli.idPropertySpelling = { "--id-property \($0)" }
        let query = GeoJSONFences.read(Array(text.utf8), file: "f.geojson", options: cli)
        #expect(query.diagnostics.first?.description.hasSuffix("e.g. '--id-property NAZEV'") == true)
    }

    /// The name comes from `name` (or `name_property`) whatever the id comes from, and ids
    /// keep their inner spaces.
    @Test func namesComeFromTheNamePropertyWhateverTheIDComesFrom() throws {
        let text = #"{"type": "FeatureCollection", "features": [{"type": "Feature", "properties": {"name": "Praha 17", "NAZEV": "Řepy"}, "geometry": {"type": "Polygon", "coordinates": \#(Self.square)}}]}"#
        let byName = GeoJSONFences.read(Array(text.utf8), file: "f.geojson", idProperty: "name")
        #expect(byName.diagnostics.isEmpty)
        #expect(byName.fences.map(\.id) == ["Praha 17"] && byName.fences.map(\.name) == ["Praha 17"])
        var options = GeoJSONFences.Options(idProperty: "name")
        options.nameProperty = "NAZEV"
        let named = GeoJSONFences.read(Array(text.utf8), file: "f.geojson", options: options)
        #expect(named.fences.map(\.id) == ["Praha 17"] && named.fences.map(\.name) == ["Řepy"])
    }

    @Test func idsFollowTheProfilesRule() {
        let text = #"{"type": "FeatureCollection", "features": [{"type": "Feature", "id": " padded", "geometry": {"type": "Polygon", "coordinates": \#(Self.square)}}, {"type": "Feature", "id": "ok id", "geometry": {"type": "Polygon", "coordinates": \#(Self.square2)}}]}"#
        let result = GeoJSONFences.read(Array(text.utf8), file: "f.geojson", options: .init())
        #expect(result.fences.map(\.id) == ["ok id"])
        #expect(result.diagnostics.map(\.description) == ["f.geojson:1:44: error: features[0] (id ' padded'): the id must not begin or end with a space (got ' padded')"])
    }

    @Test func syntaxErrorsStopTheReadWithAPosition() {
        #expect(parse("{\"type\": \"FeatureCollection\", \"features\": [}").diagnostics == ["f.geojson:1:44: error: invalid JSON: unexpected character '}'"])
        #expect(parse("").diagnostics == ["f.geojson:1:1: error: GeoJSON file is empty"])
        #expect(parse("{\"a\": \"unterminated").diagnostics == ["f.geojson:1:7: error: invalid JSON: unterminated string"])
        let deep = "{\"type\": \"FeatureCollection\", \"x\": " + String(repeating: "[", count: 100_000) + "}"
        #expect(parse(deep).diagnostics.first?.contains("nesting is deeper than 512 levels") == true)
    }

    @Test func selfIntersectionIsReportedAtTheOffendingPosition() {
        let text = """
        {"type": "FeatureCollection", "features": [{"type": "Feature", "id": "x", "geometry": {"type": "Polygon", "coordinates": [[
          [6.0, 46.0],
          [6.1, 46.1],
          [6.1, 46.0],
          [6.0, 46.1],
          [6.0, 46.0]
        ]]}}]}
        """
        // A defect the even-odd rule reads through: a warning, and the fence is used.
        let result = parse(text)
        #expect(result.diagnostics == ["f.geojson:4:3: warning: features[0] (id 'x'): polygon edges cross or touch: positions 1–2 and 3–4; used by the even-odd rule"])
        #expect(result.fences.map(\.id) == ["x"])
        let strict = GeoJSONFences.read(Array(text.utf8), file: "f.geojson", options: .init(strict: true))
        #expect(strict.diagnostics.map(\.description) == ["f.geojson:4:3: error: features[0] (id 'x'): polygon edges cross or touch: positions 1–2 and 3–4 (an error in strict mode)"])
        #expect(strict.fences.isEmpty)
    }

    @Test func missingFileIsADiagnosticWithoutPosition() {
        let result = GeoJSONFences.load(path: "/nonexistent/x.geojson")
        #expect(result.fences.isEmpty)
        #expect(result.diagnostics.map(\.description) == ["error: cannot read GeoJSON file '/nonexistent/x.geojson': No such file or directory"])
    }

    @Test func bigFileLoads() throws {
        // 5,000 64-gons written to disk and read back through the public API.
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        var text = "{\"type\": \"FeatureCollection\", \"features\": [\n"
        for k in 0..<5_000 {
            let lat = 45.0 + Double(k / 200) * 0.01, lon = 6.0 + Double(k % 200) * 0.01
            var ring: [String] = []
            for v in 0..<64 {
                let angle = Double(v) * 2 * Double.pi / 64
                ring.append("[\(lon + 0.003 * cos(angle)), \(lat + 0.003 * sin(angle))]")
            }
            ring.append(ring[0])
            text += "{\"type\":\"Feature\",\"id\":\"f\(k)\",\"geometry\":{\"type\":\"Polygon\",\"coordinates\":[[\(ring.joined(separator: ","))]]}}\(k < 4_999 ? "," : "")\n"
        }
        text += "]}\n"
        let path = try dir.write("big.geojson", text)
        let result = GeoJSONFences.load(path: path)
        #expect(result.diagnostics.isEmpty)
        #expect(result.fences.count == 5_000)
        #expect(result.fences.last?.location?.line == 5_001)
    }
}
