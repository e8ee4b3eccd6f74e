import Foundation
import GeomonCore
import GeomonTestSupport

/// Small helpers for geometry tests: GeoJSON geometry → FenceShape, a seeded PRNG and a
/// brute-force reference written independently of the index.
enum GeometryFixtures {
    static func json(_ relative: String) -> Any? {
        guard let data = try? Data(contentsOf: TestSupport.fixture(relative)) else { return nil }
        return try? JSONSerialization.jsonObject(with: data)
    }

    static func ring(_ value: Any) -> [Coordinate] {
        ((value as? [[Double]]) ?? []).map { Coordinate(latitude: $0[1], longitude: $0[0]) }
    }

    static func polygon(_ value: Any) -> PolygonRings {
        let rings = ((value as? [Any]) ?? []).map(ring)
        return PolygonRings(shell: rings.first ?? [], holes: Array(rings.dropFirst()))
    }

    /// A GeoJSON Polygon or MultiPolygon geometry object as a fence shape.
    static func shape(_ geometry: Any?) -> FenceShape? {
        guard let g = geometry as? [String: Any], let type = g["type"] as? String, let c = g["coordinates"] as? [Any] else { return nil }
        switch type {
        case "Polygon": return .polygons([polygon(c)])
        case "MultiPolygon": return .polygons(c.map(polygon))
        default: return nil
        }
    }
}

/// SplitMix64, seeded.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Brute force reference: even-odd ray casting per ring and nearest edge in a flat metric at
/// the point, with everything in Double; circles by Vincenty distance.
enum BruteForce {
    static func signedDistance(_ shape: FenceShape, _ p: Coordinate) -> Double {
        switch shape {
        case let .circle(center, radius):
            return Geodesy.distanceMeters(from: p, to: center) - radius
        case let .polygons(members):
            var inside = false
            var best = Double.infinity
            for member in members {
                var inMember = contains(member.shell, p)
                for hole in member.holes where contains(hole, p) { inMember = false }
                if inMember { inside = true }
                for ring in [member.shell] + member.holes { best = min(best, distance(ring, p)) }
            }
            return inside ? -best : best
        case let .corridor(lines, width):
            return lines.map { polylineDistance($0, p) }.min().map { $0 - width / 2 } ?? .infinity
        }
    }

    /// Distance to an open polyline, in the flat metric at the point.
    static func polylineDistance(_ line: [Coordinate], _ p: Coordinate) -> Double {
        let k = Geodesy.metersPerDegree(atLatitude: p.latitude)
        var best = Double.infinity
        for i in line.indices.dropFirst() {
            let ax = Geodesy.longitudeDelta(p.longitude, line[i - 1].longitude) * k.longitude, ay = (line[i - 1].latitude - p.latitude) * k.latitude
            let bx = Geodesy.longitudeDelta(p.longitude, line[i].longitude) * k.longitude, by = (line[i].latitude - p.latitude) * k.latitude
            let dx = bx - ax, dy = by - ay
            let len2 = dx * dx + dy * dy
            let t = len2 > 0 ? max(0, min(1, -(ax * dx + ay * dy) / len2)) : 0
            let cx = ax + t * dx, cy = ay + t * dy
            best = min(best, (cx * cx + cy * cy).squareRoot())
        }
        return best
    }

    static func contains(_ ring: [Coordinate], _ p: Coordinate) -> Bool {
        var inside = false
        var j = ring.count - 1
        for i in ring.indices {
            let a = ring[i], b = ring[j]
            if (a.latitude > p.latitude) != (b.latitude > p.latitude) {
                let x = (b.longitude - a.longitude) * (p.latitude - a.latitude) / (b.latitude - a.latitude) + a.longitude
                if p.longitude < x { inside.toggle() }
            }
            j = i
        }
        return inside
    }

    static func distance(_ ring: [Coordinate], _ p: Coordinate) -> Double {
        let k = Geodesy.metersPerDegree(atLatitude: p.latitude)
        var best = Double.infinity
        var j = ring.count - 1
        for i in ring.indices {
            let ax = (ring[j].longitude - p.longitude) * k.longitude, ay = (ring[j].latitude - p.latitude) * k.latitude
            let bx = (ring[i].longitude - p.longitude) * k.longitude, by = (ring[i].latitude - p.latitude) * k.latitude
            let dx = bx - ax, dy = by - ay
            let len2 = dx * dx + dy * dy
            let t = len2 > 0 ? max(0, min(1, -(ax * dx + ay * dy) / len2)) : 0
            let cx = ax + t * dx, cy = ay + t * dy
            best = min(best, (cx * cx + cy * cy).squareRoot())
            j = i
        }
        return best
    }
}

/// Random fences around a centre: circles and star-shaped polygons, some with a hole.
enum RandomFences {
    static func make(count: Int, around center: Coordinate, spreadMeters: Double, rng: inout SeededGenerator) -> [FenceShape] {
        (0..<count).map { _ in
            let c = Geodesy.localDestination(from: center, bearingDegrees: Double.random(in: 0..<360, using: &rng),
                                             distanceMeters: Double.random(in: 0...spreadMeters, using: &rng))
            let radius = Double.random(in: 30...1500, using: &rng)
            if Bool.random(using: &rng) { return .circle(center: c, radiusMeters: radius) }
            let n = Int.random(in: 3...90, using: &rng)
            let shell = star(c, radius: radius, vertices: n, rng: &rng)
            var holes: [[Coordinate]] = []
            if n > 10, Bool.random(using: &rng) {
                holes.append(star(c, radius: radius * 0.2, vertices: 8, rng: &rng).reversed())
            }
            return .polygons([PolygonRings(shell: shell, holes: holes)])
        }
    }

    /// Corridors: random walks of 2–80 points with legs of 50–800 m, 10–400 m wide; one in
    /// five has a second line.
    static func corridors(count: Int, around center: Coordinate, spreadMeters: Double, rng: inout SeededGenerator) -> [FenceShape] {
        (0..<count).map { _ in
            var lines: [[Coordinate]] = []
            for _ in 0..<(Int.random(in: 0..<5, using: &rng) == 0 ? 2 : 1) {
                var p = Geodesy.localDestination(from: center, bearingDegrees: Double.random(in: 0..<360, using: &rng),
                                                 distanceMeters: Double.random(in: 0...spreadMeters, using: &rng))
                var heading = Double.random(in: 0..<360, using: &rng)
                var line = [p]
                for _ in 1..<Int.random(in: 2...80, using: &rng) {
                    heading += Double.random(in: -60...60, using: &rng)
                    p = Geodesy.localDestination(from: p, bearingDegrees: heading, distanceMeters: Double.random(in: 50...800, using: &rng))
                    line.append(p)
                }
                lines.append(line)
            }
            return .corridor(lines: lines, widthMeters: Double.random(in: 10...400, using: &rng))
        }
    }

    static func star(_ c: Coordinate, radius: Double, vertices n: Int, rng: inout SeededGenerator) -> [Coordinate] {
        let minFactor = radius * 0.2 > 0 ? 0.35 : 1
        return (0..<n).map { i in
            let bearing = 360 * Double(i) / Double(n)
            return Geodesy.localDestination(from: c, bearingDegrees: bearing,
                                            distanceMeters: radius * Double.random(in: minFactor...1, using: &rng))
        }
    }
}
