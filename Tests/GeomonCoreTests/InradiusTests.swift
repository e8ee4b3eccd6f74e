import GeomonCore
import Testing

/// The largest circle inside a polygon (`Inradius`), which decides whether a fence can ever be
/// certainly entered.
struct InradiusTests {
    static func rectangle(degreesEast: Double, degreesNorth: Double) -> FenceShape {
        let ring = [(0.0, 0.0), (0.0, degreesEast), (degreesNorth, degreesEast), (degreesNorth, 0.0), (0.0, 0.0)]
            .map { Coordinate(latitude: $0.0, longitude: $0.1) }
        return .polygons([PolygonRings(shell: ring)])
    }

    /// A sliver 1,113 km long and 0.1 mm wide is answered at once (its first grid, at cells as
    /// wide as it is thin, would hold ten billion); the first grid never holds more than
    /// `maxGridSide` cells along its longer side.
    @Test func aSliverIsSearchedFromAFewCells() {
        #expect(Inradius.meters(of: Self.rectangle(degreesEast: 10, degreesNorth: 1e-9), upTo: 30) < 0.01)
        for (width, height) in [(1_113_000.0, 0.0001), (1000, 10), (500, 500), (10, 2000)] {
            let size = Inradius.gridCellSize(width: width, height: height)
            let cells = (width / size).rounded(.up) * (height / size).rounded(.up)
            #expect(cells <= 100, "\(width) × \(height): \(cells) cells")
        }
    }

    /// First cells ten times wider than the strip still find its circle: an 11,120 m × 11 m
    /// strip's is its half width.
    @Test func aLongStripsCircleIsItsHalfWidth() {
        let strip = Self.rectangle(degreesEast: 0.1, degreesNorth: 0.0001)
        let radius = Inradius.meters(of: strip, upTo: 100)
        #expect(abs(radius - 5.56) <= 1, "\(radius)")
    }
}
