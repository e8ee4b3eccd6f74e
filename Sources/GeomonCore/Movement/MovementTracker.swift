/// A fix as the movement rules remember it.
public struct TrackPoint: Hashable, Sendable {
    public var time: UTCTime
    public var coordinate: Coordinate
    public var accuracyMeters: Double

    public init(time: UTCTime, coordinate: Coordinate, accuracyMeters: Double) {
        self.time = time
        self.coordinate = coordinate
        self.accuracyMeters = accuracyMeters
    }

    init(_ fix: Fix) {
        self.init(time: fix.time, coordinate: fix.coordinate, accuracyMeters: fix.horizontalAccuracyMeters)
    }
}

/// What a trip has covered so far.
public struct TripTotals: Hashable, Sendable {
    public var distanceMeters = 0.0
    public var movingSeconds = 0.0
    public var maxSpeedMetersPerSecond = 0.0
    public init() {}

    mutating func add(_ segment: TripTotals) {
        distanceMeters += segment.distanceMeters
        movingSeconds += segment.movingSeconds
        maxSpeedMetersPerSecond = max(maxSpeedMetersPerSecond, segment.maxSpeedMetersPerSecond)
    }
}

/// A trip under way: where and when it began, and its totals.
public struct TripProgress: Hashable, Sendable {
    public var start: TrackPoint
    public var totals = TripTotals()
    /// `trip_start` was reported: the device has also left the stay where the trip was seen
    /// to begin (a step from one stay into the next is no trip).
    public var announced = false
    public init(start: TrackPoint) { self.start = start }
}

/// A stay in the making: fixes within a radius of the first one (trackintel's "sliding"
/// staypoints: the window restarts at the first fix beyond the radius).
public struct Stay: Hashable, Sendable {
    /// The stay's first fix; its radius is measured from here.
    public var first: TrackPoint
    /// The last fix within the radius.
    public var lastInside: UTCTime
    /// The fixes' mean offset from `first` in degrees (latitude, longitude) and their count.
    public var sumLatitude = 0.0
    public var sumLongitude = 0.0
    public var count = 1
    /// The rule fired for this stay (an arrival reported, or the trip ended at it).
    public var confirmed = false
    /// The fence a visit was reported in.
    public var fenceID: String?
    public var fenceName: String?
    /// The trip's totals when `first` was taken (a trip ends where its stop began).
    public var tripAtFirst: TripTotals?

    public init(first: TrackPoint, tripAtFirst: TripTotals? = nil) {
        self.first = first
        lastInside = first.time
        self.tripAtFirst = tripAtFirst
    }

    /// The mean of the stay's fixes.
    public var center: Coordinate {
        let n = Double(count)
        return Coordinate(latitude: first.coordinate.latitude + sumLatitude / n,
                          longitude: Geodesy.normalizedLongitude(first.coordinate.longitude + sumLongitude / n))
    }

    mutating func add(_ point: TrackPoint) {
        lastInside = point.time
        sumLatitude += point.coordinate.latitude - first.coordinate.latitude
        sumLongitude += Geodesy.longitudeDelta(first.coordinate.longitude, point.coordinate.longitude)
        count += 1
    }
}

