public import GeomonCore
public import GeomonStore

/// Where a fence placed at run time goes (`geomon fences here`, the MQTT `placeFence`): the
/// mean of the last fixes while the device stood still.
public enum AnchorPosition {
    /// How far back the fixes are looked for, and the most that are averaged.
    public static let window: Duration = .seconds(300)
    public static let maxFixes = 60
    /// A fix reporting this speed or more shows the device moving (`movement.moving_speed`'s default).
    public static let movingSpeed = 1.0

    public struct Found: Sendable {
        public var center: Coordinate
        /// How many fixes were averaged, and the newest.
        public var fixes: Int
        public var last: Fix
    }

    /// From the newest stored fix back (within `window`, at most `maxFixes`): each fix within
    /// both accuracies of the newest and not reporting movement, down to the first that is
    /// not; their mean. Fixes less accurate than `maxAccuracyMeters` are skipped. nil without a
    /// usable fix.
    public static func find(in store: EventStore, maxAccuracyMeters: Double = .infinity) throws -> Found? {
        guard let newest = try store.fixLog.last() else { return nil }
        var recent: [Fix] = []
        try store.fixLog.forEach(since: newest.time - window) { fix in
            if fix.coordinate.isValid, fix.horizontalAccuracyMeters <= maxAccuracyMeters { recent.append(fix) }
        }
        guard let last = recent.last else { return nil }
        var taken: [Fix] = []
        for fix in recent.reversed() {
            if taken.count >= maxFixes { break }
            if let speed = fix.speedMetersPerSecond, speed >= movingSpeed { break }
            let d = Geodesy.distanceMeters(from: last.coordinate, to: fix.coordinate)
            if d > last.horizontalAccuracyMeters + fix.horizontalAccuracyMeters { break }
            taken.append(fix)
        }
        if taken.isEmpty { taken = [last] }
        let n = Double(taken.count)
        let lat = taken.reduce(0) { $0 + $1.coordinate.latitude } / n
        let dLon = taken.reduce(0) { $0 + Geodesy.longitudeDelta(last.coordinate.longitude, $1.coordinate.longitude) } / n
        return Found(center: Coordinate(latitude: lat, longitude: Geodesy.normalizedLongitude(last.coordinate.longitude + dLon)),
                     fixes: taken.count, last: last)
    }
}
