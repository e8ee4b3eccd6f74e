import Foundation
import GeomonCore
import Testing

/// Real boundaries (Natural Earth) against answers computed by shapely
/// (`scripts/make_geometry_fixtures.py`).
struct NaturalEarthTests {
    struct Case {
        var fence: String
        var point: Coordinate
        var inside: Bool
        var distanceMeters: Double
    }

    static let data: (ids: [String], shapes: [FenceShape], cases: [Case]) = {
        guard let root = GeometryFixtures.json("geometry/natural-earth/polygons.geojson") as? [String: Any],
              let features = root["features"] as? [[String: Any]],
              let expected = GeometryFixtures.json("geometry/natural-earth/expected.json") as? [String: Any],
              let cases = expected["cases"] as? [[String: Any]] else { return ([], [], []) }
        var ids: [String] = [], shapes: [FenceShape] = []
        for feature in features {
            guard let id = feature["id"] as? String, let shape = GeometryFixtures.shape(feature["geometry"]) else { continue }
            ids.append(id)
            shapes.append(shape)
        }
        let parsed = cases.compactMap { c -> Case? in
            guard let fence = c["fence"] as? String, let lat = c["lat"] as? Double, let lon = c["lon"] as? Double,
                  let inside = c["inside"] as? Bool, let d = c["distance_m"] as? Double else { return nil }
            return Case(fence: fence, point: Coordinate(latitude: lat, longitude: lon), inside: inside, distanceMeters: d)
        }
        return (ids, shapes, parsed)
    }()

    @Test func fixturesLoaded() {
        #expect(Self.data.shapes.count == 9)
        #expect(Self.data.cases.count > 1400)
    }

    @Test func containmentAgreesWithShapelyBeyondOneMetre() throws {
        let index = FenceIndex(shapes: Self.data.shapes)
        var checked = 0
        for c in Self.data.cases where abs(c.distanceMeters) > 1 {
            let f = try #require(Self.data.ids.firstIndex(of: c.fence))
            #expect(index.containing(c.point).contains(f) == c.inside, "\(c.fence) \(c.point) shapely \(c.distanceMeters)")
            checked += 1
        }
        #expect(checked > 1400)
    }

    @Test func signedDistancesAgreeWithShapely() throws {
        let index = FenceIndex(shapes: Self.data.shapes)
        var checked = 0
        // Shapely measures in one flat frame at the point, which drifts by ~1 % at a few
        // hundred km (geomon refines far distances on the ellipsoid): compare up to 100 km,
        // the range the accuracy bound is for.
        for c in Self.data.cases where abs(c.distanceMeters) <= 100_000 {
            checked += 1
            let f = try #require(Self.data.ids.firstIndex(of: c.fence))
            let d = index.signedDistance(fence: f, to: c.point)
            #expect(abs(d - c.distanceMeters) <= max(1, abs(c.distanceMeters) * 0.005), "\(c.fence) \(c.point) shapely \(c.distanceMeters) got \(d)")
        }
        #expect(checked > 1000)
    }

    @Test func queryCombinesAllFencesConsistently() {
        let index = FenceIndex(shapes: Self.data.shapes)
        for c in Self.data.cases.prefix(300) {
            let result = index.query(c.point)
            #expect(result.containing == index.containing(c.point))
            let all = (0..<index.count).map { abs(index.signedDistance(fence: $0, to: c.point)) }
            if let nearest = result.nearest, let best = all.min() {
                #expect(abs(abs(nearest.signedDistanceMeters) - best) <= max(0.01, best * 1e-3))
            }
        }
    }
}