/// The movement rules' persisted state: plain values the store writes with the engine's.
public struct MovementState: Hashable, Sendable {
    /// The motion state reported last, since when, and who decided it.
    public var motion: Motion?
    public var motionSince: UTCTime?
    /// GNSS evidence of another motion state, from its first fix, awaiting `confirm`.
    public var candidate: Motion?
    public var candidateSince: TrackPoint?
    /// The motion source's word (nil: it never spoke, or went silent); while it speaks it decides.
    public var sensor: Motion?
    public var sensorSince: UTCTime?
    /// The last fix the rules took.
    public var last: TrackPoint?
    /// Distance covered, all trips and none (`geomon status`), and the fix it was last counted to.
    public var odometerMeters = 0.0
    public var odometerAnchor: TrackPoint?
    /// The first fix showing movement since the last one showing the device still: where a
    /// trip that starts now departed, and what was covered since (a trip starts with it).
    public var departure: TrackPoint?
    public var sinceDeparture = TripTotals()
    public var trip: TripProgress?
    /// Where the device stood when no trip is under way: the first fix of the stop that ended
    /// the last trip (or the first fix of all); a trip starts once it is seen beyond the stop
    /// radius of it while moving.
    public var stood: TrackPoint?
    /// The last fix within the stop radius of `stood`, what was covered since, how many
    /// fixes in a row have been beyond it, and when the first of those was taken.
    public var lastNear: TrackPoint?
    public var sinceNear = TripTotals()
    public var beyond = 0
    public var firstBeyond: UTCTime?
    /// The stay the trips' stop rule watches, and the one the visits' rule watches.
    public var stop: Stay?
    public var visit: Stay?
    /// The last fix that could show the device beyond the visit under way: one used for stays,
    /// or a less accurate one certainly beyond it (a coarse fix near the stay leaves it
    /// standing). nil: the last fix (a state stored before it was kept).
    public var visitSeen: UTCTime?

    public init() {}

    /// Drops where the device stood and the departure from it: a trip started, or the trips'
    /// rule is gone.
    mutating func forgetStand() {
        departure = nil
        sinceDeparture = TripTotals()
        stood = nil
        lastNear = nil
        sinceNear = TripTotals()
        beyond = 0
        firstBeyond = nil
    }

    /// Drops the motion source's word (a new process has not heard it yet).
    public mutating func forgetSensor() {
        sensor = nil
        sensorSince = nil
    }
}

/// The movement rules (docs/engine.md, "Movement"): motion state, trips, visits and the
/// odometer, from the fixes the engine took and the motion source's word. Pure: the same inputs
/// give the same events.
///
/// - Evidence. A fix reporting a speed shows movement at `moving_speed` or more, a stand below
///   it. Without a speed, the segment from the last fix shows movement when it is longer than
///   both accuracies and covered at `moving_speed` or more, a stand when it is shorter than the
///   larger accuracy and that accuracy is within the stay radius (`standAccuracyMeters`).
/// - Motion. GNSS evidence of a new state counts once it has held for `confirm` (the event is
///   dated at its first fix); a motion source's word counts at once and, while the source
///   speaks, decides alone.
/// - Distance. A segment counts once the fix is farther from the last counted one than both
///   accuracies together (two fixes of a device at rest lie that close: its jitter adds nothing); the sum of straight segments is a
///   lower bound of the path, and only fixes taken count, so the receiver's sleeps shorten it.
/// - Stays. A stay is the fixes within a radius of its first fix; the first fix beyond starts
///   the next (trackintel's sliding staypoints). It lasts until its last fix inside, or until
///   the first fix beyond when that came within `leaveGap` of the last inside. Fixes less
///   accurate than the radius are not used for stays.
/// - Trips. One starts when the device is seen beyond the stop radius of the place it stood and
///   moves (its motion state) or is seen beyond it on the next fix too, dated at the first fix
///   that showed movement since it last showed a stand if that came no later than the first
///   fix beyond, else at the last fix within the radius; it ends once a
///   stay has lasted `stop_after`, dated at the stay's first fix with the totals as of then. A
///   motion source saying `still` ends it `stop_after` after it said so, without a fix (after
///   the stop the last fix began, where a fix since left the one it was said in).
/// - Visits. `arrival` once a stay has lasted `min_duration` (dated at its first fix, placed at
///   the mean of its fixes, named after a fence the device is inside), `departure` at the first
///   fix beyond the radius (a stay that reached `min_duration` only by that fix reports both;
///   the caller names them after where the device was before it: `mayArriveLeaving`).
public struct MovementTracker: Sendable {
    public let settings: MovementSettings
    public private(set) var state: MovementState
    private let profileName: String
    /// Whether the profile asks for any movement event (read on every input: a stored flag).
    public let isEnabled: Bool
    /// Whether `state` changed since the last `takeState()`.
    private var changed = false

    public init(settings: MovementSettings, profileName: String, state: MovementState = MovementState()) {
        self.settings = settings
        isEnabled = settings.isEnabled
        self.profileName = profileName
        self.state = state
    }

