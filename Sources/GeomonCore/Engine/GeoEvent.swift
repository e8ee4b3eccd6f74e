/// A decided event: a fence transition, a dwell, or a significant location change.
///
/// Its `id` is stable (derived from the profile, fence, kind and the fix time, never random),
/// so replays are byte-identical and hooks can be idempotent (`GEOMON_EVENT_ID`).
public struct GeoEvent: Hashable, Sendable {
    public var id: String
    public var kind: EventKind
    /// The fence's id; nil for `location` events.
    public var fenceID: String?
    public var fenceName: String?
    /// Time of the first fix that showed the new state.
    public var time: UTCTime
    public var coordinate: Coordinate
    public var accuracyMeters: Double
    /// Which rule fired, with its numbers (worded by the shell).
    public var rule: EventRule
    /// An `approach` event's figures (also when its rule was read back as words).
    public var approach: EventRule.Approach?
    /// A movement event's figures, and an exit's time inside (also when read back).
    public var figures: EventFigures? {
        get { figuresBox?.value }
        set { figuresBox = newValue.map(Boxed.init) }
    }
    private var figuresBox: Boxed<EventFigures>?
    /// Stored but not delivered: the fence's cooldown held it back (`Cooldown`).
    public var suppressed = false
    /// An exit its fence's `events` leave out, decided only to end a stay whose enter was
    /// reported: published to MQTT (the OwnTracks `leave` that Home Assistant waits for),
    /// stored and listed, but no hook runs for it.
    public var unlisted = false

    /// Whether the event has a position: a `mode` change before the first fix has none (its
    /// accuracy is infinite, its coordinate meaningless).
    public var hasPosition: Bool { accuracyMeters.isFinite }

    public init(
        id: String,
        kind: EventKind,
        fenceID: String?,
        fenceName: String? = nil,
        time: UTCTime,
        coordinate: Coordinate,
        accuracyMeters: Double,
        rule: EventRule
    ) {
        self.id = id
        self.kind = kind
        self.fenceID = fenceID
        self.fenceName = fenceName
        self.time = time
        self.coordinate = coordinate
        self.accuracyMeters = accuracyMeters
        self.rule = rule
    }
}
