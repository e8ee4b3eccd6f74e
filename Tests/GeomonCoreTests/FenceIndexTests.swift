import Foundation
import GeomonCore
import Testing

struct FenceIndexTests {
    // MARK: Turf point-in-polygon cases

    struct TurfCase: Sendable, CustomStringConvertible {
        var polygon: String
        var lon: Double, lat: Double
        var expected: String
        var description: String { "\(polygon) (\(lon), \(lat)) → \(expected)" }
    }

    static let turf: (shapes: [String: FenceShape], cases: [TurfCase]) = {
        guard let root = GeometryFixtures.json("geometry/turf/turf_boolean_point_in_polygon_cases.json") as? [String: Any],
              let polygons = root["polygons"] as? [String: Any], let cases = root["cases"] as? [[String: Any]] else { return ([:], []) }
        var shapes: [String: FenceShape] = [:]
        for (name, g) in polygons {
            if let file = g as? String, file.hasPrefix("FILE:") {
                let base = file.split(separator: "/").last.map(String.init) ?? ""
                let feature = GeometryFixtures.json("geometry/turf/\(base)") as? [String: Any]
                shapes[name] = GeometryFixtures.shape(feature?["geometry"] ?? feature)
            } else {
                shapes[name] = GeometryFixtures.shape(g)
            }
        }
        let parsed = cases.compactMap { c -> TurfCase? in
            guard let name = c["polygon"] as? String, let point = c["point"] as? [Double] else { return nil }
            let expected: String = (c["expected"] as? String) ?? ((c["expected"] as? Bool) == true ? "true" : "false")
            return TurfCase(polygon: name, lon: point[0], lat: point[1], expected: expected)
        }
        return (shapes, parsed)
    }()

    @Test func turfFixtureLoaded() {
        #expect(Self.turf.cases.count == 50)
        #expect(Self.turf.shapes.count == 11)
    }

