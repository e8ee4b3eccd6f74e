/// Chooses the mode (`modes:`): the first entry whose conditions hold, else the profile's own
/// settings. Pure: the inputs (the power supply, the sensed activity, whether the device
/// moves, the time) come from `Monitor`, which switches the policy when the choice changes.
///
/// Battery thresholds have hysteresis: `battery_below: B` starts to hold below `B` and holds
/// until the capacity is back at `B + hysteresis` or more; `battery_above: A` starts above
/// `A` and holds until the capacity is at `A − hysteresis` or less. Fuel gauges report whole
/// percent and step back by one or two under a changing load (a modem transmitting, a
/// receiver acquiring), so a 2-point band keeps one load step from switching the mode back
/// and forth.
public struct ModeSelector: Sendable {
    /// Percentage points a battery threshold must be passed by the other way to stop holding.
    public static let batteryHysteresis = 2

    public let rules: [ModeRule]
    private let zone: TimeZoneRules
    public private(set) var state: ModeState
    private var changed = false
    /// The last time the conditions were evaluated (for the next window change).
    private var evaluatedAt: UTCTime?
    /// When an `active:` window of an entry opens or closes next.
    public private(set) var nextDeadline: UTCTime?

    public init(rules: [ModeRule], zone: TimeZoneRules, state: ModeState?) {
        self.rules = rules
        self.zone = zone
        self.state = state ?? ModeState()
        readsMoving = rules.contains { $0.when.moving != nil }
    }

    /// Whether the profile has `modes:`.
    public var isEnabled: Bool { !rules.isEmpty }

    /// The entry in effect; nil: the profile's own settings.
    public var current: ModeRule? { rules.first { $0.name == state.name } }

    /// Whether an entry reads whether the device moves (the machine then tells it after fixes).
    public let readsMoving: Bool

    /// A profile without `modes:` forgets the mode a profile with them stored (and the inputs
    /// it was chosen on): none is in effect, and modes added back later choose on the inputs
    /// as they speak again, not on ones stored long before.
    public mutating func forgetWhenDisabled() {
        guard !isEnabled, state != ModeState() else { return }
        state = ModeState()
        changed = true
    }

    /// The state to store, when it changed since the last call.
    public mutating func takeState() -> ModeState? {
        guard changed else { return nil }
        changed = false
        return state
    }

    // MARK: - Inputs

    /// Chooses at start (a stored mode the profile no longer has, or whose conditions no
    /// longer hold on the stored inputs, changes at once).
    public mutating func start(now: UTCTime) -> ModeChange? {
        evaluate(cause: .start, now: now)
    }

    public mutating func supplyReported(_ supply: PowerSupplyReading, now: UTCTime) -> ModeChange? {
        guard supply != state.supply else { return nil }
        let cause: ModeCause = supply.online != state.supply?.online ? .externalPower : .battery
        state.supply = supply
        changed = true
        return evaluate(cause: cause, now: now)
    }

    public mutating func activitySensed(_ activity: Activity?, now: UTCTime) -> ModeChange? {
        guard activity != state.activity else { return nil }
        state.activity = activity
        changed = true
        return evaluate(cause: .activity, now: now)
    }

    public mutating func movingChanged(_ moving: Bool?, now: UTCTime) -> ModeChange? {
        guard moving != state.moving else { return nil }
        state.moving = moving
        changed = true
        return evaluate(cause: .moving, now: now)
    }

    /// `nextDeadline` came: a window opened or closed.
    public mutating func deadlineReached(now: UTCTime) -> ModeChange? {
        evaluate(cause: .time, now: now)
    }

    // MARK: - Choosing

    private mutating func evaluate(cause: ModeCause, now: UTCTime) -> ModeChange? {
        guard isEnabled else { return nil }
        evaluatedAt = now
        var held: [String] = []
        var chosen: ModeRule?
        for rule in rules {
            let battery = batteryHolds(rule)
            if battery, rule.when.hasBattery { held.append(rule.name) }
            if chosen == nil, battery, holdsBesidesBattery(rule.when, at: now) { chosen = rule }
        }
        held.sort()
        if held != state.batteryHeld {
            state.batteryHeld = held
            changed = true
        }
        nextDeadline = rules.compactMap { $0.when.active?.nextChange(after: now, zone: zone) }.min()
        let name = chosen?.name ?? ModeRule.fallbackName
        guard name != state.name else { return nil }
        let change = ModeChange(from: state.name, to: name, cause: cause, supply: state.supply)
        state.name = name
        state.since = now
        changed = true
        return change
    }

    /// The entry's battery thresholds, with the hysteresis of the last evaluation; a threshold
    /// within the hysteresis of 0 or 100 % is released there (a full or flat battery reads no
    /// further).
    private func batteryHolds(_ rule: ModeRule) -> Bool {
        let when = rule.when
        guard when.hasBattery else { return true }
        guard let capacity = state.supply?.capacity else { return false }
        let before = state.batteryHeld.contains(rule.name)
        let h = before ? Self.batteryHysteresis : 0
        if let below = when.batteryBelow, capacity >= min(below + h, 100) { return false }
        if let above = when.batteryAbove, capacity <= max(above - h, 0) { return false }
        return true
    }

    private func holdsBesidesBattery(_ when: ModeCondition, at now: UTCTime) -> Bool {
        if let power = when.externalPower, state.supply?.online != power { return false }
        if let activity = when.activity, state.activity != activity { return false }
        if let moving = when.moving, state.moving != moving { return false }
        if let active = when.active, !active.isActive(at: now, zone: zone) { return false }
        return true
    }
}

/// A change of mode: from which entry to which, and what changed.
public struct ModeChange: Hashable, Sendable {
    public var from: String
    public var to: String
    public var cause: ModeCause
    /// The power supply as last reported (the figures the event carries).
    public var supply: PowerSupplyReading?

    public init(from: String, to: String, cause: ModeCause, supply: PowerSupplyReading?) {
        self.from = from
        self.to = to
        self.cause = cause
        self.supply = supply
    }
}
