/// One fence's speeding in progress: since the first fix above its limit.
public struct SpeedingRecord: Hashable, Sendable {
    public var fenceID: String
    public var since: TrackPoint
    public var last: TrackPoint
    public var maxSpeedMetersPerSecond: Double
    public var distanceMeters = 0.0
    /// `overspeed` was reported (the speed held above the limit for `for`).
    public var reported = false

    public init(fenceID: String, since: TrackPoint, speed: Double) {
        self.fenceID = fenceID
        self.since = since
        last = since
        maxSpeedMetersPerSecond = speed
    }
}

/// Speed in a zone (`speed_limit:` on a fence; docs/engine.md, "Speed in a zone"): inside a
/// fence (confirmed, and within its `active:` windows), a GNSS speed above `limit + tolerance`
/// held for `for` reports `overspeed`, dated at the first fix above it; the first fix at or
/// below it, outside the fence or outside its windows ends it with `overspeed_end`, carrying the
/// maximum, the duration and the distance (straight segments between the fixes). A reload
/// that removes the fence or its limit ends a reported speeding then (`start(at:)`). Pure.
public struct SpeedWatch: Sendable {
    private let limits: [String: (index: Int, limit: SpeedLimit, name: String?)]
    public private(set) var records: [String: SpeedingRecord]
    private var changed = false

    public init(profile: Profile, records: [SpeedingRecord] = []) {
        var limits: [String: (Int, SpeedLimit, String?)] = [:]
        for (i, fence) in profile.fences.enumerated() { if let limit = fence.speedLimit { limits[fence.id] = (i, limit, fence.name) } }
        self.limits = limits
        // A reported speeding of a fence that no longer has a limit is kept for `start(at:)`.
        self.records = Dictionary(records.filter { limits[$0.fenceID] != nil || $0.reported }.map { ($0.fenceID, $0) },
                                  uniquingKeysWith: { _, b in b })
        isEnabled = !limits.isEmpty || !self.records.isEmpty
    }

    /// Whether any fence has a speed limit (read on every fix: a stored flag).
    public private(set) var isEnabled: Bool

    /// The machine starts (or a reload took effect) at `now`: a reported speeding of a fence
    /// that is gone or has no limit any more ends, with `overspeed_end` at `now` (consumers
    /// that were told it began are told it ended, as a removed fence's stay is closed).
    public mutating func start(at now: UTCTime, profileName: String) -> [GeoEvent] {
        var events: [GeoEvent] = []
        for id in records.keys.sorted() where limits[id] == nil {
            guard let record = records.removeValue(forKey: id) else { continue }
            changed = true
            events.append(ended(id, record, at: TrackPoint(time: now, coordinate: record.last.coordinate, accuracyMeters: record.last.accuracyMeters),
                                profileName: profileName))
        }
        isEnabled = !limits.isEmpty || !records.isEmpty
        return events
    }

    /// The records when they changed since the last call (for the store), else nil.
    public mutating func takeRecords() -> [SpeedingRecord]? {
        defer { changed = false }
        return changed ? records.values.sorted { $0.fenceID < $1.fenceID } : nil
    }

    /// Fence `id`'s limit and its index in the profile, when it has one.
    public func limit(of id: String) -> (index: Int, limit: SpeedLimit)? {
        limits[id].map { ($0.index, $0.limit) }
    }

    /// A GNSS fix the engine took; `watched` the limited fences it is inside now.
    public mutating func fixTaken(_ fix: Fix, watched: [(id: String, limit: SpeedLimit)], profileName: String) -> [GeoEvent] {
        guard isEnabled, fix.source == .gnss else { return [] }
        var events: [GeoEvent] = []
        let point = TrackPoint(time: fix.time, coordinate: fix.coordinate, accuracyMeters: fix.horizontalAccuracyMeters)
        let speed = fix.speedMetersPerSecond.flatMap { $0.isFinite ? $0 : nil }
        var over: Set<String> = []
        for (id, limit) in watched {
            guard let speed, speed > limit.thresholdMetersPerSecond else { continue }
            over.insert(id)
            changed = true
            guard var record = records[id] else {
                records[id] = SpeedingRecord(fenceID: id, since: point, speed: speed)
                if limit.duration <= .zero { report(id, limit: limit, profileName: profileName, into: &events) }
                continue
            }
            record.distanceMeters += Geodesy.distanceMeters(from: record.last.coordinate, to: point.coordinate)
            record.last = point
            record.maxSpeedMetersPerSecond = max(record.maxSpeedMetersPerSecond, speed)
            records[id] = record
            if !record.reported, fix.time - record.since.time >= limit.duration {
                report(id, limit: limit, profileName: profileName, into: &events)
            }
        }
        // Speeding that stopped: at or below the limit, out of the fence, or out of its window.
        // A fix without a speed says nothing about it.
        for id in records.keys.sorted() where !over.contains(id) {
            if speed == nil, watched.contains(where: { $0.id == id }) { continue }
            guard var record = records.removeValue(forKey: id) else { continue }
            changed = true
            guard record.reported else { continue }
            record.distanceMeters += Geodesy.distanceMeters(from: record.last.coordinate, to: point.coordinate)
            events.append(ended(id, record, at: point, profileName: profileName))
        }
        return events
    }

    /// `overspeed_end` of fence `id`'s speeding `record`, at `point`: since when, for how long,
    /// how far, how fast at most, and the limit when the fence still has one.
    private func ended(_ id: String, _ record: SpeedingRecord, at point: TrackPoint, profileName: String) -> GeoEvent {
        var figures = EventFigures()
        figures.since = record.since.time
        figures.durationSeconds = max(0, (point.time - record.since.time).secondsValue)
        figures.distanceMeters = record.distanceMeters
        figures.maxSpeedMetersPerSecond = record.maxSpeedMetersPerSecond
        figures.limitMetersPerSecond = limits[id]?.limit.limitMetersPerSecond
        return event(.overspeedEnd, fenceID: id, at: point, figures: figures, profileName: profileName)
    }

    private mutating func report(_ id: String, limit: SpeedLimit, profileName: String, into events: inout [GeoEvent]) {
        guard var record = records[id] else { return }
        record.reported = true
        records[id] = record
        var figures = EventFigures()
        figures.maxSpeedMetersPerSecond = record.maxSpeedMetersPerSecond
        figures.limitMetersPerSecond = limit.limitMetersPerSecond
        events.append(event(.overspeed, fenceID: id, at: record.since, figures: figures, profileName: profileName))
    }

    private func event(_ kind: EventKind, fenceID: String, at point: TrackPoint, figures: EventFigures, profileName: String) -> GeoEvent {
        var event = GeoEvent(
            id: EventID.make(profile: profileName, fenceID: fenceID, kind: kind, time: point.time),
            kind: kind, fenceID: fenceID, fenceName: limits[fenceID]?.name, time: point.time, coordinate: point.coordinate,
            accuracyMeters: point.accuracyMeters, rule: .movement(kind, figures))
        event.figures = figures
        return event
    }
}