    /// The state when it changed since the last call (for the store), else nil.
    public mutating func takeState() -> MovementState? {
        guard changed else { return nil }
        changed = false
        return state
    }

    // MARK: - Inputs

    /// The machine starts (or a reload took effect) at `now`: a trip or a visit under way whose
    /// rule the profile no longer has ends, with `trip_end` or `departure` at `now` where the
    /// rules last saw the device (consumers told it began are told it ended, as a removed
    /// fence's stay is closed), and what the rule kept is dropped: a rule added back later
    /// starts afresh.
    public mutating func start(at now: UTCTime) -> [GeoEvent] {
        var events: [GeoEvent] = []
        if settings.trips == nil, state.trip != nil || state.stood != nil || state.stop != nil || state.departure != nil {
            if let trip = state.trip {
                let last = state.last ?? trip.start
                endTrip(trip, at: TrackPoint(time: max(now, trip.start.time), coordinate: last.coordinate, accuracyMeters: last.accuracyMeters),
                        totals: trip.totals, into: &events)
            }
            state.trip = nil
            state.forgetStand()
            state.stop = nil
            changed = true
        }
        if settings.visits == nil, let visit = state.visit {
            if visit.confirmed {
                let last = state.last ?? visit.first
                events.append(departure(visit, at: TrackPoint(time: max(now, visit.first.time), coordinate: last.coordinate, accuracyMeters: last.accuracyMeters),
                                        radiusMeters: nil))
            }
            state.visit = nil
            state.visitSeen = nil
            changed = true
        }
        return events
    }

    /// A fix the engine took and can use. An `arrival` comes without a fence: the caller names
    /// it (`nameVisit`) after a fence the device is inside.
    public mutating func fixTaken(_ fix: Fix) -> [GeoEvent] {
        guard settings.isEnabled, fix.coordinate.isValid, fix.horizontalAccuracyMeters.isFinite else { return [] }
        if let last = state.last, fix.time <= last.time { return [] }
        changed = true
        var events: [GeoEvent] = []
        let point = TrackPoint(fix)
        // A motion state the source gave before any fix had no position to report it at: the
        // first fix gives it one (dated when the source said it).
        // Only the word of the source that speaks now (an earlier process's, or a replaced
        // sensor's, was forgotten with the source: `sensor` is nil then).
        if state.last == nil, state.sensor != nil, let motion = state.motion, settings.motionEvents {
            var figures = EventFigures()
            figures.source = "motion"
            events.append(event(motion == .moving ? .moving : .still,
                                at: TrackPoint(time: min(state.motionSince ?? point.time, point.time), coordinate: point.coordinate, accuracyMeters: point.accuracyMeters),
                                figures: figures))
        }
        let evidence = self.evidence(fix)
        let segment = count(fix, point: point, evidence: evidence)
        switch evidence {
        case .still?:
            state.departure = nil
            state.sinceDeparture = TripTotals()
        case .moving?:
            if state.departure == nil { state.departure = point }
        case nil:
            break
        }
        if state.sensor == nil, let evidence { decideMotion(evidence, point: point, into: &events) }
        if let trips = settings.trips, point.accuracyMeters <= trips.radiusMeters {
            if state.stood == nil, state.trip == nil { stand(at: point) }
            stepTrips(point, trips, segment: segment, into: &events)
            startTrip(point, trips, into: &events)
        }
        if let visits = settings.visits {
            if point.accuracyMeters <= visits.radiusMeters {
                stepVisits(point, visits, into: &events)
                state.visitSeen = point.time
            } else if let visit = state.visit,
                      Geodesy.distanceMeters(from: visit.first.coordinate, to: point.coordinate) - point.accuracyMeters >= visits.radiusMeters {
                state.visitSeen = point.time
            }
        }
        state.last = point
        return events
    }

    /// Drops the motion source's word stored by an earlier process (`MovementState.forgetSensor`),
    /// stored so with the next commit: a machine built on the store again later (a reload
    /// before the source speaks) does not find the old word.
    public mutating func forgetSensor() {
        guard state.sensor != nil || state.sensorSince != nil else { return }
        state.forgetSensor()
        changed = true
    }

