/// A WGS84 position in degrees.
public struct Coordinate: Hashable, Sendable, CustomStringConvertible {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// True when both values are finite and within [-90, 90] × [-180, 180].
    /// (A NaN or an infinity fails the bounds' comparisons.)
    public var isValid: Bool {
        abs(latitude) <= 90 && abs(longitude) <= 180
    }

    public var description: String { "(\(latitude), \(longitude))" }
}
