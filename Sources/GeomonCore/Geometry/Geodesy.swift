#if canImport(Glibc)
import Glibc
#endif

/// Earth math on the WGS84 ellipsoid: distance, bearing and destination.
///
/// Two methods:
/// - `localDistanceMeters` etc. (`LocalMetric`): a flat-earth approximation scaled by the
///   ellipsoid's radii of curvature at the mean latitude ("cheap ruler"); a few nanoseconds,
///   within 0.1 % of the ellipsoidal distance up to ~100 km away from the poles.
/// - `distanceMeters`, `initialBearingDegrees`, `destination` (Vincenty 1975 on the ellipsoid):
///   sub-millimetre for all but nearly antipodal points; where Vincenty's iteration does not
///   converge (within ~0.5° of antipodal) a spherical estimate is returned instead.
public enum Geodesy {
    /// WGS84 semi-major axis in metres.
    public static let semiMajorAxisMeters = 6_378_137.0
    /// WGS84 flattening.
    public static let flattening = 1 / 298.257223563
    /// WGS84 semi-minor axis in metres.
    public static let semiMinorAxisMeters = semiMajorAxisMeters * (1 - flattening)
    /// First eccentricity squared.
    public static let eccentricitySquared = flattening * (2 - flattening)

    static let radiansPerDegree = Double.pi / 180

    // MARK: Fast local method

    /// Metres per degree of longitude and of latitude at `latitudeDegrees` (WGS84 radii of
    /// curvature). Valid scale factors for short distances around that latitude.

    public static func metersPerDegree(atLatitude latitudeDegrees: Double) -> (longitude: Double, latitude: Double) {
        let c = cos(latitudeDegrees * (Double.pi / 180))
        let w2 = 1 / (1 - eccentricitySquared * (1 - c * c))
        let w = w2.squareRoot()
        let m = (Double.pi / 180) * semiMajorAxisMeters
        return (m * w * c, m * w * w2 * (1 - eccentricitySquared))
    }

    /// Longitude difference `b - a` wrapped into [-180, 180).

    public static func longitudeDelta(_ a: Double, _ b: Double) -> Double {
        var d = b - a
        if d >= 180 || d < -180 { d -= 360 * ((d + 180) / 360).rounded(.down) }
        return d
    }

    /// Short-range distance in metres (flat earth at the mean latitude, WGS84 radii).
    public static func localDistanceMeters(from a: Coordinate, to b: Coordinate) -> Double {
        let k = metersPerDegree(atLatitude: (a.latitude + b.latitude) / 2)
        let dx = longitudeDelta(a.longitude, b.longitude) * k.longitude
        let dy = (b.latitude - a.latitude) * k.latitude
        return (dx * dx + dy * dy).squareRoot()
    }

    /// Short-range initial bearing in degrees clockwise from north, [0, 360).
    public static func localBearingDegrees(from a: Coordinate, to b: Coordinate) -> Double {
        let k = metersPerDegree(atLatitude: (a.latitude + b.latitude) / 2)
        let dx = longitudeDelta(a.longitude, b.longitude) * k.longitude
        let dy = (b.latitude - a.latitude) * k.latitude
        return normalizedBearing(atan2(dx, dy) / radiansPerDegree)
    }

    /// Short-range destination point.
    public static func localDestination(from a: Coordinate, bearingDegrees: Double, distanceMeters: Double) -> Coordinate {
        let t = bearingDegrees * radiansPerDegree
        let k0 = metersPerDegree(atLatitude: a.latitude)
        let lat1 = a.latitude + distanceMeters * cos(t) / k0.latitude
        let k = metersPerDegree(atLatitude: (a.latitude + lat1) / 2)
        let lat = a.latitude + distanceMeters * cos(t) / k.latitude
        let lon = a.longitude + distanceMeters * sin(t) / k.longitude
        return Coordinate(latitude: lat, longitude: normalizedLongitude(lon))
    }

    // MARK: Ellipsoidal (Vincenty)

    /// Ellipsoidal distance in metres between two points (Vincenty inverse).
    public static func distanceMeters(from a: Coordinate, to b: Coordinate) -> Double {
        inverse(a, b).distanceMeters
    }

    /// Initial bearing (forward azimuth) in degrees clockwise from north, [0, 360).
    public static func initialBearingDegrees(from a: Coordinate, to b: Coordinate) -> Double {
        inverse(a, b).initialBearingDegrees
    }