    /// The motion source's word at `now`; nil: it went silent (GNSS evidence decides again).
    public mutating func motionReported(_ motion: Motion?, now: UTCTime) -> [GeoEvent] {
        guard settings.isEnabled, motion != state.sensor else { return [] }
        changed = true
        state.sensor = motion
        state.sensorSince = motion == nil ? nil : now
        if motion == .still {
            state.departure = nil
            state.sinceDeparture = TripTotals()
        }
        // GNSS evidence gathered before the source spoke (or while it spoke) does not carry
        // over: once it falls silent, a change needs `confirm` anew.
        state.candidate = nil
        state.candidateSince = nil
        guard let motion, motion != state.motion else { return [] }
        var events: [GeoEvent] = []
        if let last = state.last {
            confirm(motion, since: TrackPoint(time: now, coordinate: last.coordinate, accuracyMeters: last.accuracyMeters),
                    source: "motion", into: &events)
        } else {
            // No position yet: reported with the first fix (`fixTaken`).
            state.motion = motion
            state.motionSince = now
        }
        return events
    }

    /// When a rule comes due without a fix: only while a motion source says `still` (a trip's
    /// end `stop_after` later; a visit whose last fix was inside it, at `min_duration`).
    public var nextDeadline: UTCTime? {
        guard isEnabled, state.sensor == .still, let since = state.sensorSince else { return nil }
        var due: UTCTime?
        if let trips = settings.trips, state.trip != nil { due = stoodSince(since) + trips.stopAfter }
        if let visits = settings.visits, let visit = state.visit, !visit.confirmed, visit.lastInside == lastVisitSeen {
            let arrival = max(visit.first.time + visits.minDuration, since)
            due = due.map { min($0, arrival) } ?? arrival
        }
        return due
    }

    /// Since when the device has stood, by the still word at `since` and the fixes after it: a
    /// fix beyond the stop the word was said in (GNSS showing movement the sensor missed)
    /// starts the stand again at the stop it began.
    private func stoodSince(_ since: UTCTime) -> UTCTime {
        max(since, state.stop?.first.time ?? since)
    }

    /// When a fix last could have shown the device beyond the visit (`MovementState.visitSeen`).
    private var lastVisitSeen: UTCTime? { state.visitSeen ?? state.last?.time }

    /// Whether a fix at `time` may report a visit's arrival together with its departure (a
    /// stay that reached `min_duration` only by the first fix beyond it): the caller then
    /// names both after where the device was before that fix.
    public func mayArriveLeaving(at time: UTCTime) -> Bool {
        guard let visits = settings.visits, let visit = state.visit else { return false }
        return !visit.confirmed && time - visit.first.time >= visits.minDuration
    }

    public mutating func deadlineReached(now: UTCTime) -> [GeoEvent] {
        guard state.sensor == .still, let since = state.sensorSince, let last = state.last else { return [] }
        var events: [GeoEvent] = []
        if let trips = settings.trips, let trip = state.trip, stoodSince(since) + trips.stopAfter <= now {
            changed = true
            let end = TrackPoint(time: max(stoodSince(since), trip.start.time), coordinate: last.coordinate, accuracyMeters: last.accuracyMeters)
            endTrip(trip, at: end, totals: trip.totals, into: &events)
            state.stop?.confirmed = true
            stand(at: end)
        }
        if let visits = settings.visits, var visit = state.visit, !visit.confirmed, visit.lastInside == lastVisitSeen,
           visit.first.time + visits.minDuration <= now, since <= now {
            changed = true
            arrive(&visit, visits, into: &events)
            state.visit = visit
        }
        return events
    }

    // MARK: - Rules

    /// The largest accuracy at which a segment without a speed can show a stand: the radius
    /// the rules measure stays in (the larger of trips' and visits'), 100 m without either.
    private var standAccuracyMeters: Double {
        max(settings.trips?.radiusMeters ?? 0, settings.visits?.radiusMeters ?? 0, settings.trips == nil && settings.visits == nil ? 100 : 0)
    }

