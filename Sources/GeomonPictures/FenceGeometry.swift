import GeomonCore

#if canImport(Glibc)
import Glibc
#endif

/// Fence shapes as the map sees them: boxes for culling and screen outlines.
enum FenceGeometry {
    /// The fence's latitude/longitude box; nil for a shape without valid coordinates.
    static func box(of shape: FenceShape) -> GeoBox? {
        switch shape {
        case let .circle(center, radiusMeters):
            guard center.isDrawable, radiusMeters.isFinite, radiusMeters >= 0 else { return nil }
            let dLat = radiusMeters / MapProjection.metersPerDegree
            let dLon = dLat / max(cos(center.latitude * Double.pi / 180), 0.01)
            return GeoBox(
                minLatitude: center.latitude - dLat, maxLatitude: center.latitude + dLat,
                minLongitude: center.longitude - dLon, maxLongitude: center.longitude + dLon)
        case let .polygons(polygons):
            return GeoBox(polygons.lazy.flatMap(\.shell))
        case let .corridor(lines, widthMeters):
            guard var box = GeoBox(lines.lazy.flatMap { $0 }), widthMeters.isFinite else { return nil }
            let dLat = widthMeters / 2 / MapProjection.metersPerDegree
            let dLon = dLat / max(cos(max(abs(box.minLatitude), abs(box.maxLatitude)) * Double.pi / 180), 0.01)
            box.include(Coordinate(latitude: box.minLatitude - dLat, longitude: box.minLongitude - dLon))
            box.include(Coordinate(latitude: box.maxLatitude + dLat, longitude: box.maxLongitude + dLon))
            return box
        }
    }

    /// SVG path data for a corridor's lines (open polylines, thinned like rings).
    static func linePathData(_ lines: [[Coordinate]], projection: MapProjection, minSpacing: Double, stats: inout Int) -> String {
        var d = ""
        for line in lines {
            let points = line.filter(\.isDrawable).map(projection.project)
            guard points.count >= 2 else { continue }
            let kept = TrackThinner.thin(points, minSpacing: minSpacing)
            for (k, i) in kept.enumerated() {
                d += (k == 0 ? "M" : "L") + SVGWriter.n(points[i].x) + " " + SVGWriter.n(points[i].y)
            }
            if kept.count == 1 { d += "l0 0" }
            stats += kept.count
        }
        return d
    }

    /// SVG path data for the polygons' rings (shells and holes, even-odd fill), clipped to the
    /// map rectangle plus a 10-pixel margin (so a country around a walk costs a few vertices,
    /// not its whole border at street scale), with vertices closer than `minSpacing` pixels to
    /// the previous kept one dropped. Empty when every ring collapsed below three points.
    static func pathData(_ polygons: [PolygonRings], projection: MapProjection, minSpacing: Double, stats: inout Int) -> String {
        var visible: [ScreenPoint] = []
        return pathData(polygons, projection: projection, minSpacing: minSpacing, stats: &stats, vertices: &visible)
    }

    /// As above, also collecting the drawn vertices (for label positions along the outline).
    static func pathData(
        _ polygons: [PolygonRings], projection: MapProjection, minSpacing: Double, stats: inout Int, vertices: inout [ScreenPoint]
    ) -> String {
        var d = ""
        let r = projection.rect
        let clip = (x0: r.x - 10, y0: r.y - 10, x1: r.x + r.width + 10, y1: r.y + r.height + 10)
        for polygon in polygons {
            for ring in [polygon.shell] + polygon.holes {
                let points = clipped(ring.filter(\.isDrawable).map(projection.project), to: clip)
                guard points.count >= 3 else { continue }
                let kept = TrackThinner.thin(points, minSpacing: minSpacing)
                guard kept.count >= 3 else { continue }
                for (k, i) in kept.enumerated() {
                    d += (k == 0 ? "M" : "L") + SVGWriter.n(points[i].x) + " " + SVGWriter.n(points[i].y)
                    vertices.append(points[i])
                }
                d += "Z"
                stats += kept.count
            }
        }
        return d
    }

    /// Sutherland–Hodgman clipping of a closed ring against an axis-aligned rectangle. The
    /// result can run along the rectangle's edges; those parts are outside the map's clip path.
    static func clipped(_ ring: [ScreenPoint], to box: (x0: Double, y0: Double, x1: Double, y1: Double)) -> [ScreenPoint] {
        if ring.allSatisfy({ $0.x >= box.x0 && $0.x <= box.x1 && $0.y >= box.y0 && $0.y <= box.y1 }) { return ring }
        typealias Edge = (inside: (ScreenPoint) -> Bool, cross: (ScreenPoint, ScreenPoint) -> ScreenPoint)
        func atX(_ x: Double) -> (ScreenPoint, ScreenPoint) -> ScreenPoint {
            { a, b in ScreenPoint(x: x, y: a.y + (b.y - a.y) * (x - a.x) / (b.x - a.x)) }
        }
        func atY(_ y: Double) -> (ScreenPoint, ScreenPoint) -> ScreenPoint {
            { a, b in ScreenPoint(x: a.x + (b.x - a.x) * (y - a.y) / (b.y - a.y), y: y) }
        }
        let edges: [Edge] = [
            ({ $0.x >= box.x0 }, atX(box.x0)), ({ $0.x <= box.x1 }, atX(box.x1)),
            ({ $0.y >= box.y0 }, atY(box.y0)), ({ $0.y <= box.y1 }, atY(box.y1)),
        ]
        var output = ring
        for edge in edges {
            let input = output
            output = []
            guard let last = input.last else { break }
            var previous = last
            for current in input {
                let currentIn = edge.inside(current), previousIn = edge.inside(previous)
                if currentIn {
                    if !previousIn { output.append(edge.cross(previous, current)) }
                    output.append(current)
                } else if previousIn {
                    output.append(edge.cross(previous, current))
                }
                previous = current
            }
        }
        return output
    }
}
