/// The last reported `location` event's position and time (significant-change reference).
public struct LocationReference: Hashable, Sendable {
    public var time: UTCTime
    public var coordinate: Coordinate

    public init(time: UTCTime, coordinate: Coordinate) {
        self.time = time
        self.coordinate = coordinate
    }
}
