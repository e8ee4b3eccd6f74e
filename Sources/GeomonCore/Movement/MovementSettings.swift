/// `movement:` in a profile: events about movement itself, with no fence needed
/// (docs/engine.md, "Movement").
///
/// - `motion`: `moving` and `still` when the motion state changes.
/// - `trips`: `trip_start` when the device leaves the place it stood, `trip_end` once it has
///   stayed within `radius` of one point for `stop_after` (shorter stops do not split a trip).
/// - `visits`: `arrival` once the device has stayed within `radius` of one point for
///   `min_duration`, `departure` when it is seen beyond it.
public struct MovementSettings: Hashable, Sendable {
    /// `movement.motion`: report `moving` and `still`.
    public var motionEvents = false
    /// A GNSS fix reporting at least this speed shows movement (`movement.moving_speed`). The
    /// default, 1 m/s, lies below walking (slow pedestrians walk at about 1.1 m/s, the design
    /// figure is 1.2 m/s) and above the Doppler speed noise of a receiver at rest (≤ 0.5 m/s).
    public var movingSpeedMetersPerSecond = 1.0
    /// How long GNSS evidence of a new motion state must hold before it counts
    /// (`movement.confirm`). A motion source's word counts at once: its window confirmed it.
    public var confirm: Duration = .seconds(30)
    public var trips: TripSettings?
    public var visits: VisitSettings?

    public init() {}

    /// A stay counts up to the first fix beyond its radius when that fix came at most this long
    /// after the last one inside (the device cannot have left much earlier); after a longer
    /// gap it counts up to the last fix inside. 15 min is trackintel's `gap_threshold`.
    public static let leaveGap: Duration = .seconds(900)

    /// Whether the profile asks for any movement event (the tracker runs only then).
    public var isEnabled: Bool { motionEvents || trips != nil || visits != nil }
}

/// `movement.trips`.
public struct TripSettings: Hashable, Sendable {
    /// A stop this long ends the trip (`stop_after`).
    public var stopAfter: Duration = .seconds(300)
    /// A stop is a stay within this distance of its first fix (`radius`).
    public var radiusMeters = 100.0

    public init(stopAfter: Duration = .seconds(300), radiusMeters: Double = 100) {
        self.stopAfter = stopAfter
        self.radiusMeters = radiusMeters
    }
}

/// `movement.visits`.
public struct VisitSettings: Hashable, Sendable {
    public var radiusMeters = 100.0
    public var minDuration: Duration = .seconds(300)

    public init(radiusMeters: Double = 100, minDuration: Duration = .seconds(300)) {
        self.radiusMeters = radiusMeters
        self.minDuration = minDuration
    }
}

/// The figures a movement event or an exit carries (all optional; each kind fills its own).
/// The shell encodes them (`GeomonFormat`'s `EventFigures.members`); the store keeps them.
public struct EventFigures: Hashable, Sendable {
    /// `moving`/`still`: what decided (`gnss` or `motion`).
    public var source: String?
    /// `exit` (and a closing exit): how long the device was inside the fence.
    public var insideSeconds: Double?
    /// `trip_end`: when the trip began; `departure`: when the visit began.
    public var since: UTCTime?
    /// `trip_end`, `departure`: the trip's or the visit's duration.
    public var durationSeconds: Double?
    /// `trip_end`: the distance, the sum of the straight segments between the fixes taken
    /// (a lower bound while the receiver sleeps), the time spent moving and the speeds.
    public var distanceMeters: Double?
    public var movingSeconds: Double?
    public var maxSpeedMetersPerSecond: Double?
    public var meanSpeedMetersPerSecond: Double?
    /// `trip_start`, `trip_end`: where the trip began (and, for `trip_end`, where it ended:
    /// the event's own position).
    public var start: Coordinate?
    /// `arrival`, `departure`: the visit's centre (the mean of its fixes) and radius.
    public var center: Coordinate?
    public var radiusMeters: Double?
    /// `overspeed`, `overspeed_end`: the fence's speed limit.
    public var limitMetersPerSecond: Double?
    /// `mode`: the entry now in effect, the one before, what changed, and the power supply
    /// as last reported.
    public var mode: String?
    public var modeFrom: String?
    public var modeCause: ModeCause?
    public var batteryPercent: Int?
    public var externalPower: Bool?

    public init() {}

    public var isEmpty: Bool { self == EventFigures() }
}
