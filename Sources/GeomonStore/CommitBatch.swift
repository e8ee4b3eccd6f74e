public import GeomonCore

/// Everything one transaction writes: fixes, the engine's changed state, events and their
/// delivery rows. Either all of it is committed or none.
public struct CommitBatch: Sendable {
    public var profileName: String
    public var fixes: [Fix] = []
    public var changes: EngineChanges = EngineChanges()
    public var events: [(event: GeoEvent, targets: [DeliveryTarget])] = []
    /// Engine scalars (last fix time, usable fix count, location reference).
    public var usableFixCount: Int = 0
    public var lastFixTime: UTCTime?
    public var location: LocationReference?
    /// GNSS receiver switches since the last batch, in order.
    public var receiverSwitches: [ReceiverSwitch] = []
    /// Moves the stored receiver switches after this row by this much, before the new ones
    /// are written: the ones a run stored on the system clock before its first fix, once that
    /// fix put the run on the receiver's time (`EventStore.receiverLogLastRow`).
    public var receiverLogShift: (afterRow: Int64, by: Duration)?
    /// Messages to publish (MQTT), in order; one that carries an event is written only with
    /// that event (a re-decided event that is already stored adds nothing).
    public var publications: [Publication] = []
    /// The running daemon's status, when it changed.
    public var runtimeStatus: RuntimeStatus?
    /// What a fence without a record is taken to be, once the engine knows.
    public var implicitState: FenceState?
    /// The power policy's watch on its assumptions, when it changed.
    public var assumptions: AssumptionState?
    /// The movement rules' state, when it changed.
    public var movement: MovementState?
    /// The fences' cooldown records, when they changed.
    public var cooldowns: [CooldownRecord]?
    /// Speeding in progress, when it changed.
    public var speeding: [SpeedingRecord]?
    /// The mode state, when it changed.
    public var mode: ModeState?
    /// When the batch is committed (wall clock or virtual), for `updated_at`.
    public var committedAt: UTCTime

    public init(profileName: String, committedAt: UTCTime) {
        self.profileName = profileName
        self.committedAt = committedAt
    }

    public var isEmpty: Bool { fixes.isEmpty && changes.isEmpty && events.isEmpty && implicitState == nil && assumptions == nil && movement == nil && cooldowns == nil && speeding == nil && mode == nil && receiverSwitches.isEmpty && publications.isEmpty && receiverLogShift == nil && runtimeStatus == nil }
}
