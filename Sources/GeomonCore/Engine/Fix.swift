/// Where a fix came from: the high-power GNSS path or the low-power coarse path.
public enum FixSource: String, Hashable, Sendable {
    case gnss
    case coarse
}

/// One position report, from any source, with its horizontal accuracy: a ~95 % radius in metres
/// (the quantity gpsd reports as `eph`; see docs/sources.md for how each source derives it).
public struct Fix: Hashable, Sendable {
    public var time: UTCTime
    public var coordinate: Coordinate
    public var horizontalAccuracyMeters: Double
    public var speedMetersPerSecond: Double?
    public var courseDegrees: Double?
    public var source: FixSource

    public init(
        time: UTCTime,
        coordinate: Coordinate,
        horizontalAccuracyMeters: Double,
        speedMetersPerSecond: Double? = nil,
        courseDegrees: Double? = nil,
        source: FixSource = .gnss
    ) {
        self.time = time
        self.coordinate = coordinate
        self.horizontalAccuracyMeters = horizontalAccuracyMeters
        self.speedMetersPerSecond = speedMetersPerSecond
        self.courseDegrees = courseDegrees
        self.source = source
    }
}
