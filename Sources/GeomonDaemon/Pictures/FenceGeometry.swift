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
            guard center.isValid, radiusMeters.isFinite, radiusMeters >= 0 else { return nil }
            let dLat = radiusMeters / MapProjection.metersPerDegree
            let dLon = dLat / max(cos(center.latitude * Double.pi / 180), 0.01)
            return GeoBox(
                minLatitude: center.latitude - dLat, maxLatitude: center.latitude + dLat,
                minLongitude: center.longitude - dLon, maxLongitude: center.longitude + dLon)
        case let .polygons(polygons):
            return GeoBox(polygons.lazy.flatMap(\.shell))
        }
    }

    /// SVG path data for the polygons' rings (shells and holes, even-odd fill), with vertices
    /// closer than `minSpacing` pixels to the previous kept one dropped. Empty when every ring
    /// collapsed below three points.
    static func pathData(_ polygons: [PolygonRings], projection: MapProjection, minSpacing: Double, stats: inout Int) -> String {
        var d = ""
        for polygon in polygons {
            for ring in [polygon.shell] + polygon.holes {
                let points = ring.filter(\.isValid).map(projection.project)
                guard points.count >= 3 else { continue }
                let kept = TrackThinner.thin(points, minSpacing: minSpacing)
                guard kept.count >= 3 else { continue }
                for (k, i) in kept.enumerated() {
                    d += (k == 0 ? "M" : "L") + SVGWriter.n(points[i].x) + " " + SVGWriter.n(points[i].y)
                }
                d += "Z"
                stats += kept.count
            }
        }
        return d
    }
}
