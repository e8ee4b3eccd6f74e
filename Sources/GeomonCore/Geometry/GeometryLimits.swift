/// Latitude beyond which fences are not supported (the local metric and longitude-straight
/// edges degenerate near the poles).
public let geometryMaxLatitudeDegrees = 85.0

/// Problems with a fence shape that the geometry code cannot handle correctly, as messages for
/// the profile validator. Empty when the shape is fine.
///
/// Reported: non-finite coordinates, positions beyond ±85° latitude (circles: any part of the
/// circle), circles with a radius over 1,000 km, rings that encircle a pole (their longitudes
/// do not close after unwrapping) and fences wider than 180° of longitude.
public func geometryLimitProblems(_ shape: FenceShape) -> [String] {
    var problems: [String] = []
    let maxLat = geometryMaxLatitudeDegrees
    switch shape {
    case let .circle(center, radius):
        guard center.latitude.isFinite, center.longitude.isFinite, radius.isFinite else {
            return ["circle has a non-finite centre or radius"]
        }
        if radius > 1_000_000 {
            problems.append("circle radius \(radius) m is over the supported 1000 km")
        }
        let k = Geodesy.metersPerDegree(atLatitude: center.latitude)
        let reach = abs(center.latitude) + max(0, radius) / k.latitude
        if reach > maxLat {
            problems.append("circle reaches latitude \(rounded(reach))°, beyond the supported ±\(Int(maxLat))° (fences near the poles are not supported)")
        }
    case let .polygons(members):
        var minLon = Double.infinity, maxLon = -Double.infinity
        var reference: Double?
        for (m, member) in members.enumerated() {
            for (r, ring) in ([member.shell] + member.holes).enumerated() {
                let name = r == 0 ? "polygon \(m + 1) shell" : "polygon \(m + 1) hole \(r)"
                guard ring.allSatisfy({ $0.latitude.isFinite && $0.longitude.isFinite }) else {
                    problems.append("\(name) has a non-finite coordinate")
                    continue
                }
                guard let first = ring.first else { continue }
                if let worst = ring.map({ abs($0.latitude) }).max(), worst > maxLat {
                    problems.append("\(name) reaches latitude \(rounded(worst))°, beyond the supported ±\(Int(maxLat))° (fences near the poles are not supported)")
                }
                var lon = first.longitude
                if let reference { lon += 360 * ((reference - lon + 180) / 360).rounded(.down) } else { reference = lon }
                let start = lon
                minLon = min(minLon, lon); maxLon = max(maxLon, lon)
                var previous = first
                for point in ring.dropFirst() + [first] {
                    lon += Geodesy.longitudeDelta(previous.longitude, point.longitude)
                    minLon = min(minLon, lon); maxLon = max(maxLon, lon)
                    previous = point
                }
                if abs(lon - start) > 1e-9 {
                    problems.append("\(name) encircles a pole (its longitudes wind around the globe); split it or keep fences within ±\(Int(maxLat))°")
                }
            }
        }
        if maxLon - minLon > 180 {
            problems.append("fence spans \(rounded(maxLon - minLon))° of longitude, over the supported 180° (edges that change longitude by more than 180° are taken to cross the antimeridian)")
        }
    }
    return problems
}

private func rounded(_ value: Double) -> String {
    let r = (value * 100).rounded() / 100
    return "\(r)"
}