    private func evidence(_ fix: Fix) -> Motion? {
        let threshold = settings.movingSpeedMetersPerSecond
        if let speed = fix.speedMetersPerSecond, speed.isFinite, speed >= 0 {
            return speed >= threshold ? .moving : .still
        }
        guard let last = state.last else { return nil }
        let d = Geodesy.distanceMeters(from: last.coordinate, to: fix.coordinate)
        let dt = (fix.time - last.time).secondsValue
        if d > last.accuracyMeters + fix.horizontalAccuracyMeters, dt > 0, d / dt >= threshold { return .moving }
        // A stand within the accuracy, where the accuracy is finer than a stay: a coarse fix
        // ±1.5 km 900 m from the last cannot tell a car from a stand.
        let larger = max(last.accuracyMeters, fix.horizontalAccuracyMeters)
        if d <= larger, larger <= standAccuracyMeters { return .still }
        return nil
    }

    /// The odometer, and the totals of the trip under way (or, before one starts, of the
    /// movement since the departure and since the last fix near where the device stood, one of
    /// which a trip that starts takes over).
    private mutating func count(_ fix: Fix, point: TrackPoint, evidence: Motion?) -> TripTotals {
        var segment = TripTotals()
        if evidence == .moving, let last = state.last { segment.movingSeconds = (point.time - last.time).secondsValue }
        // A speed as `evidence` reads one: finite and not negative, else none reported.
        let reported = fix.speedMetersPerSecond.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
        if let reported { segment.maxSpeedMetersPerSecond = reported }
        if let anchor = state.odometerAnchor {
            let d = Geodesy.distanceMeters(from: anchor.coordinate, to: point.coordinate)
            if d > anchor.accuracyMeters + point.accuracyMeters {
                state.odometerMeters += d
                state.odometerAnchor = point
                segment.distanceMeters = d
                // Without a reported speed, the segment's own (a lower bound of the fastest).
                let dt = (point.time - anchor.time).secondsValue
                if reported == nil, dt > 0 { segment.maxSpeedMetersPerSecond = d / dt }
            }
        } else {
            state.odometerAnchor = point
        }
        if state.trip != nil {
            state.trip!.totals.add(segment)
        } else {
            if state.departure != nil { state.sinceDeparture.add(segment) }
            if state.lastNear != nil { state.sinceNear.add(segment) }
        }
        return segment
    }

    private mutating func decideMotion(_ evidence: Motion, point: TrackPoint, into events: inout [GeoEvent]) {
        if evidence == state.motion {
            state.candidate = nil
            state.candidateSince = nil
            return
        }
        if state.candidate != evidence || state.candidateSince == nil {
            state.candidate = evidence
            state.candidateSince = point
        }
        guard let since = state.candidateSince, point.time - since.time >= settings.confirm else { return }
        confirm(evidence, since: since, source: "gnss", into: &events)
    }

    private mutating func confirm(_ motion: Motion, since: TrackPoint, source: String, into events: inout [GeoEvent]) {
        state.motion = motion
        state.motionSince = since.time
        state.candidate = nil
        state.candidateSince = nil
        guard settings.motionEvents else { return }
        var figures = EventFigures()
        figures.source = source
        events.append(event(motion == .moving ? .moving : .still, at: since, figures: figures))
    }

