import Foundation
@testable import GeomonCore
import Testing

/// The angular (star-shaped) edge index uses pseudo-angles instead of `atan2`; these tests pin
/// the properties it relies on and its answers on the rays through the vertices, where the
/// edge lookup is closest to ambiguous.
struct FenceAngularIndexTests {
    @Test func pseudoAngleIsStrictlyMonotoneWithExactQuarterTurns() {
        var previous = -1.0
        for i in 0..<100_000 {
            let theta = 2 * Double.pi * Double(i) / 100_000
            let p = FenceStore.pseudoAngle(cos(theta) * 3, sin(theta) * 3)
            #expect(p > previous, "\(theta)")
            #expect(p >= 0 && p < 4)
            previous = p
        }
        #expect(FenceStore.pseudoAngle(1, 0) == 0)
        #expect(FenceStore.pseudoAngle(0, 2) == 1)
        #expect(FenceStore.pseudoAngle(-5, 0) == 2)
        #expect(FenceStore.pseudoAngle(0, -1) == 3)
        // Mirror and point symmetry used by the index.
        for (x, y) in [(0.3, 0.7), (-2.0, 0.1), (-0.5, -0.25), (4.0, -1.0)] {
            let p = FenceStore.pseudoAngle(x, y)
            var mirrored = 2 - p
            if mirrored < 0 { mirrored += 4 }
            #expect(abs(FenceStore.pseudoAngle(-x, y) - mirrored) < 1e-12)
            #expect(abs(FenceStore.pseudoAngle(-x, -y) - (p + 2).truncatingRemainder(dividingBy: 4)) < 1e-12)
        }
    }

    /// Points on the rays from the centre through every vertex (and between), inside, on and
    /// outside the boundary, for both ring orientations: containment and distance agree with
    /// brute force.
    @Test(arguments: [false, true])
    func raysThroughVerticesAgreeWithBruteForce(clockwise: Bool) {
        let c = Coordinate(latitude: 51.2, longitude: -0.4)
        var ring = (0..<64).map { i in
            Geodesy.localDestination(from: c, bearingDegrees: Double(i) * 360 / 64, distanceMeters: i % 2 == 0 ? 800 : 650)
        }
        if clockwise { ring.reverse() }
        let shape = FenceShape.polygons([PolygonRings(shell: ring)])
        let index = FenceIndex(shapes: [shape, .circle(center: c, radiusMeters: 3000)])
        // The angular index is the one under test (not the strips it falls back to), in the
        // frame that makes the ring counter-clockwise: x mirrored when the ring as given runs
        // clockwise in (east, north) (negative shoelace area).
        let record = index.store.polygons[Int(index.store.fences[Int(index.store.internalIDs[0])].polygon)]
        #expect(record.stripCount == UInt32.max)
        let area2 = ring.indices.reduce(0.0) { sum, i in
            let a = ring[i], b = ring[(i + 1) % ring.count]
            return sum + a.longitude * b.latitude - b.longitude * a.latitude
        }
        #expect((record.stripsPerDegree < 0) == (area2 < 0))
        var checked = 0
        for k in 0..<128 {
            for distance in [0.5, 100, 640, 649.9, 700, 799, 801, 1500] {
                let p = Geodesy.localDestination(from: c, bearingDegrees: Double(k) * 360 / 128, distanceMeters: distance)
                let reference = BruteForce.signedDistance(shape, p)
                let got = index.signedDistance(fence: 0, to: p)
                #expect(abs(got - reference) <= max(0.01, abs(reference) * 2e-3), "\(k) \(distance)")
                if abs(reference) > 0.01 {
                    #expect(index.query(p).containing.contains(0) == (reference < 0), "\(k) \(distance)")
                    checked += 1
                }
            }
        }
        #expect(checked > 900)
    }

