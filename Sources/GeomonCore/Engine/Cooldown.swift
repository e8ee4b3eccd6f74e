/// One fence's cooldown: when an enter or exit of it was last delivered, and the stay whose
/// enter was held back, if any.
public struct CooldownRecord: Hashable, Sendable {
    public var fenceID: String
    /// The last enter or exit delivered (its event time).
    public var lastDelivered: UTCTime
    /// The held-back enter of the current stay: its time, position and accuracy (the enter
    /// delivered when the cooldown ends during the stay is placed there).
    public var suppressedSince: UTCTime?
    public var suppressedCoordinate: Coordinate?
    public var suppressedAccuracyMeters: Double?
    public var fenceName: String?

    public init(fenceID: String, lastDelivered: UTCTime) {
        self.fenceID = fenceID
        self.lastDelivered = lastDelivered
    }
}

/// The cooldown rule (`cooldown:` on a fence; docs/engine.md, "Cooldown"): an enter within
/// `cooldown` of the last delivered enter or exit of its fence is stored but not delivered
/// (`GeoEvent.suppressed`), and so is everything of that stay (dwells, its exit), so a consumer
/// sees pairs or nothing: never an enter without its exit. When the cooldown ends with the
/// device still inside, the stay is delivered then: an `enter` at that instant; a stay that
/// ended meanwhile without an exit to say so (a fence without `exit` in its events) is dropped.
/// A held-back stay outlives its fence's cooldown: a reload that removes the fence still
/// holds back the stay's exit, and one that removes only the `cooldown:` delivers the stay at
/// once if the device is inside. Pure.
public struct Cooldown: Sendable {
    private let periods: [String: Duration]
    /// The profile's fences (a held-back stay of a fence no longer here only holds back its
    /// exit).
    private let fenceIDs: Set<String>
    public private(set) var records: [String: CooldownRecord]
    private var changed = false

    public init(profile: Profile, records: [CooldownRecord] = []) {
        var periods: [String: Duration] = [:]
        for fence in profile.fences { if let cooldown = fence.cooldown { periods[fence.id] = cooldown } }
        self.periods = periods
        fenceIDs = Set(profile.fences.map(\.id))
        self.records = Dictionary(records.filter { periods[$0.fenceID] != nil || $0.suppressedSince != nil }.map { ($0.fenceID, $0) },
                                  uniquingKeysWith: { _, b in b })
        isEnabled = !periods.isEmpty || !self.records.isEmpty
    }

    /// Enabled while a fence has a cooldown or a held-back stay is kept.
    private mutating func refreshEnabled() {
        isEnabled = !periods.isEmpty || !records.isEmpty
    }

    /// Whether any fence has a cooldown or a held-back stay (read on every input: a stored
    /// flag).
    public private(set) var isEnabled: Bool

    /// The fences whose current stay is held back (consumers were not told of it).
    public var suppressedFences: Set<String> {
        Set(records.values.filter { $0.suppressedSince != nil }.map(\.fenceID))
    }

    /// The records when they changed since the last call (for the store), else nil.
    public mutating func takeRecords() -> [CooldownRecord]? {
        defer { changed = false }
        return changed ? records.values.sorted { $0.fenceID < $1.fenceID } : nil
    }

    /// Marks the events of `events` the rule holds back, in order.
    public mutating func filter(_ events: inout [GeoEvent]) {
        guard isEnabled else { return }
        for k in events.indices {
            guard let id = events[k].fenceID else { continue }
            let event = events[k]
            if case .cooledDown = event.rule { continue }
            guard let period = periods[id] else {
                // A stay held back under a cooldown the fence no longer has: its dwells and
                // its exit stay held back; then the record goes.
                guard let record = records[id], record.suppressedSince != nil else { continue }
                switch event.kind {
                case .enter: records[id] = nil
                case .exit:
                    events[k].suppressed = true
                    records[id] = nil
                case .dwell: events[k].suppressed = true
                default: continue
                }
                changed = true
                continue
            }
            var record = records[id]
            switch event.kind {
            case .enter:
                if let last = record?.lastDelivered, event.time < last + period {
                    record!.suppressedSince = event.time
                    record!.suppressedCoordinate = event.coordinate
                    record!.suppressedAccuracyMeters = event.accuracyMeters
                    record!.fenceName = event.fenceName
                    events[k].suppressed = true
                } else {
                    record = CooldownRecord(fenceID: id, lastDelivered: event.time)
                }
            case .exit:
                if record?.suppressedSince != nil {
                    record!.suppressedSince = nil
                    record!.suppressedCoordinate = nil
                    record!.suppressedAccuracyMeters = nil
                    events[k].suppressed = true
                } else {
                    record = CooldownRecord(fenceID: id, lastDelivered: event.time)
                }
            case .dwell:
                if record?.suppressedSince != nil { events[k].suppressed = true }
            default:
                continue
            }
            records[id] = record
            changed = true
        }
        refreshEnabled()
    }

    /// After the start's events were filtered (a removed fence's closing exit among them): the
    /// records of fences the profile no longer has go; a held-back stay of one that closed
    /// without an exit (its fence reported none) would otherwise be kept for good.
    public mutating func dropRemoved() {
        let gone = records.keys.filter { !fenceIDs.contains($0) }
        guard !gone.isEmpty else { return }
        for id in gone { records[id] = nil }
        changed = true
        refreshEnabled()
    }

    /// When a held-back stay's cooldown ends (at once for a fence that no longer has one).
    public var nextDeadline: UTCTime? {
        guard isEnabled, !records.isEmpty else { return nil }
        return records.values.compactMap { r -> UTCTime? in
            guard r.suppressedSince != nil, fenceIDs.contains(r.fenceID) else { return nil }
            return r.lastDelivered + (periods[r.fenceID] ?? .zero)
        }.min()
    }

    /// The held-back stays whose cooldown ended by `through` (default `now`): an `enter` each,
    /// at that instant, for the fences `isInside` says the device is still inside; a stay that
    /// ended without an exit (its fence does not report exits) is dropped.
    public mutating func deadlineReached(now: UTCTime, through: UTCTime? = nil, profileName: String, isInside: (String) -> Bool) -> [GeoEvent] {
        var events: [GeoEvent] = []
        for id in records.keys.sorted() {
            guard var record = records[id], let since = record.suppressedSince, fenceIDs.contains(id) else { continue }
            let period = periods[id] ?? .zero
            let due = record.lastDelivered + period
            guard due <= through ?? now else { continue }
            changed = true
            guard isInside(id) else {
                record.suppressedSince = nil
                record.suppressedCoordinate = nil
                record.suppressedAccuracyMeters = nil
                records[id] = periods[id] == nil ? nil : record
                continue
            }
            // A fence whose cooldown was removed delivers its stay now (its rule says so with
            // a cooldown of zero).
            let time = periods[id] == nil ? now : due
            var event = GeoEvent(
                id: EventID.make(profile: profileName, fenceID: id, kind: .enter, time: time),
                kind: .enter, fenceID: id, fenceName: record.fenceName, time: time,
                coordinate: record.suppressedCoordinate ?? Coordinate(latitude: 0, longitude: 0),
                accuracyMeters: record.suppressedAccuracyMeters ?? 0, rule: .cooledDown(insideSince: since, cooldown: period))
            event.figures = nil
            events.append(event)
            records[id] = periods[id] == nil ? nil : CooldownRecord(fenceID: id, lastDelivered: time)
        }
        refreshEnabled()
        return events
    }
}
