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
    /// Dwell events of the current stay inside fired so far (one, or with `dwell.every`
    /// one per repetition).
    public var dwellCount: Int
    /// True once the (first) dwell event of the current stay has fired.
    public var dwellFired: Bool { dwellCount > 0 }
    public var pending: PendingTransition?
    /// True while consumers were told the device is inside: an `enter` of the current stay was
    /// reported and no `exit` since. Whatever stops the fence being watched then reports the
    /// exit (docs/engine.md, "Closing a stay").
    public var reported: Bool = false
    /// The fence's name when the stay began (the exit that closes it carries the name its
    /// enter did, even when the fence was renamed or removed since).
    public var name: String?
    /// `FenceFingerprint` of the fence the stay was decided against: a fence whose name or
    /// geometry changed since is another fence for consumers.
    public var fingerprint: UInt64?

    public init(
        fenceID: String,
        state: FenceState,
        stateSince: UTCTime? = nil,
        sinceCoordinate: Coordinate? = nil,
        sinceAccuracyMeters: Double? = nil,
        dwellCount: Int = 0,
        pending: PendingTransition? = nil
    ) {
        self.fenceID = fenceID
        self.state = state
        self.stateSince = stateSince
        self.sinceCoordinate = sinceCoordinate
        self.sinceAccuracyMeters = sinceAccuracyMeters
        self.dwellCount = dwellCount
        self.pending = pending
    }
}
