/// Everything the transition engine needs to continue after a restart, as plain values.
///
/// Fences without a record are in the implicit state: `unknown` while fewer than
/// `transitions.confirm` usable fixes have been processed, `outside` afterwards (every usable
/// fix that did not touch a fence was certainly outside it, so its count equals the global one).
public struct EngineSnapshot: Hashable, Sendable {
    /// Records of fences that are inside, unknown-but-touched, or have a pending change.
    public var records: [FenceStateRecord]
    /// Usable fixes processed (capped at a large value; only `>= confirm` matters).
    public var usableFixCount: Int
    /// The implicit state was `outside` (`confirm` usable fixes were processed under the
    /// profile of the time): it stays so after a reload that raises `confirm`.
    public var implicitOutside: Bool
    /// Time of the last processed fix; older or equal fixes are ignored.
    public var lastFixTime: UTCTime?
    /// Latest virtual or real time the engine has seen (fixes and deadlines).
    public var lastInputTime: UTCTime?
    /// Reference of the significant-change (`location`) events.
    public var location: LocationReference?
    /// Approach state of the fences with `approach:` near the device.
    public var approaches: [ApproachRecord]
    /// The power policy's watch on its assumptions: bounds widened for the trip, violations.
    public var assumptions = AssumptionState()
    /// The movement rules' state (motion, trip, stays, odometer).
    public var movement = MovementState()
    /// The fences' cooldowns (`cooldown:`).
    public var cooldowns: [CooldownRecord] = []
    /// Speeding in progress in fences with `speed_limit:`.
    public var speeding: [SpeedingRecord] = []
    /// The mode in effect and its inputs (`modes:`); nil before any was stored.
    public var mode: ModeState?

    public init(
        records: [FenceStateRecord] = [],
        usableFixCount: Int = 0,
        implicitOutside: Bool = false,
        lastFixTime: UTCTime? = nil,
        lastInputTime: UTCTime? = nil,
        location: LocationReference? = nil,
        approaches: [ApproachRecord] = []
    ) {
        self.approaches = approaches
        self.records = records
        self.usableFixCount = usableFixCount
        self.implicitOutside = implicitOutside
        self.lastFixTime = lastFixTime
        self.lastInputTime = lastInputTime
        self.location = location
    }
}
