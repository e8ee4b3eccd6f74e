import Foundation
import GeomonConfig
import GeomonCore
import GeomonTestSupport
import Testing

/// Fences as users download them: defective GeoJSON rings (used by the even-odd rule, with
/// warnings), corridors and zones.
struct RealWorldFencesTests {
    static let wellington = TestSupport.fixture("geometry/defective/wellington-defective.geojson")
    static let expected = TestSupport.fixture("geometry/defective/wellington-defective.expected.json")

    static func profile(in dir: TemporaryDirectory, entry: String) throws -> String {
        try FileManager.default.copyItem(at: wellington, to: dir.url.appendingPathComponent("suburbs.geojson"))
        return try dir.write("p.yaml", "version: 1\nname: wellington\nmode: regions\nsources: {gnss: {}}\nfences:\n  - \(entry)\n")
    }

    /// The 9 Wellington suburbs (6 with crossing or touching edges, per shapely): warned about
    /// at their lines, used, and answered as shapely's `make_valid` answers.
    @Test func defectiveSuburbsLoadWithWarningsAndMatchMakeValid() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let result = try ProfileLoader.load(path: try Self.profile(in: dir, entry: "{geojson: suburbs.geojson, id_property: name}"))
        #expect(!result.hasErrors, "\(result.diagnostics)")
        let defects = result.diagnostics.filter { $0.topic == .ringDefect && $0.message.contains("edges cross or touch") }
        #expect(defects.map { $0.location?.line ?? 0 } == [2, 3, 5, 6, 7, 8])
        #expect(defects.allSatisfy { $0.severity == .warning && $0.message.hasSuffix("; used by the even-odd rule") })
        #expect(result.repairedFences == ["Ohariu", "Ngaio", "Miramar", "Lyall Bay", "Rongotai", "Khandallah"])
        let profile = try #require(result.profile)
        #expect(profile.fences.count == 9)

        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: Self.expected)) as? [String: Any])
        let points = try #require(root["points"] as? [[String: Any]])
        #expect(points.count == 360)
        // GeoJSON fences live in the profile's index only.
        #expect(profile.fences.allSatisfy { $0.shape == nil })
        let index = profile.makeIndex()
        let number = Dictionary(uniqueKeysWithValues: profile.fences.enumerated().map { ($0.element.id, $0.offset) })
        var insideCount = 0
        for point in points {
            let id = try #require(point["id"] as? String), inside = try #require(point["inside"] as? Bool)
            let p = Coordinate(latitude: try #require(point["lat"] as? Double), longitude: try #require(point["lon"] as? Double))
            let f = try #require(number[id])
            #expect(index.containing(p).contains(f) == inside, "\(id) \(p)")
            // The distance is to the nearest edge as given: at least the 3 m the points keep.
            let d = index.signedDistance(fence: f, to: p)
            #expect((d < 0) == inside && abs(d) >= 2.9, "\(id) \(p): \(d) m")
            if inside { insideCount += 1 }
        }
        #expect(insideCount > 50)
    }

    @Test func strictMakesRingDefectsErrors() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = try Self.profile(in: dir, entry: "{geojson: suburbs.geojson, id_property: name}")
        let strict = try ProfileLoader.load(path: path, strict: true)
        #expect(strict.profile == nil)
        #expect(strict.diagnostics.filter { $0.severity == .error }.count == 8)
        #expect(strict.diagnostics.allSatisfy { $0.message.hasSuffix("(an error in strict mode)") })
        let strictDir = try TemporaryDirectory()
        defer { strictDir.remove() }
        let entry = try Self.profile(in: strictDir, entry: "{geojson: suburbs.geojson, id_property: name, strict: true}")
        #expect(try ProfileLoader.load(path: entry).hasErrors)
    }

    @Test func corridorsAndZonesComeFromLinesPointsAndInlineEntries() throws {
        let dir = TestSupport.fixture("profiles/warnings")
        let result = try ProfileLoader.load(path: dir.appendingPathComponent("lint-corridors-and-zones.yaml").path)
        let profile = try #require(result.profile)
        var shapes: [String: FenceShape] = [:]
        for (k, fence) in profile.fences.enumerated() { shapes[fence.id] = profile.shape(of: k) }
        guard case let .corridor(canal, canalWidth)? = shapes["canal"],
              case let .corridor(route, routeWidth)? = shapes["route"],
              case let .corridor(trails, trailsWidth)? = shapes["trails"],
              case let .corridor(_, wideWidth)? = shapes["wide"],
              case let .circle(home, homeRadius)? = shapes["home"],
              case let .circle(_, workRadius)? = shapes["work"] else {
            Issue.record("unexpected shapes: \(shapes)")
            return
        }
        #expect(canal.count == 1 && canal[0].count == 3 && canalWidth == 80)
        #expect(route[0].count == 3 && routeWidth == 60)
        #expect(trails.count == 2 && trailsWidth == 40)
        #expect(wideWidth == 200)
        #expect(home == Coordinate(latitude: 46.3, longitude: 6.3) && homeRadius == 100)
        #expect(workRadius == 30)
        #expect(profile.fences.indices.map { profile.shape(of: $0).kind } == ["corridor", "corridor", "corridor", "corridor", "circle", "circle"])
    }
}
