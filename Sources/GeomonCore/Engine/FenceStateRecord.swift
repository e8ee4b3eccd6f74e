/// The engine's persisted knowledge about one fence: a plain value the store writes and reads
/// back, so a restart continues exactly where it stopped (a dwell in progress included).
///
/// Fences without a record are in the engine's implicit state (see `EngineSnapshot`).
public struct FenceStateRecord: Hashable, Sendable {
    public var fenceID: String
    public var state: FenceState
    /// Time of the first fix that showed `state` (the enter time while inside).
    public var stateSince: UTCTime?
    /// Position and accuracy of that first fix.
    public var sinceCoordinate: Coordinate?
    public var sinceAccuracyMeters: Double?
    /// True once the dwell event of the current stay inside has fired.
    public var dwellFired: Bool
    public var pending: PendingTransition?

    public init(
        fenceID: String,
        state: FenceState,
        stateSince: UTCTime? = nil,
        sinceCoordinate: Coordinate? = nil,
        sinceAccuracyMeters: Double? = nil,
        dwellFired: Bool = false,
        pending: PendingTransition? = nil
    ) {
        self.fenceID = fenceID
        self.state = state
        self.stateSince = stateSince
        self.sinceCoordinate = sinceCoordinate
        self.sinceAccuracyMeters = sinceAccuracyMeters
        self.dwellFired = dwellFired
        self.pending = pending
    }
}