    /// Vincenty's inverse problem: distance and azimuths between two points.
    public static func inverse(_ p1: Coordinate, _ p2: Coordinate) -> (distanceMeters: Double, initialBearingDegrees: Double, finalBearingDegrees: Double) {
        let a = semiMajorAxisMeters, b = semiMinorAxisMeters, f = flattening
        let L = longitudeDelta(p1.longitude, p2.longitude) * radiansPerDegree
        let U1 = atan((1 - f) * tan(p1.latitude * radiansPerDegree))
        let U2 = atan((1 - f) * tan(p2.latitude * radiansPerDegree))
        let sinU1 = sin(U1), cosU1 = cos(U1), sinU2 = sin(U2), cosU2 = cos(U2)
        var lambda = L
        var sinSigma = 0.0, cosSigma = 1.0, sigma = 0.0, cosSqAlpha = 1.0, cos2SigmaM = 0.0
        var sinLambda = 0.0, cosLambda = 1.0
        var converged = false
        for _ in 0..<200 {
            sinLambda = sin(lambda)
            cosLambda = cos(lambda)
            let t1 = cosU2 * sinLambda
            let t2 = cosU1 * sinU2 - sinU1 * cosU2 * cosLambda
            sinSigma = (t1 * t1 + t2 * t2).squareRoot()
            if sinSigma == 0 { return (0, 0, 0) } // coincident points
            cosSigma = sinU1 * sinU2 + cosU1 * cosU2 * cosLambda
            sigma = atan2(sinSigma, cosSigma)
            let sinAlpha = cosU1 * cosU2 * sinLambda / sinSigma
            cosSqAlpha = 1 - sinAlpha * sinAlpha
            cos2SigmaM = cosSqAlpha != 0 ? cosSigma - 2 * sinU1 * sinU2 / cosSqAlpha : 0
            let C = f / 16 * cosSqAlpha * (4 + f * (4 - 3 * cosSqAlpha))
            let previous = lambda
            lambda = L + (1 - C) * f * sinAlpha * (sigma + C * sinSigma * (cos2SigmaM + C * cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)))
            if abs(lambda - previous) < 1e-12 { converged = true; break }
        }
        if !converged || !lambda.isFinite {
            // Nearly antipodal: fall back to a great-circle estimate on the mean radius.
            return (sphericalDistanceMeters(p1, p2), sphericalBearingDegrees(p1, p2), normalizedBearing(sphericalBearingDegrees(p2, p1) + 180))
        }
        let uSq = cosSqAlpha * (a * a - b * b) / (b * b)
        let A = 1 + uSq / 16384 * (4096 + uSq * (-768 + uSq * (320 - 175 * uSq)))
        let B = uSq / 1024 * (256 + uSq * (-128 + uSq * (74 - 47 * uSq)))
        let deltaSigma = B * sinSigma * (cos2SigmaM + B / 4 * (cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)
            - B / 6 * cos2SigmaM * (-3 + 4 * sinSigma * sinSigma) * (-3 + 4 * cos2SigmaM * cos2SigmaM)))
        let s = b * A * (sigma - deltaSigma)
        let azi1 = atan2(cosU2 * sinLambda, cosU1 * sinU2 - sinU1 * cosU2 * cosLambda)
        let azi2 = atan2(cosU1 * sinLambda, -sinU1 * cosU2 + cosU1 * sinU2 * cosLambda)
        return (s, normalizedBearing(azi1 / radiansPerDegree), normalizedBearing(azi2 / radiansPerDegree))
    }

    /// The point `distanceMeters` away from `start` along the geodesic with the given initial
    /// bearing (Vincenty direct).
    public static func destination(from start: Coordinate, bearingDegrees: Double, distanceMeters: Double) -> Coordinate {
        let a = semiMajorAxisMeters, b = semiMinorAxisMeters, f = flattening
        let alpha1 = bearingDegrees * radiansPerDegree
        let sinAlpha1 = sin(alpha1), cosAlpha1 = cos(alpha1)
        let tanU1 = (1 - f) * tan(start.latitude * radiansPerDegree)
        let cosU1 = 1 / (1 + tanU1 * tanU1).squareRoot(), sinU1 = tanU1 * cosU1
        let sigma1 = atan2(tanU1, cosAlpha1)
        let sinAlpha = cosU1 * sinAlpha1
        let cosSqAlpha = 1 - sinAlpha * sinAlpha
        let uSq = cosSqAlpha * (a * a - b * b) / (b * b)
        let A = 1 + uSq / 16384 * (4096 + uSq * (-768 + uSq * (320 - 175 * uSq)))
        let B = uSq / 1024 * (256 + uSq * (-128 + uSq * (74 - 47 * uSq)))
        var sigma = distanceMeters / (b * A)
        var sinSigma = 0.0, cosSigma = 1.0, cos2SigmaM = 0.0
        for _ in 0..<100 {
            cos2SigmaM = cos(2 * sigma1 + sigma)
            sinSigma = sin(sigma)
            cosSigma = cos(sigma)
            let deltaSigma = B * sinSigma * (cos2SigmaM + B / 4 * (cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)
                - B / 6 * cos2SigmaM * (-3 + 4 * sinSigma * sinSigma) * (-3 + 4 * cos2SigmaM * cos2SigmaM)))
            let previous = sigma
            sigma = distanceMeters / (b * A) + deltaSigma
            if abs(sigma - previous) < 1e-12 { break }
        }
        sinSigma = sin(sigma)
        cosSigma = cos(sigma)
        cos2SigmaM = cos(2 * sigma1 + sigma)
        let x = sinU1 * sinSigma - cosU1 * cosSigma * cosAlpha1
        let lat2 = atan2(sinU1 * cosSigma + cosU1 * sinSigma * cosAlpha1, (1 - f) * (sinAlpha * sinAlpha + x * x).squareRoot())
        let lambda = atan2(sinSigma * sinAlpha1, cosU1 * cosSigma - sinU1 * sinSigma * cosAlpha1)
        let C = f / 16 * cosSqAlpha * (4 + f * (4 - 3 * cosSqAlpha))
        let L = lambda - (1 - C) * f * sinAlpha * (sigma + C * sinSigma * (cos2SigmaM + C * cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)))
        return Coordinate(latitude: lat2 / radiansPerDegree,
                          longitude: normalizedLongitude(start.longitude + L / radiansPerDegree))
    }

    // MARK: Helpers

    /// Great-circle distance on the sphere of mean radius 6,371,008.8 m (haversine): the one
    /// spherical distance geomon uses (significant-change moves, jump screening, stationary
    /// radius, receiver and coarse models).
    public static func haversineMeters(_ a: Coordinate, _ b: Coordinate) -> Double {
        sphericalDistanceMeters(a, b)
    }

    /// The point `distanceMeters` from `origin` along the initial bearing, on the same sphere.
    public static func sphericalDestination(from origin: Coordinate, bearingDegrees: Double, distanceMeters: Double) -> Coordinate {
        if distanceMeters == 0 { return origin }
        let r = 6_371_008.8
        let delta = distanceMeters / r
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

    static func sphericalDistanceMeters(_ a: Coordinate, _ b: Coordinate) -> Double {
        let r = 6_371_008.8
        let dLat = (b.latitude - a.latitude) * radiansPerDegree
        let dLon = longitudeDelta(a.longitude, b.longitude) * radiansPerDegree
        let h = sin(dLat / 2) * sin(dLat / 2) + cos(a.latitude * radiansPerDegree) * cos(b.latitude * radiansPerDegree) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * r * asin(min(1, h.squareRoot()))
    }

    static func sphericalBearingDegrees(_ a: Coordinate, _ b: Coordinate) -> Double {
        let p1 = a.latitude * radiansPerDegree, p2 = b.latitude * radiansPerDegree
        let dl = longitudeDelta(a.longitude, b.longitude) * radiansPerDegree
        let y = sin(dl) * cos(p2)
        let x = cos(p1) * sin(p2) - sin(p1) * cos(p2) * cos(dl)
        return normalizedBearing(atan2(y, x) / radiansPerDegree)
    }

    /// Bearing folded into [0, 360).
    public static func normalizedBearing(_ degrees: Double) -> Double {
        var d = degrees.truncatingRemainder(dividingBy: 360)
        if d < 0 { d += 360 }
        return d >= 360 ? 0 : d
    }

    /// Longitude folded into [-180, 180).
    public static func normalizedLongitude(_ degrees: Double) -> Double {
        var d = (degrees + 180).truncatingRemainder(dividingBy: 360)
        if d < 0 { d += 360 }
        return d - 180
    }
}
