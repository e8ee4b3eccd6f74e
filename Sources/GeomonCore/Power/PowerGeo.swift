#if canImport(Glibc)
import Glibc
#endif

/// Small spherical-earth helpers for the power policy and the replay models.
enum PowerGeo {
    static let earthRadiusMeters = 6_371_008.8
    static let radiansPerDegree = Double.pi / 180

    /// Great-circle (haversine) distance in metres.
    static func distance(_ a: Coordinate, _ b: Coordinate) -> Double {
        let dLat = (b.latitude - a.latitude) * radiansPerDegree
        let dLon = (b.longitude - a.longitude) * radiansPerDegree
        let s1 = sin(dLat / 2), s2 = sin(dLon / 2)
        let h = s1 * s1 + cos(a.latitude * radiansPerDegree) * cos(b.latitude * radiansPerDegree) * s2 * s2
        return 2 * earthRadiusMeters * asin(min(1, h.squareRoot()))
    }

    /// The point `distanceMeters` from `origin` along the initial bearing (spherical earth).
    static func destination(from origin: Coordinate, bearingDegrees: Double, distanceMeters: Double) -> Coordinate {
        if distanceMeters == 0 { return origin }
        let delta = distanceMeters / earthRadiusMeters
        let theta = bearingDegrees * radiansPerDegree
        let phi1 = origin.latitude * radiansPerDegree
        let lambda1 = origin.longitude * radiansPerDegree
        let sinPhi2 = sin(phi1) * cos(delta) + cos(phi1) * sin(delta) * cos(theta)
        let phi2 = asin(max(-1, min(1, sinPhi2)))
        let lambda2 = lambda1 + atan2(sin(theta) * sin(delta) * cos(phi1), cos(delta) - sin(phi1) * sinPhi2)
        var lon = lambda2 / radiansPerDegree
        lon = (lon + 540).truncatingRemainder(dividingBy: 360) - 180
        return Coordinate(latitude: phi2 / radiansPerDegree, longitude: lon)
    }

    /// Linear interpolation between two coordinates (fine for the ≤ 10 s gaps it is used on).
    static func interpolate(_ a: Coordinate, _ b: Coordinate, fraction: Double) -> Coordinate {
        Coordinate(
            latitude: a.latitude + (b.latitude - a.latitude) * fraction,
            longitude: a.longitude + (b.longitude - a.longitude) * fraction
        )
    }
}