    /// `segment`: what this fix added to the totals (`count`).
    private mutating func stepTrips(_ point: TrackPoint, _ trips: TripSettings, segment: TripTotals, into events: inout [GeoEvent]) {
        guard var stop = state.stop else {
            state.stop = Stay(first: point, tripAtFirst: state.trip?.totals)
            return
        }
        if Geodesy.distanceMeters(from: stop.first.coordinate, to: point.coordinate) < trips.radiusMeters {
            stop.add(point)
            if let trip = state.trip, !stop.confirmed, point.time - stop.first.time >= trips.stopAfter {
                let departure = state.departure
                endTrip(trip, at: stop.first, totals: stop.tripAtFirst ?? trip.totals, into: &events)
                stop.confirmed = true
                stand(at: stop.first, near: point)
                // Movement since the stop's last still fix (a walk off that began as the stop
                // reached `stop_after`) departs the next trip.
                keep(departure, after: stop.first.time, at: point, segment: segment)
            }
            state.stop = stop
            return
        }
        // Seen beyond the radius: a stop that lasted `stop_after` by this fix ends the trip
        // (unless the fix comes after a long gap), dated where the stop began.
        if let trip = state.trip, !stop.confirmed, point.time - stop.first.time >= trips.stopAfter,
           point.time - stop.lastInside <= MovementSettings.leaveGap {
            let departure = state.departure
            endTrip(trip, at: stop.first, totals: stop.tripAtFirst ?? trip.totals, into: &events)
            stand(at: stop.first, near: state.last ?? stop.first)
            // This fix, and the movement it showed, belong to the next trip: its segment counts
            // from the last fix near the stop; a departure at this fix counts from here.
            state.sinceNear = segment
            keep(departure, after: stop.lastInside, at: point, segment: segment)
        } else if var trip = state.trip, !trip.announced {
            // The device left the stay where the trip was seen to begin: it is one.
            trip.announced = true
            state.trip = trip
            var figures = EventFigures()
            figures.start = trip.start.coordinate
            events.append(event(.tripStart, at: trip.start, figures: figures))
        }
        state.stop = Stay(first: point, tripAtFirst: state.trip?.totals)
    }

    /// A departure taken after `time`, which the trip that just ended at `point` dropped: it
    /// departs the next trip, with what this fix added (nothing when it is this fix).
    private mutating func keep(_ departure: TrackPoint?, after time: UTCTime, at point: TrackPoint, segment: TripTotals) {
        guard let departure, departure.time > time else { return }
        state.departure = departure
        state.sinceDeparture = departure.time == point.time ? TripTotals() : segment
    }

    /// Where the device stands (no trip under way): `stood`, and `near` the last fix within
    /// the stop radius of it.
    private mutating func stand(at stood: TrackPoint, near: TrackPoint? = nil) {
        state.stood = stood
        state.lastNear = near ?? stood
        state.sinceNear = TripTotals()
        state.beyond = 0
        state.firstBeyond = nil
    }

    /// A trip starts once the device is seen beyond the stop radius of where it stood, and
    /// either moves (its motion state) or is seen beyond it again on the next fix (a slow walk
    /// below `moving_speed`; one fix alone may be a jump). It is dated at the first fix that
    /// showed movement since the last one that showed a stand, unless that came after the
    /// device was first seen beyond the radius (a walk whose speed hovers around
    /// `moving_speed`), else at the last fix within the radius, and takes over what was
    /// covered since.
    private mutating func startTrip(_ point: TrackPoint, _ trips: TripSettings, into events: inout [GeoEvent]) {
        guard state.trip == nil, let stood = state.stood else { return }
        guard Geodesy.distanceMeters(from: stood.coordinate, to: point.coordinate) >= trips.radiusMeters else {
            state.lastNear = point
            state.sinceNear = TripTotals()
            state.beyond = 0
            state.firstBeyond = nil
            return
        }
        state.beyond += 1
        if state.beyond == 1 { state.firstBeyond = point.time }
        guard state.motion == .moving || state.beyond >= 2 else { return }
        var trip: TripProgress
        if let departure = state.departure, departure.time >= stood.time, departure.time <= state.firstBeyond ?? departure.time {
            trip = TripProgress(start: departure)
            trip.totals = state.sinceDeparture
        } else {
            trip = TripProgress(start: state.lastNear ?? point)
            if state.lastNear != nil { trip.totals = state.sinceNear }
        }
        state.trip = trip
        state.forgetStand()
        // The stop window restarts here: `trip_start` is reported once the device leaves it.
        state.stop = Stay(first: point, tripAtFirst: trip.totals)
    }

