/// Latitude beyond which fences are not supported (the local metric and longitude-straight
/// edges degenerate near the poles).
public let geometryMaxLatitudeDegrees = 85.0

/// The largest circle radius supported (metres).
public let geometryMaxCircleRadiusMeters = 1_000_000.0

/// A fence shape the geometry code cannot handle correctly (worded by `GeomonFormat`).
public enum GeometryLimitProblem: Hashable, Sendable {
    /// Which ring: the shell or a hole (1-based) of a member (1-based).
    public struct Ring: Hashable, Sendable {
        public var member: Int
        /// 0 for the shell.
        public var hole: Int
    }

    case circleNotFinite
    case circleTooLarge(radiusMeters: Double)
    /// The latitude the circle reaches towards its nearer pole (signed, at most ±90).
    case circleReachesLatitude(Double)
    case ringNotFinite(Ring)
    case ringReachesLatitude(Ring, Double)
    case ringEncirclesPole(Ring)
    case spansLongitude(Double)
    case corridorNotFinite
    /// A corridor line with fewer than 2 distinct points (1-based line number).
    case corridorLineTooShort(line: Int)
    case corridorTooWide(widthMeters: Double)
    /// The latitude the corridor reaches towards its nearer pole (signed, at most ±90).
    case corridorReachesLatitude(Double)
}

/// Problems with a fence shape that the geometry code cannot handle correctly. Empty when the
/// shape is fine.
///
/// Reported: non-finite coordinates, positions beyond ±85° latitude (circles: any part of the
/// circle), circles with a radius over 1,000 km, rings that encircle a pole (their longitudes
/// do not close after unwrapping) and fences wider than 180° of longitude.
public func geometryLimitProblems(_ shape: FenceShape) -> [GeometryLimitProblem] {
    var problems: [GeometryLimitProblem] = []
    let maxLat = geometryMaxLatitudeDegrees
    switch shape {
    case let .circle(center, radius):
        guard center.latitude.isFinite, center.longitude.isFinite, radius.isFinite else {
            return [.circleNotFinite]
        }
        if radius > geometryMaxCircleRadiusMeters {
            problems.append(.circleTooLarge(radiusMeters: radius))
        }
        let k = Geodesy.metersPerDegree(atLatitude: center.latitude)
        let reach = min(90, abs(center.latitude) + max(0, radius) / k.latitude)
        if reach > maxLat {
            problems.append(.circleReachesLatitude(center.latitude < 0 ? -reach : reach))
        }
    case let .corridor(lines, width):
        guard width.isFinite, lines.allSatisfy({ $0.allSatisfy { $0.latitude.isFinite && $0.longitude.isFinite } }) else {
            return [.corridorNotFinite]
        }
        for (n, line) in lines.enumerated() where Set(line).count < 2 {
            problems.append(.corridorLineTooShort(line: n + 1))
        }
        if width / 2 > geometryMaxCircleRadiusMeters { problems.append(.corridorTooWide(widthMeters: width)) }
        var worst = 0.0, worstSigned = 0.0
        var minLon = Double.infinity, maxLon = -Double.infinity
        var reference: Double?
        for line in lines {
            guard let first = line.first else { continue }
            var lon = first.longitude
            if let reference { lon += 360 * ((reference - lon + 180) / 360).rounded(.down) } else { reference = lon }
            var previous = first
            for (k, point) in line.enumerated() {
                // Every point after the first, one equal to it (a corridor back through its start) too.
                if k > 0 { lon += Geodesy.longitudeDelta(previous.longitude, point.longitude) }
                previous = point
                minLon = min(minLon, lon); maxLon = max(maxLon, lon)
                let reach = abs(point.latitude) + max(0, width / 2) / Geodesy.metersPerDegree(atLatitude: point.latitude).latitude
                if reach > worst { worst = reach; worstSigned = point.latitude < 0 ? -reach : reach }
            }
        }
        if worst > maxLat { problems.append(.corridorReachesLatitude(max(-90, min(90, worstSigned)))) }
        if maxLon - minLon > 180 { problems.append(.spansLongitude(maxLon - minLon)) }
    case let .polygons(members):
        var minLon = Double.infinity, maxLon = -Double.infinity
        var reference: Double?
        // One pass per ring, closing back to its first vertex: whether every position is
        // finite, the latitude reached and the unwrapped longitude span. A ring with a position
        // that is not finite counts only as that (nothing of it goes into the span).
        func check(_ ring: [Coordinate], _ which: GeometryLimitProblem.Ring) {
            ring.withUnsafeBufferPointer { r in
                guard let first = r.first else { return }
                // Stays zero while every value is finite (x × 0 is NaN for an infinity or a NaN).
                var notFinite = first.latitude * 0 + first.longitude * 0
                var worst = 0.0
                var lon = first.longitude
                let shifted = reference.map { lon + 360 * (($0 - lon + 180) / 360).rounded(.down) } ?? lon
                lon = shifted
                var ringMin = lon, ringMax = lon
                var previous = first.longitude
                // Extremes as selects rather than `max`/`min`, whose NaN rules cost more (a ring
                // with a value that is not finite is set aside whole below).
                for k in 1...r.count {
                    let point = r[k == r.count ? 0 : k]
                    notFinite += point.latitude * 0 + point.longitude * 0
                    let reach = abs(point.latitude)
                    worst = reach > worst ? reach : worst
                    lon += Geodesy.longitudeDelta(previous, point.longitude)
                    ringMin = lon < ringMin ? lon : ringMin
                    ringMax = lon > ringMax ? lon : ringMax
                    previous = point.longitude
                }
                guard notFinite == 0 else {
                    problems.append(.ringNotFinite(which))
                    return
                }
                if reference == nil { reference = shifted }
                minLon = min(minLon, ringMin); maxLon = max(maxLon, ringMax)
                if worst > maxLat {
                    problems.append(.ringReachesLatitude(which, worst))
                }
                if abs(lon - shifted) > 1e-9 {
                    problems.append(.ringEncirclesPole(which))
                }
            }
        }
        for (m, member) in members.enumerated() {
            check(member.shell, GeometryLimitProblem.Ring(member: m + 1, hole: 0))
            for (h, hole) in member.holes.enumerated() {
                check(hole, GeometryLimitProblem.Ring(member: m + 1, hole: h + 1))
            }
        }
        if maxLon - minLon > 180 {
            problems.append(.spansLongitude(maxLon - minLon))
        }
    }
    return problems
}