    /// Random star-shaped rings (radius varying per vertex, so the inner and outer radii
    /// differ) and random points from the centre to three radii out: the windowed scan (which
    /// narrows its window with the fence's inner and outer radii) finds the brute-force
    /// distance and containment, through `signedDistance` and through the query.
    @Test(arguments: [UInt64(11), 12, 13])
    func windowedScanAgreesWithBruteForceOnRandomStars(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        let c = Coordinate(latitude: Double.random(in: -60...60, using: &rng), longitude: Double.random(in: -170...170, using: &rng))
        let vertices = Int.random(in: 30...200, using: &rng)
        let base = Double.random(in: 60...2000, using: &rng)
        let wobble = Double.random(in: 0...0.4, using: &rng)
        let ring = (0..<vertices).map { i in
            Geodesy.localDestination(from: c, bearingDegrees: Double(i) * 360 / Double(vertices),
                                     distanceMeters: base * (1 + Double.random(in: -wobble...wobble, using: &rng)))
        }
        let shape = FenceShape.polygons([PolygonRings(shell: ring + [ring[0]])])
        let index = FenceIndex(shapes: [shape])
        #expect(index.store.polygons[0].stripCount == UInt32.max, "angular index in use")
        for _ in 0..<600 {
            let p = Geodesy.localDestination(from: c, bearingDegrees: Double.random(in: 0..<360, using: &rng),
                                             distanceMeters: Double.random(in: 0...(3 * base), using: &rng))
            let reference = BruteForce.signedDistance(shape, p)
            #expect(abs(index.signedDistance(fence: 0, to: p) - reference) <= max(0.01, abs(reference) * 2e-3), "\(p)")
            let result = index.query(p)
            #expect(abs((result.nearest?.signedDistanceMeters ?? .nan) - reference) <= max(0.01, abs(reference) * 2e-3), "\(p)")
            if abs(reference) > 0.01 { #expect(result.containing.contains(0) == (reference < 0), "\(p)") }
        }
    }

    /// A star-shaped first ring with other rings after it: a hole round the centre (the
    /// centre is then outside the fence), a hole off the centre, and a second member beyond
    /// the first ring. The angular index is in use (its other rings scanned whole near them),
    /// and random points from the centre to twice the extent agree with brute force.
    @Test(arguments: [0, 1, 2])
    func otherRingsAgreeWithBruteForce(layout: Int) {
        let c = Coordinate(latitude: -33.9, longitude: 151.2)
        var rng = SeededGenerator(seed: UInt64(40 + layout))
        let shell = (0..<80).map { i in
            Geodesy.localDestination(from: c, bearingDegrees: Double(i) * 360 / 80,
                                     distanceMeters: 1000 * (1 + Double.random(in: -0.03...0.03, using: &rng)))
        }
        func ring(_ center: Coordinate, _ radius: Double, _ count: Int) -> [Coordinate] {
            (0..<count).map { Geodesy.localDestination(from: center, bearingDegrees: -Double($0) * 360 / Double(count), distanceMeters: radius) }
        }
        let members: [PolygonRings]
        switch layout {
        case 0: members = [PolygonRings(shell: shell, holes: [ring(c, 240, 12)])]
        case 1: members = [PolygonRings(shell: shell, holes: [ring(Geodesy.localDestination(from: c, bearingDegrees: 60, distanceMeters: 550), 200, 16)])]
        default:
            members = [PolygonRings(shell: shell),
                       PolygonRings(shell: ring(Geodesy.localDestination(from: c, bearingDegrees: 90, distanceMeters: 1300), 150, 10).reversed())]
        }
        let shape = FenceShape.polygons(members)
        let index = FenceIndex(shapes: [shape])
        let record = index.store.polygons[0]
        #expect(record.stripCount == UInt32.max, "angular index in use")
        #expect(Int(record.stripStart) == shell.count && record.stripLat0 > 0)
        #expect((index.store.fences[0].inner < 0) == (layout == 0), "centre inside the hole round it")
        var inside = 0, outside = 0
        for _ in 0..<1500 {
            let p = Geodesy.localDestination(from: c, bearingDegrees: Double.random(in: 0..<360, using: &rng),
                                             distanceMeters: Double.random(in: 0...3000, using: &rng))
            let reference = BruteForce.signedDistance(shape, p)
            #expect(abs(index.signedDistance(fence: 0, to: p) - reference) <= max(0.01, abs(reference) * 2e-3), "\(p)")
            let result = index.query(p)
            #expect(abs((result.nearest?.signedDistanceMeters ?? .nan) - reference) <= max(0.01, abs(reference) * 2e-3), "\(p)")
            guard abs(reference) > 0.01 else { continue }
            #expect(result.containing.contains(0) == (reference < 0), "\(p)")
            if reference < 0 { inside += 1 } else { outside += 1 }
        }
        #expect(inside > 200 && outside > 200)
    }
}
