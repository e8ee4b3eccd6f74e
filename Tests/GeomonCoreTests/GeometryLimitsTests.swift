import GeomonCore
import GeomonFormat
import Testing

struct GeometryLimitsTests {
    /// The problems as the validator words them.
    static func problems(_ shape: FenceShape) -> [String] { geometryLimitProblems(shape).map(\.text) }

    static func ring(_ points: [(Double, Double)]) -> [Coordinate] {
        points.map { Coordinate(latitude: $0.1, longitude: $0.0) }
    }

    @Test func ordinaryShapesHaveNoProblems() {
        #expect(Self.problems(.circle(center: Coordinate(latitude: 47, longitude: 8), radiusMeters: 150)).isEmpty)
        let square = Self.ring([(8, 47), (8.1, 47), (8.1, 47.1), (8, 47.1)])
        #expect(Self.problems(.polygons([PolygonRings(shell: square)])).isEmpty)
        let dateline = Self.ring([(179.9, -17), (-179.9, -17), (-179.9, -16.9), (179.9, -16.9), (179.9, -17)])
        #expect(Self.problems(.polygons([PolygonRings(shell: dateline)])).isEmpty)
    }

    @Test func polarShapesAreReported() {
        let circle = Self.problems(.circle(center: Coordinate(latitude: 84.99, longitude: 0), radiusMeters: 5000))
        #expect(circle.count == 1)
        #expect(circle.first?.contains("poles are not supported") == true)
        let polar = Self.ring([(0, 86), (10, 86), (10, 88)])
        #expect(Self.problems(.polygons([PolygonRings(shell: polar)])).first?.contains("polygon 1 shell reaches latitude 88°") == true)
        // A ring around the pole: longitudes wind through 360°.
        let cap = Self.ring([(0, 80), (90, 80), (180, 80), (-90, 80)])
        #expect(Self.problems(.polygons([PolygonRings(shell: cap)])).contains { $0.contains("encircles a pole") })
    }

    @Test func hugeAndNonFiniteShapesAreReported() {
        #expect(Self.problems(.circle(center: Coordinate(latitude: 0, longitude: 0), radiusMeters: 2_000_000)).contains { $0.contains("1000 km") })
        #expect(Self.problems(.circle(center: Coordinate(latitude: .nan, longitude: 0), radiusMeters: 10)) == ["circle has a non-finite centre or radius"])
        let wide = Self.ring([(-100, 0), (0, 0), (100, 0), (100, 1), (-100, 1)])
        #expect(Self.problems(.polygons([PolygonRings(shell: wide)])).contains { $0.contains("over the supported 180°") })
        // A corridor over 200° of longitude, also when it passes back through its first point.
        let out = Self.ring([(0, 0), (100, 0), (0, 0), (-100, 0)])
        #expect(Self.problems(.corridor(lines: [out], widthMeters: 1000)).contains { $0.contains("over the supported 180°") })
        let bad = [Coordinate(latitude: 0, longitude: 0), Coordinate(latitude: .infinity, longitude: 1), Coordinate(latitude: 1, longitude: 1)]
        #expect(Self.problems(.polygons([PolygonRings(shell: Self.ring([(0, 0), (1, 0), (1, 1)]), holes: [bad])])) == ["polygon 1 hole 1 has a non-finite coordinate"])
        // A ring with a non-finite position counts only as that: the span is measured from the
        // first good ring (here across the antimeridian), not from the bad one's first position.
        let east = Self.ring([(179.8, 10), (179.9, 10), (179.9, 10.1)])
        let west = Self.ring([(-179.9, 10), (-179.8, 10), (-179.8, 10.1)])
        let badFirst = [Coordinate(latitude: 0, longitude: 0), Coordinate(latitude: .nan, longitude: 1), Coordinate(latitude: 1, longitude: 1)]
        #expect(Self.problems(.polygons([PolygonRings(shell: badFirst), PolygonRings(shell: east), PolygonRings(shell: west)]))
            == ["polygon 1 shell has a non-finite coordinate"])
    }
}
