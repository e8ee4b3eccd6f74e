/// A state change that certain fixes have started to show but that is not confirmed yet.
///
/// `first*` describe the first fix that showed the new state: the event, once confirmed,
/// carries its time and position.
public struct PendingTransition: Hashable, Sendable {
    public var state: FenceState
    /// Consecutive certain fixes that showed `state` so far.
    public var count: Int
    public var firstTime: UTCTime
    public var firstCoordinate: Coordinate
    public var firstAccuracyMeters: Double
    /// Signed distance of the first fix to the boundary (negative inside), for the rule text.
    public var firstSignedDistanceMeters: Double

    public init(
        state: FenceState,
        count: Int,
        firstTime: UTCTime,
        firstCoordinate: Coordinate,
        firstAccuracyMeters: Double,
        firstSignedDistanceMeters: Double
    ) {
        self.state = state
        self.count = count
        self.firstTime = firstTime
        self.firstCoordinate = firstCoordinate
        self.firstAccuracyMeters = firstAccuracyMeters
        self.firstSignedDistanceMeters = firstSignedDistanceMeters
    }
}