    /// Ends `trip` at `end`: `trip_end` with its figures, or nothing for a trip never
    /// announced (the device stepped from one stay into the next).
    private mutating func endTrip(_ trip: TripProgress, at end: TrackPoint, totals: TripTotals, into events: inout [GeoEvent]) {
        defer {
            state.trip = nil
            state.departure = nil
            state.sinceDeparture = TripTotals()
        }
        guard trip.announced else { return }
        let duration = max(0, (end.time - trip.start.time).secondsValue)
        var figures = EventFigures()
        figures.since = trip.start.time
        figures.durationSeconds = duration
        figures.distanceMeters = totals.distanceMeters
        figures.movingSeconds = min(totals.movingSeconds, duration)
        figures.maxSpeedMetersPerSecond = totals.maxSpeedMetersPerSecond
        figures.meanSpeedMetersPerSecond = duration > 0 ? totals.distanceMeters / duration : 0
        figures.start = trip.start.coordinate
        events.append(event(.tripEnd, at: end, figures: figures))
    }

    private mutating func stepVisits(_ point: TrackPoint, _ visits: VisitSettings, into events: inout [GeoEvent]) {
        guard var visit = state.visit else {
            state.visit = Stay(first: point)
            return
        }
        if Geodesy.distanceMeters(from: visit.first.coordinate, to: point.coordinate) < visits.radiusMeters {
            visit.add(point)
            if !visit.confirmed, point.time - visit.first.time >= visits.minDuration {
                arrive(&visit, visits, into: &events)
            }
            state.visit = visit
            return
        }
        // A stay that lasted `min_duration` by this first fix beyond it (trackintel's rule;
        // not after a long gap) is a visit, reported now with its departure.
        if !visit.confirmed, point.time - visit.first.time >= visits.minDuration, point.time - visit.lastInside <= MovementSettings.leaveGap {
            arrive(&visit, visits, into: &events)
        }
        if visit.confirmed {
            // Dated at this fix, where the device was first seen beyond: across a gap, the
            // longest it can have stayed.
            events.append(departure(visit, at: point, radiusMeters: visits.radiusMeters))
        }
        state.visit = Stay(first: point)
    }

    /// `departure` from `visit` at `point`, with the stay's figures up to it and the name of
    /// the fence its arrival was reported in.
    private func departure(_ visit: Stay, at point: TrackPoint, radiusMeters: Double?) -> GeoEvent {
        var figures = EventFigures()
        figures.since = visit.first.time
        figures.durationSeconds = max(0, (point.time - visit.first.time).secondsValue)
        figures.center = visit.center
        figures.radiusMeters = radiusMeters
        var departure = event(.departure, at: point, figures: figures, fenceID: visit.fenceID)
        departure.fenceName = visit.fenceName
        return departure
    }

    private func arrive(_ visit: inout Stay, _ visits: VisitSettings, into events: inout [GeoEvent]) {
        visit.confirmed = true
        var figures = EventFigures()
        figures.since = visit.first.time
        figures.center = visit.center
        figures.radiusMeters = visits.radiusMeters
        let at = TrackPoint(time: visit.first.time, coordinate: visit.center, accuracyMeters: visit.first.accuracyMeters)
        events.append(event(.arrival, at: at, figures: figures))
    }

    /// Names the visit under way after `fence` (its arrival's, and later its departure's).
    public mutating func nameVisit(_ fence: (id: String, name: String?)) {
        state.visit?.fenceID = fence.id
        state.visit?.fenceName = fence.name
        changed = true
    }

    /// `event` (an arrival) named after `fence`: its fence, name and id.
    public func named(_ event: GeoEvent, _ fence: (id: String, name: String?)) -> GeoEvent {
        var event = event
        event.fenceID = fence.id
        event.fenceName = fence.name
        event.id = EventID.make(profile: profileName, fenceID: fence.id, kind: event.kind, time: event.time)
        return event
    }

    private func event(_ kind: EventKind, at point: TrackPoint, figures: EventFigures, fenceID: String? = nil) -> GeoEvent {
        var event = GeoEvent(
            id: EventID.make(profile: profileName, fenceID: fenceID, kind: kind, time: point.time),
            kind: kind, fenceID: fenceID, time: point.time, coordinate: point.coordinate,
            accuracyMeters: point.accuracyMeters, rule: .movement(kind, figures))
        event.figures = figures
        return event
    }
}