    @Test(arguments: turf.cases)
    func turfPointInPolygon(_ c: TurfCase) throws {
        let shape = try #require(Self.turf.shapes[c.polygon])
        let index = FenceIndex(shapes: [shape])
        let p = Coordinate(latitude: c.lat, longitude: c.lon)
        let inside = index.containing(p) == [0]
        // Boundary counts as inside.
        #expect(inside == (c.expected != "false"), "\(c)")
        let d = index.signedDistance(fence: 0, to: p)
        if c.expected == "BOUNDARY" { #expect(abs(d) < 1e-6) }
        else { #expect((d <= 0) == inside) }
        #expect(index.query(p).containing == index.containing(p))
    }

    // MARK: Turf point-to-polygon distance

    @Test(arguments: ["simple-polygon", "multi-polygon", "issue_2824", "long-lines-poly"])
    func turfSignedDistances(_ name: String) throws {
        let root = try #require(GeometryFixtures.json("geometry/turf/\(name).geojson") as? [String: Any])
        let features = try #require(root["features"] as? [[String: Any]])
        let shape = try #require(features.compactMap { GeometryFixtures.shape($0["geometry"]) }.first)
        let index = FenceIndex(shapes: [shape])
        var checked = 0
        for feature in features {
            guard let g = feature["geometry"] as? [String: Any], g["type"] as? String == "Point",
                  let c = g["coordinates"] as? [Double], let props = feature["properties"] as? [String: Any],
                  let expected = props["expected_distance"] as? Double, let units = props["units"] as? String else { continue }
            let scale = ["meters": 1.0, "kilometers": 1000, "miles": 1609.344][units] ?? .nan
            let expectedMeters = expected * scale
            let got = index.signedDistance(fence: 0, to: Coordinate(latitude: c[1], longitude: c[0]))
            // Turf measures on a sphere (haversine); allow 0.5 % or 0.5 m. The 'long-lines'
            // fixture's edges are hundreds of km long: great circles in Turf, straight in
            // lon/lat for us, so only the sign is compared there.
            if name != "long-lines-poly" {
                #expect(abs(got - expectedMeters) <= max(0.5, abs(expectedMeters) * 0.005), "\(name): \(c) expected \(expectedMeters) got \(got)")
            }
            #expect((got < 0) == (expectedMeters < 0))
            checked += 1
        }
        #expect(checked >= 2)
    }

    // MARK: Properties against brute force

    /// Seeds 6 and 7 at high latitudes, where the metre per degree of longitude changes
    /// fastest across a fence (the search's bounds allow for it).
    @Test(arguments: [UInt64(1), 2, 3, 6, 7])
    func queryAgreesWithBruteForce(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        let latitude = seed < 6 ? Double.random(in: -60...60, using: &rng) : (seed == 6 ? 1 : -1) * Double.random(in: 70...78, using: &rng)
        let center = Coordinate(latitude: latitude, longitude: Double.random(in: -170...170, using: &rng))
        let shapes = RandomFences.make(count: 300, around: center, spreadMeters: 20_000, rng: &rng)
        let index = FenceIndex(shapes: shapes)
        for _ in 0..<400 {
            let p = Geodesy.localDestination(from: center, bearingDegrees: Double.random(in: 0..<360, using: &rng),
                                             distanceMeters: Double.random(in: 0...25_000, using: &rng))
            let reference = shapes.map { BruteForce.signedDistance($0, p) }
            let result = index.query(p, within: .infinity)
            let expectedInside = reference.indices.filter { reference[$0] <= 0 }
            let ambiguous = reference.indices.filter { abs(reference[$0]) < 0.01 }
            #expect(Set(result.containing).symmetricDifference(expectedInside).isSubset(of: ambiguous), "\(p)")
            #expect(result.containing == result.containing.sorted())
            let best = reference.map(abs).min() ?? .infinity
            let nearest = result.nearest
            #expect(nearest != nil)
            if let nearest {
                #expect(abs(abs(nearest.signedDistanceMeters) - best) <= max(0.01, best * 1e-3), "\(p): \(nearest) vs \(best)")
                #expect(abs(nearest.signedDistanceMeters - reference[nearest.fence]) <= max(0.01, best * 1e-3))
                #expect(result.clearanceMeters == abs(nearest.signedDistanceMeters))
            }
            #expect(index.containing(p) == result.containing)
            // near(): every fence within 500 m, ascending.
            let near = index.near(p, within: 500)
            let expectedNear = reference.indices.filter { abs(reference[$0]) <= 500 }
            let nearIDs = near.map(\.fence)
            #expect(nearIDs == nearIDs.sorted())
            let borderline = reference.indices.filter { abs(abs(reference[$0]) - 500) < 1 }
            #expect(Set(nearIDs).symmetricDifference(expectedNear).isSubset(of: borderline))
            // A bounded search finds the same nearest when it is within the radius.
            let bounded = index.nearestBoundary(to: p, within: 300)
            if best < 299 { #expect(bounded?.fence == nearest?.fence) }
            if best > 301 { #expect(bounded == nil) }
        }
    }

    /// Corridors among circles and polygons: inside within half the width of a line, the
    /// boundary distance to that offset; the long ones take the strip index.
    @Test(arguments: [UInt64(11), 12, 13])
    func corridorsAgreeWithBruteForce(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        let latitude = seed == 13 ? 72.0 : Double.random(in: -60...60, using: &rng)
        let center = Coordinate(latitude: latitude, longitude: Double.random(in: -170...170, using: &rng))
        let shapes = RandomFences.make(count: 100, around: center, spreadMeters: 15_000, rng: &rng)
            + RandomFences.corridors(count: 60, around: center, spreadMeters: 15_000, rng: &rng)
        let index = FenceIndex(shapes: shapes)
        var points: [Coordinate] = []
        var insideCorridor = 0
        for _ in 0..<500 {
            let p = Geodesy.localDestination(from: center, bearingDegrees: Double.random(in: 0..<360, using: &rng),
                                             distanceMeters: Double.random(in: 0...20_000, using: &rng))
            points.append(p)
            let reference = shapes.map { BruteForce.signedDistance($0, p) }
            let result = index.query(p, within: .infinity)
            let expectedInside = reference.indices.filter { reference[$0] <= 0 }
            let ambiguous = reference.indices.filter { abs(reference[$0]) < 0.05 }
            #expect(Set(result.containing).symmetricDifference(expectedInside).isSubset(of: ambiguous), "\(p)")
            insideCorridor += expectedInside.filter { $0 >= 100 }.count
            let best = reference.map(abs).min() ?? .infinity
            if let nearest = result.nearest {
                #expect(abs(abs(nearest.signedDistanceMeters) - best) <= max(0.05, best * 1e-3), "\(p): \(nearest) vs \(best)")
            } else {
                Issue.record("no nearest boundary at \(p)")
            }
            for f in 100..<shapes.count where abs(reference[f]) < 3000 {
                #expect(abs(index.signedDistance(fence: f, to: p) - reference[f]) <= max(0.05, abs(reference[f]) * 1e-3), "corridor \(f) at \(p)")
            }
            let probe = index.probe(p, within: .infinity, band: 200)
            #expect(probe.containing == result.containing)
            let expectedBand = reference.indices.filter { abs(reference[$0]) <= 200 }
            let borderline = reference.indices.filter { abs(abs(reference[$0]) - 200) < 0.1 }
            #expect(Set(probe.band.map(\.fence)).symmetricDifference(expectedBand).isSubset(of: borderline))
        }
        #expect(insideCorridor > 10)
        // The batch query answers every point as a single query does.
        let batch = index.query(points: points)
        for (k, p) in points.enumerated() { #expect(batch[k] == index.query(p)) }
    }

    /// An index built one fence at a time answers as one built from all the shapes, and gives
    /// each fence's geometry back (to the float offsets it stores).
    @Test(arguments: [UInt64(21), 22])
    func builtOneAtATimeItAnswersTheSameAndGivesTheShapesBack(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        let center = Coordinate(latitude: Double.random(in: -60...60, using: &rng), longitude: Double.random(in: -170...170, using: &rng))
        var shapes = RandomFences.make(count: 150, around: center, spreadMeters: 15_000, rng: &rng)
            + RandomFences.corridors(count: 30, around: center, spreadMeters: 15_000, rng: &rng)
        // Two members, one with a hole; and a box split at the antimeridian.
        let a = RandomFences.star(center, radius: 800, vertices: 40, rng: &rng)
        let b = RandomFences.star(Geodesy.localDestination(from: center, bearingDegrees: 90, distanceMeters: 5000), radius: 600, vertices: 30, rng: &rng)
        shapes.append(.polygons([PolygonRings(shell: a, holes: [RandomFences.star(center, radius: 200, vertices: 8, rng: &rng).reversed()]), PolygonRings(shell: b)]))
        shapes.append(.polygons([
            PolygonRings(shell: [Coordinate(latitude: -17, longitude: 179.9), Coordinate(latitude: -17, longitude: 180), Coordinate(latitude: -16.9, longitude: 180), Coordinate(latitude: -16.9, longitude: 179.9)]),
            PolygonRings(shell: [Coordinate(latitude: -17, longitude: -180), Coordinate(latitude: -17, longitude: -179.9), Coordinate(latitude: -16.9, longitude: -179.9), Coordinate(latitude: -16.9, longitude: -180)]),
        ]))
        let whole = FenceIndex(shapes: shapes)
        var builder = FenceIndex.Builder()
        for (k, shape) in shapes.enumerated() { #expect(builder.add(shape) == k) }
        let built = builder.build()
        #expect(built.count == shapes.count)
        for _ in 0..<300 {
            let p = Geodesy.localDestination(from: center, bearingDegrees: Double.random(in: 0..<360, using: &rng),
                                             distanceMeters: Double.random(in: 0...20_000, using: &rng))
            #expect(built.query(p) == whole.query(p), "\(p)")
        }
        for p in [Coordinate(latitude: -16.95, longitude: 180), Coordinate(latitude: -16.95, longitude: -179.95)] {
            #expect(built.query(p) == whole.query(p))
        }
        for (k, shape) in shapes.enumerated() {
            let back = built.shape(of: k)
            #expect(back.kind == shape.kind)
            switch (shape, back) {
            case let (.circle(c0, r0), .circle(c1, r1)):
                #expect(c0 == c1 && abs(r0 - r1) <= r0 * 1e-6)
            case let (.corridor(l0, w0), .corridor(l1, w1)):
                #expect(l0.map(\.count) == l1.map(\.count) && abs(w0 - w1) <= w0 * 1e-6)
                for (x, y) in zip(l0.joined(), l1.joined()) { #expect(Self.near(x, y)) }
            case let (.polygons(m0), .polygons(m1)):
                #expect(m0.count == m1.count && zip(m0, m1).allSatisfy { $0.holes.count == $1.holes.count })
                for (x, y) in zip(m0, m1) {
                    // Rings come back closed.
                    let rings0 = [x.shell] + x.holes, rings1 = [y.shell] + y.holes
                    for (r0, r1) in zip(rings0, rings1) {
                        #expect(r1.first == r1.last && r1.count == r0.count + (r0.first == r0.last ? 0 : 1), "fence \(k)")
                        for (u, v) in zip(r0, r1) { #expect(Self.near(u, v), "fence \(k): \(u) vs \(v)") }
                    }
                }
            default:
                Issue.record("fence \(k): \(shape.kind) came back as \(back.kind)")
            }
        }
        // A geometry that comes back indexes the same.
        let again = FenceIndex(shapes: shapes.indices.map(built.shape(of:)))
        let p = center
        #expect(again.query(p).containing == whole.query(p).containing)
    }

    static func near(_ a: Coordinate, _ b: Coordinate) -> Bool {
        abs(a.latitude - b.latitude) < 1e-6 && abs(Geodesy.longitudeDelta(a.longitude, b.longitude)) < 1e-6
    }

    /// The batch query (answered in spatial order) gives every point exactly the single
    /// query's result, including points outside the grid, across the antimeridian and invalid.
    @Test(arguments: [UInt64(4), 5])
    func batchQueryEqualsSingleQueries(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        let center = Coordinate(latitude: Double.random(in: -60...60, using: &rng), longitude: seed == 5 ? 179.5 : 10)
        let shapes = RandomFences.make(count: 400, around: center, spreadMeters: 30_000, rng: &rng)
        let index = FenceIndex(shapes: shapes)
        var points = (0..<3000).map { _ in
            Geodesy.localDestination(from: center, bearingDegrees: Double.random(in: 0..<360, using: &rng),
                                     distanceMeters: Double.random(in: 0...40_000, using: &rng))
        }
        points += [Coordinate(latitude: .nan, longitude: 1), Coordinate(latitude: 95, longitude: 0),
                   Coordinate(latitude: -80, longitude: -170), points[7], points[7]]
        let batch = index.query(points: points, within: .infinity)
        #expect(batch.count == points.count)
        var insideSomewhere = 0
        for (i, p) in points.enumerated() {
            let single = index.query(p, within: .infinity)
            #expect(batch[i] == single, "\(i): \(p)")
            if !single.containing.isEmpty { insideSomewhere += 1 }
        }
        #expect(insideSomewhere > 100)
        // Bounded radius and every point visited exactly once.
        var visits = [Int](repeating: 0, count: points.count)
        index.query(points: points, within: 200) { i, result in
            visits[i] += 1
            #expect(result == index.query(points[i], within: 200), "\(i)")
        }
        #expect(visits.allSatisfy { $0 == 1 })
        #expect(FenceIndex(shapes: []).query(points: points).allSatisfy { $0.nearest == nil && $0.containing.isEmpty })
        #expect(index.query(points: []).isEmpty)
    }

    /// With a hole: the strip edge index; without: the angular (star-shaped) index.
    @Test(arguments: [true, false])
    func bigPolygonUsesEdgeIndexAndMatchesBruteForce(withHole: Bool) {
        var rng = SeededGenerator(seed: 42)
        let c = Coordinate(latitude: 46.5, longitude: 7.5)
        let shell = RandomFences.star(c, radius: 30_000, vertices: 10_000, rng: &rng)
        let hole = RandomFences.star(c, radius: 5_000, vertices: 500, rng: &rng)
        let shape = FenceShape.polygons([PolygonRings(shell: withHole ? shell : shell.reversed(), holes: withHole ? [hole] : [])])
        let index = FenceIndex(shapes: [shape])
        for _ in 0..<300 {
            let p = Geodesy.localDestination(from: c, bearingDegrees: Double.random(in: 0..<360, using: &rng),
                                             distanceMeters: Double.random(in: 0...40_000, using: &rng))
            let reference = BruteForce.signedDistance(shape, p)
            let got = index.signedDistance(fence: 0, to: p)
            #expect(abs(got - reference) <= max(0.01, abs(reference) * 2e-3), "\(p)")
            if abs(reference) > 0.01 { #expect(index.containing(p) == (reference < 0 ? [0] : [])) }
        }
    }

    // MARK: Circles, holes, antimeridian

    @Test func circleContainmentAndDistance() {
        let c = Coordinate(latitude: 52.52, longitude: 13.405)
        let index = FenceIndex(shapes: [.circle(center: c, radiusMeters: 150)])
        let inside = Geodesy.destination(from: c, bearingDegrees: 70, distanceMeters: 149)
        let outside = Geodesy.destination(from: c, bearingDegrees: 70, distanceMeters: 151)
        #expect(index.containing(inside) == [0])
        #expect(index.containing(outside) == [])
        #expect(abs(index.signedDistance(fence: 0, to: c) + 150) < 0.01)
        #expect(abs(index.signedDistance(fence: 0, to: outside) - 1) < 0.01)
        let far = Geodesy.destination(from: c, bearingDegrees: 200, distanceMeters: 80_000)
        #expect(abs(index.signedDistance(fence: 0, to: far) - (80_000 - 150)) < 0.5)
    }

    /// A polygon with enough vertices for latitude strips, whose top latitude rounds to the
    /// end of the last strip: a point on its top edge or vertex is on the boundary, so inside,
    /// as everywhere else; one just above is outside.
    @Test func aPointOnTheTopEdgeOfAStripIndexedPolygonIsInside() {
        func c(_ lat: Double, _ lon: Double) -> Coordinate { Coordinate(latitude: lat, longitude: lon) }
        var ring = [c(10, 0), c(10, 4), c(13, 4), c(13, 0)]
        for k in 1...23 { ring.append(c(13 - Double(k) / 8, 0)) }
        let index = FenceIndex(shapes: [.polygons([PolygonRings(shell: ring)])])
        #expect(index.containing(c(13, 2)) == [0])
        #expect(index.containing(c(13, 4)) == [0])
        #expect(index.containing(c(10, 2)) == [0])
        #expect(index.containing(c(12.999, 2)) == [0])
        #expect(index.containing(c(13.001, 2)) == [])
        #expect(index.containing(c(9.999, 2)) == [])
    }

    @Test func holeIsOutsideAndItsEdgeIsABoundary() {
        let shell = [(0.0, 0.0), (0.1, 0.0), (0.1, 0.1), (0.0, 0.1)].map { Coordinate(latitude: $0.1, longitude: $0.0) }
        let hole = [(0.04, 0.04), (0.04, 0.06), (0.06, 0.06), (0.06, 0.04)].map { Coordinate(latitude: $0.1, longitude: $0.0) }
        let index = FenceIndex(shapes: [.polygons([PolygonRings(shell: shell, holes: [hole])])])
        #expect(index.containing(Coordinate(latitude: 0.05, longitude: 0.05)) == [])
        #expect(index.containing(Coordinate(latitude: 0.02, longitude: 0.02)) == [0])
        #expect(index.containing(Coordinate(latitude: 0.05, longitude: 0.04)) == [0]) // on the hole's edge
        let d = index.signedDistance(fence: 0, to: Coordinate(latitude: 0.05, longitude: 0.05))
        #expect(abs(d - 0.01 * Geodesy.metersPerDegree(atLatitude: 0.05).latitude) < 1) // nearest: the hole's north/south edge
        // Reversed orientation gives the same answers.
        let reversed = FenceIndex(shapes: [.polygons([PolygonRings(shell: shell.reversed(), holes: [hole.reversed()])])])
        #expect(reversed.containing(Coordinate(latitude: 0.05, longitude: 0.05)) == [])
        #expect(reversed.containing(Coordinate(latitude: 0.02, longitude: 0.02)) == [0])
    }

    @Test(arguments: ["split", "one-hole", "two-holes", "complex-split", "crossing-latitude", "multi-split", "over-180"])
    func antimeridianFenceMatchesItsSplitForm(_ name: String) throws {
        let whole = try #require(GeometryFixtures.shape(GeometryFixtures.json("geometry/antimeridian/\(name).input.json")))
        let split = try #require(GeometryFixtures.shape(GeometryFixtures.json("geometry/antimeridian/\(name).split.json")))
        let index = FenceIndex(shapes: [whole, split])
        var rng = SeededGenerator(seed: 7)
        var insideCount = 0
        for _ in 0..<2000 {
            let p = Coordinate(latitude: Double.random(in: -80...80, using: &rng), longitude: Double.random(in: -180..<180, using: &rng))
            let reference = index.signedDistance(fence: 1, to: p)
            guard abs(reference) > 1 else { continue }
            let got = index.containing(p)
            #expect(got.contains(0) == (reference < 0), "\(name) \(p)")
            if got.contains(0) { insideCount += 1 }
            // Near the antimeridian the nearest boundary of the whole form is found across it,
            // and the split form's seam is no boundary: both give the same distance.
            let d = index.signedDistance(fence: 0, to: p)
            #expect((d < 0) == (reference < 0))
            #expect(abs(d - reference) <= max(0.5, abs(reference) * 1e-6), "\(name) \(p): whole \(d) m, split \(reference) m")
        }
        #expect(insideCount > 0)
    }

    @Test func theSeamOfASplitFenceIsNoBoundary() throws {
        // A 0.2° box around 180° split the RFC 7946 way into two parts that meet at ±180°.
        let east = PolygonRings(shell: [Coordinate(latitude: -17, longitude: 179.9), Coordinate(latitude: -17, longitude: 180),
                                        Coordinate(latitude: -16.9, longitude: 180), Coordinate(latitude: -16.9, longitude: 179.9)])
        let west = PolygonRings(shell: [Coordinate(latitude: -17, longitude: -180), Coordinate(latitude: -17, longitude: -179.9),
                                        Coordinate(latitude: -16.9, longitude: -179.9), Coordinate(latitude: -16.9, longitude: -180)])
        let index = FenceIndex(shapes: [.polygons([east, west])])
        // On the seam, 1 km or more from every real edge.
        for lon in [180.0, -180.0, 179.999, -179.999] {
            let p = Coordinate(latitude: -16.95, longitude: lon)
            #expect(index.containing(p) == [0])
            let d = index.signedDistance(fence: 0, to: p)
            #expect(d < -5000 && d > -5600, "\(lon): \(d) m")
            let probe = index.probe(p, within: 20_000, band: 100)
            #expect(probe.containing == [0])
            #expect((probe.nearest?.signedDistanceMeters ?? 0) < -5000)
        }
        // Outside, east of the west part and west of the east part.
        #expect(index.containing(Coordinate(latitude: -16.95, longitude: -179.8)) == [])
        #expect(index.containing(Coordinate(latitude: -16.95, longitude: 179.8)) == [])
        // A seam that only one part has is a boundary: the east part alone ends at 180°.
        let alone = FenceIndex(shapes: [.polygons([east])])
        #expect(abs(alone.signedDistance(fence: 0, to: Coordinate(latitude: -16.95, longitude: 180))) < 1)
    }

    @Test func nearestBoundaryIsFoundAcrossTheAntimeridian() {
        let c = Coordinate(latitude: -17.7, longitude: 179.9)
        let index = FenceIndex(shapes: [.circle(center: c, radiusMeters: 1000),
                                        .circle(center: Coordinate(latitude: -17.7, longitude: 170), radiusMeters: 1000)])
        let p = Coordinate(latitude: -17.7, longitude: -179.9)
        let nearest = index.nearestBoundary(to: p)
        #expect(nearest?.fence == 0)
        let expected = Geodesy.distanceMeters(from: p, to: c) - 1000
        #expect(abs((nearest?.signedDistanceMeters ?? 0) - expected) < 1)
        let straddling = FenceIndex(shapes: [.circle(center: Coordinate(latitude: 0, longitude: 180), radiusMeters: 5000)])
        #expect(straddling.containing(Coordinate(latitude: 0, longitude: -179.99)) == [0])
        #expect(straddling.containing(Coordinate(latitude: 0, longitude: 179.99)) == [0])
    }

    // MARK: Edge cases

    @Test func emptyIndexAndBadPointsGiveNoAnswers() {
        let empty = FenceIndex(shapes: [])
        #expect(empty.count == 0)
        #expect(empty.containing(Coordinate(latitude: 1, longitude: 1)) == [])
        #expect(empty.nearestBoundary(to: Coordinate(latitude: 1, longitude: 1)) == nil)
        let one = FenceIndex(shapes: [.circle(center: Coordinate(latitude: 1, longitude: 1), radiusMeters: 10)])
        #expect(one.containing(Coordinate(latitude: .nan, longitude: 1)) == [])
        #expect(one.nearestBoundary(to: Coordinate(latitude: 95, longitude: 1)) == nil)
        #expect(one.query(Coordinate(latitude: 1, longitude: 1), within: 5).nearest == nil)
        #expect(one.query(Coordinate(latitude: 1, longitude: 1), within: 5).clearanceMeters == 5)
    }

    @Test func trackCursorKeepsMembershipExactWhileSkippingQueries() {
        var rng = SeededGenerator(seed: 9)
        let center = Coordinate(latitude: 48.1, longitude: 11.6)
        let shapes = RandomFences.make(count: 200, around: center, spreadMeters: 8_000, rng: &rng)
        let index = FenceIndex(shapes: shapes)
        var cursor = FenceTrackCursor(searchRadiusMeters: 1000)
        var p = center
        var bearing = 0.0
        for _ in 0..<5000 {
            bearing += Double.random(in: -20...20, using: &rng)
            p = Geodesy.localDestination(from: p, bearingDegrees: bearing, distanceMeters: 3)
            cursor.move(to: p, in: index)
            let expected = index.containing(p)
            let distances = shapes.map { abs(BruteForce.signedDistance($0, p)) }
            if (distances.min() ?? .infinity) > 0.05 { #expect(cursor.result.containing == expected, "\(p)") }
            #expect(cursor.clearanceMeters <= (distances.min() ?? .infinity) + 0.01)
        }
        #expect(cursor.queries < 2500)
    }

    @Test func compactStorageTargets() {
        var rng = SeededGenerator(seed: 5)
        let c = Coordinate(latitude: 45, longitude: 5)
        let circles: [FenceShape] = (0..<10_000).map { _ in
            .circle(center: Geodesy.localDestination(from: c, bearingDegrees: Double.random(in: 0..<360, using: &rng),
                                                     distanceMeters: Double.random(in: 0...100_000, using: &rng)),
                    radiusMeters: Double.random(in: 50...2000, using: &rng))
        }
        #expect(FenceIndex(shapes: circles).indexBytes / circles.count <= 150)
        let gons: [FenceShape] = circles.map {
            guard case let .circle(center, radius) = $0 else { return $0 }
            return .polygons([PolygonRings(shell: (0..<64).map { Geodesy.localDestination(from: center, bearingDegrees: Double($0) * 360 / 64, distanceMeters: radius) })])
        }
        #expect(FenceIndex(shapes: gons).indexBytes / gons.count <= 1200)
    }
}
