/// `modes:` — one entry of the ordered list: when its conditions hold (and no earlier entry's
/// do), the profile runs with its changes (docs/engine.md, "Modes").
public struct ModeRule: Sendable {
    /// The name the profile's own settings go by when no entry holds; no entry may take it.
    public static let fallbackName = "default"

    public var name: String
    public var when: ModeCondition
    /// `mode:`: the monitoring mode (nil: the profile's).
    public var mode: MonitoringMode?
    /// `policy:`: the profile's policy with the entry's keys set over it (nil: the profile's).
    public var policy: PolicySettings?
    /// `publish: {mqtt: {locations:}}` (nil: the profile's).
    public var mqttLocations: MQTTSettings.Locations?
    /// `coarse:`: whether the coarse source runs (nil: as the monitoring mode has it; `false`
    /// keeps it off).
    public var coarse: Bool?
    /// Where the entry is in the profile (for diagnostics).
    public var location: SourceLocation?

    public init(name: String, when: ModeCondition = ModeCondition(), mode: MonitoringMode? = nil) {
        self.name = name
        self.when = when
        self.mode = mode
    }
}

/// `when:` of a mode: every condition given must hold (none given: always).
public struct ModeCondition: Hashable, Sendable {
    /// A mains or USB supply is online (`true`) or none is (`false`).
    public var externalPower: Bool?
    /// The battery's capacity is below this percentage (with hysteresis: `ModeSelector`).
    public var batteryBelow: Int?
    /// The battery's capacity is above this percentage (with hysteresis).
    public var batteryAbove: Int?
    /// The motion source senses this activity.
    public var activity: Activity?
    /// The device is moving (`true`) or still (`false`), as the movement rules or the motion
    /// source decide it.
    public var moving: Bool?
    /// Local-time windows, as fences' `active:` (in the profile's `timezone`).
    public var active: FenceSchedule?

    public init(externalPower: Bool? = nil, batteryBelow: Int? = nil, batteryAbove: Int? = nil,
                activity: Activity? = nil, moving: Bool? = nil, active: FenceSchedule? = nil) {
        self.externalPower = externalPower
        self.batteryBelow = batteryBelow
        self.batteryAbove = batteryAbove
        self.activity = activity
        self.moving = moving
        self.active = active
    }

    /// No condition: the entry always holds.
    public var isEmpty: Bool { self == ModeCondition() }

    /// Whether the entry has a battery threshold.
    public var hasBattery: Bool { batteryBelow != nil || batteryAbove != nil }

    /// Whether every situation this condition holds in is one `other` holds in too: an entry
    /// after `other` with this condition is never reached.
    public func isCovered(by other: ModeCondition) -> Bool {
        func covers<T: Equatable>(_ mine: T?, _ theirs: T?) -> Bool { theirs == nil || mine == theirs }
        guard covers(externalPower, other.externalPower), covers(activity, other.activity),
              covers(moving, other.moving), covers(active, other.active) else { return false }
        // Below B holds whenever below b ≤ B does; above A whenever above a ≥ A does.
        if let theirs = other.batteryBelow {
            guard let mine = batteryBelow, mine <= theirs else { return false }
        }
        if let theirs = other.batteryAbove {
            guard let mine = batteryAbove, mine >= theirs else { return false }
        }
        return true
    }

    /// No capacity satisfies both battery thresholds (`battery_above: A` with
    /// `battery_below: B` and `B ≤ A + 1`).
    public var isContradictory: Bool {
        guard let below = batteryBelow, let above = batteryAbove else { return false }
        return below <= above + 1
    }
}

/// What the kernel's power-supply class says: the battery's capacity and whether external
/// power is online. An input of the machine like a fix (`Monitor.supplyReported`).
public struct PowerSupplyReading: Hashable, Sendable {
    /// The battery's capacity in percent (0–100); nil: no battery reports one.
    public var capacity: Int?
    /// A mains or USB supply is online; nil: unknown.
    public var online: Bool?

    public init(capacity: Int? = nil, online: Bool? = nil) {
        self.capacity = capacity
        self.online = online
    }

    /// Whether external power is online, from the (`type`, `online`) attributes of the
    /// power-supply class's entries: a mains or USB supply says `online` 1 (or 2, a
    /// programmable USB-PD supply; any number above 0); with entries but none such, it is not
    /// (a battery alone is not external power); with no entries at all it is (a machine without
    /// a gauge — a desktop, most single-board computers — runs on external power). The one
    /// rule for `modes:` and hooks' `when: {external_power}`.
    public static func externalPowerOnline(supplies: [(type: String, online: String?)]) -> Bool {
        if supplies.isEmpty { return true }
        return supplies.contains { supply in
            guard isExternal(type: String(supply.type.trimmingWhitespace())),
                  let online = supply.online.flatMap({ Int($0.trimmingWhitespace()) }) else { return false }
            return online > 0
        }
    }

    /// A mains or USB supply's `type` (`Mains`, `USB`, `USB_C`, `USB_PD`, …).
    public static func isExternal(type: String) -> Bool {
        type == "Mains" || type.hasPrefix("USB")
    }
}

/// What changed when the mode did (`mode` events: `cause`).
public enum ModeCause: String, Hashable, Sendable, CaseIterable {
    /// The machine started (or the profile was reloaded) in a mode other than the stored one.
    case start
    case externalPower = "external_power"
    case battery
    case activity
    case moving
    /// An `active:` window opened or closed.
    case time
}

/// The mode state the store keeps (`engine_state.mode`): the entry in effect and the inputs
/// it was chosen on, so a restart resumes in it.
public struct ModeState: Hashable, Sendable {
    /// The entry in effect (`ModeRule.fallbackName`: the profile's own settings).
    public var name: String = ModeRule.fallbackName
    /// When it took effect (nil: since before any switch).
    public var since: UTCTime?
    /// The last power-supply reading.
    public var supply: PowerSupplyReading?
    /// Entries whose battery threshold held at the last evaluation (the hysteresis' memory),
    /// sorted.
    public var batteryHeld: [String] = []
    /// The activity the motion source sensed and whether the device moved, as last told (a
    /// restart or reload chooses on them until the inputs speak again).
    public var activity: Activity?
    public var moving: Bool?

    public init(name: String = ModeRule.fallbackName, since: UTCTime? = nil, supply: PowerSupplyReading? = nil, batteryHeld: [String] = []) {
        self.name = name
        self.since = since
        self.supply = supply
        self.batteryHeld = batteryHeld
    }
}
