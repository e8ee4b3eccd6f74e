#if canImport(Glibc)
import Glibc
#endif

/// Distance from a point to one fence's boundary; negative inside.
public struct FenceDistance: Hashable, Sendable {
    public var fence: Int
    public var signedDistanceMeters: Double
    public init(fence: Int, signedDistanceMeters: Double) {
        self.fence = fence
        self.signedDistanceMeters = signedDistanceMeters
    }
}

/// Answers, for a point, which fences contain it and how far the nearest boundaries are.
///
/// PLACEHOLDER: a brute-force scan with a local flat-earth approximation, so the engine can be
/// built against the final API. The geometry issue replaces the internals (geodesy, grid,
/// per-polygon edge index); the public API stays.
public struct FenceIndex: Sendable {
    public let shapes: [FenceShape]

    public init(shapes: [FenceShape]) {
        self.shapes = shapes
    }

    public var count: Int { shapes.count }

    /// Fences containing `point` (a point on the boundary is inside), in ascending index order.
    public func containing(_ point: Coordinate) -> [Int] {
        shapes.indices.filter { signedDistance(fence: $0, to: point) <= 0 }
    }

    /// Fences whose boundary lies within `radiusMeters` of `point`, ascending index order.
    public func near(_ point: Coordinate, within radiusMeters: Double) -> [FenceDistance] {
        shapes.indices.compactMap { i in
            let d = signedDistance(fence: i, to: point)
            return abs(d) <= radiusMeters ? FenceDistance(fence: i, signedDistanceMeters: d) : nil
        }
    }

    /// The fence whose boundary is nearest to `point`, among those within `searchRadiusMeters`.
    public func nearestBoundary(to point: Coordinate, within searchRadiusMeters: Double = .infinity) -> FenceDistance? {
        var best: FenceDistance?
        for i in shapes.indices {
            let d = signedDistance(fence: i, to: point)
            if abs(d) <= searchRadiusMeters, abs(d) < abs(best?.signedDistanceMeters ?? .infinity) {
                best = FenceDistance(fence: i, signedDistanceMeters: d)
            }
        }
        return best
    }

    /// Signed distance in metres from `point` to fence `fence`'s boundary (negative inside).
    public func signedDistance(fence: Int, to point: Coordinate) -> Double {
        switch shapes[fence] {
        case let .circle(center, radius):
            return PlaceholderGeo.distance(point, center) - radius
        case let .polygons(polys):
            var inside = false
            var best = Double.infinity
            for poly in polys {
                let rings = [poly.shell] + poly.holes
                var inThis = PlaceholderGeo.contains(poly.shell, point)
                for hole in poly.holes where PlaceholderGeo.contains(hole, point) { inThis = false }
                if inThis { inside = true }
                for ring in rings { best = min(best, PlaceholderGeo.distanceToRing(ring, point)) }
            }
            return inside ? -best : best
        }
    }
}

enum PlaceholderGeo {
    static let earthRadius = 6_371_008.8

    static func distance(_ a: Coordinate, _ b: Coordinate) -> Double {
        let rad = Double.pi / 180
        let dLat = (b.latitude - a.latitude) * rad
        let dLon = (b.longitude - a.longitude) * rad
        let h = sin(dLat / 2) * sin(dLat / 2) + cos(a.latitude * rad) * cos(b.latitude * rad) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * earthRadius * asin(min(1, sqrt(h)))
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

    static func distanceToRing(_ ring: [Coordinate], _ p: Coordinate) -> Double {
        let rad = Double.pi / 180
        let kx = cos(p.latitude * rad) * rad * earthRadius
        let ky = rad * earthRadius
        var best = Double.infinity
        var j = ring.count - 1
        for i in ring.indices {
            let ax = (ring[j].longitude - p.longitude) * kx, ay = (ring[j].latitude - p.latitude) * ky
            let bx = (ring[i].longitude - p.longitude) * kx, by = (ring[i].latitude - p.latitude) * ky
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
