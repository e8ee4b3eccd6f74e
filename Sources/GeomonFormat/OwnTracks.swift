public import GeomonCore

/// The OwnTracks JSON messages of one profile (owntracks.org booklet, "JSON"; docs/publish.md).
///
/// Pure: the same commit gives the same messages, byte for byte. Field names and units are
/// OwnTracks': `tst` epoch seconds, `acc` metres (always present and at least 1: Home Assistant
/// drops a location without it), `vel` km/h, `cog` degrees, `tid` the two-character tracker id.
///
/// - `location` on `TOPIC`, retained: per `locations:` (every usable fix, or events and
///   significant changes), with `t` the trigger (`c` the fix that confirmed an enter or leave,
///   `t` any other), `inregions`/`inrids` the names and ids of the fences the device is inside.
///   Only fixes the engine can use are published (GNSS fixes within `min_accuracy`): a consumer
///   that decides zones from every location (Home Assistant) gets no position geomon discarded.
/// - `transition` on `TOPIC/event`, not retained: `event` `enter` or `leave`, `desc` the fence
///   name (Home Assistant matches zones by name), `rid` its id, `wtst` the waypoint's own `tst` (pushed fences) or a stable number per fence,
///   `lat`/`lon`/`acc`/`tst` of the first fix that showed the new state, `vel`/`cog` of the fix
///   that confirmed it.
/// - `batt`/`bs` on locations and transitions when the device has a battery (`battery`).
/// - a dwell: a `location` whose extension member `geomon` is `{"event":"dwell","rid","desc"}`
///   (OwnTracks has no dwell; its consumers ignore members they do not know).
/// - an approach: a `location` whose `geomon` member is `{"event":"approach","rid","desc",…}` and
///   the event JSON's `approach` figures (`band_m`, `distance_m`, …, `eta_s`).
/// - an exit's transition carries `geomon: {"inside_s": …}`, the time inside the fence.
/// - a movement event (`moving`, `still`, `trip_start`, `trip_end`, `arrival`, `departure`,
///   `overspeed`, `overspeed_end`): a `location` whose `geomon` member is `{"event":KIND,…}`
///   with the event's figures (and `rid`, `desc` for a visit in a fence and for speeding).
/// - events a fence's cooldown held back (`GeoEvent.suppressed`): nothing.
/// - an exit its fence's `events` leave out (`GeoEvent.unlisted`): its `leave`, as any exit.
/// - `waypoints` on `TOPIC/waypoints`, retained: one `waypoint` per circle fence.
public struct OwnTracks: Sendable {
    public let settings: MQTTSettings
    public let profileName: String
    public let trackerID: String
    /// GNSS fixes worse than this are not published (the engine does not use them either).
    public let minAccuracyMeters: Double
    private let names: [String: String]
    private let order: [String: Int]
    /// The waypoint identities (`tst`) fences came with (`Fence.waypointTime`).
    private let times: [String: Int]
    /// The `wtst` of stays entered under an earlier profile whose waypoint is gone or was
    /// replaced since (a server's `setWaypoints`, a reload): their leave carries the time their
    /// enter did, so the server matches it to the waypoint the device entered.
    public var stayTimes: [String: Int] = [:]

    /// The `wtst` a transition of fence `id` carries now.
    public func waypointTime(of id: String) -> Int {
        times[id] ?? Self.waypointTime(fenceID: id)
    }

    public init(settings: MQTTSettings, profile: Profile) {
        self.settings = settings
        profileName = profile.name
        trackerID = settings.effectiveTrackerID(profile: profile.name)
        minAccuracyMeters = profile.sources.gnss?.minAccuracyMeters ?? .infinity
        var names: [String: String] = [:]
        var order: [String: Int] = [:]
        var times: [String: Int] = [:]
        for (i, fence) in profile.fences.enumerated() where names[fence.id] == nil {
            names[fence.id] = fence.name ?? fence.id
            order[fence.id] = i
            if let tst = fence.waypointTime { times[fence.id] = Int(tst) }
        }
        self.names = names
        self.order = order
        self.times = times
    }

    public var eventTopic: String { settings.topic + "/event" }
    public var waypointsTopic: String { settings.topic + "/waypoints" }
    public var statusTopic: String { settings.topic + "/status" }

    /// Whether a fix is one the engine uses (and so one a consumer should see).
    public func isPublishable(_ fix: Fix) -> Bool {
        fix.source == .coarse || fix.horizontalAccuracyMeters <= minAccuracyMeters
    }

    /// The messages of one commit, in the order they are to be published. `inside` holds the
    /// ids of the fences the device is inside after the commit; `battery` the device's battery
    /// now, if it has one.
    /// `lastFix` is the newest fix published before this commit: a dwell fired by deadline
    /// carries its speed and course, so a consumer keeps them (Home Assistant shows the last
    /// `vel` and `cog` it received).
    public func messages(for commit: Monitor.Commit, inside: Set<String>, battery: BatteryStatus? = nil, lastFix: Fix? = nil) -> [Publication] {
        var result: [Publication] = []
        var transitioned = false
        var transitionTime: UTCTime?
        var significant = false
        let usable = commit.fixes.filter(isPublishable)
        /// The event's position with the speed and course of its fix (or the newest known).
        func located(_ event: GeoEvent) -> Fix {
            var fix = Fix(time: event.time, coordinate: event.coordinate, horizontalAccuracyMeters: event.accuracyMeters)
            let motion = commit.fixes.last { $0.time == event.time } ?? usable.last ?? lastFix
            fix.speedMetersPerSecond = motion?.speedMetersPerSecond
            fix.courseDegrees = motion?.courseDegrees
            return fix
        }
        // A stay's time is its enter's: an exit in this commit after an enter of its fence
        // carries the new stay's, not one kept from before (`stayTimes`).
        var stays = self
        // Without a location stream (`locations: none`) an event's location is not retained:
        // no transition is followed by a location then, so a retained one would go on listing
        // a region the device left, for every consumer that subscribes later.
        let retainsEvents = (commit.locations ?? settings.locations) != .none
        // An event a cooldown held back is not published (its stay is not in `inside` either).
        for event in commit.events where !event.suppressed {
            switch event.kind {
            case .enter, .exit:
                transitioned = true
                transitionTime = max(transitionTime ?? event.time, event.time)
                result.append(stays.transition(event, confirmedBy: usable.last ?? lastFix, battery: battery))
                if let id = event.fenceID { stays.stayTimes[id] = nil }
            case .dwell:
                let fix = located(event)
                var extra = JSONObject()
                extra.add("event", "dwell")
                extra.add("rid", event.fenceID)
                extra.add("desc", event.fenceID.map(name))
                result.append(location(fix, trigger: "c", inside: inside, battery: battery, extension: extra, eventID: event.id, retain: retainsEvents))
            case .approach:
                let fix = located(event)
                var extra = JSONObject()
                extra.add("event", "approach")
                extra.add("rid", event.fenceID)
                extra.add("desc", event.fenceID.map(name))
                if let approach = event.approach { extra.append(EventRule.approachObject(approach)) }
                result.append(location(fix, trigger: "c", inside: inside, battery: battery, extension: extra, eventID: event.id, retain: retainsEvents))
            case .location:
                significant = true
            case .moving, .still, .tripStart, .tripEnd, .arrival, .departure, .overspeed, .overspeedEnd, .mode:
                // A mode change before the first fix has no position to publish.
                guard event.hasPosition else { continue }
                let fix = located(event)
                var extra = JSONObject()
                extra.add("event", event.kind.rawValue)
                if let id = event.fenceID {
                    extra.add("rid", id)
                    extra.add("desc", event.fenceName ?? name(id))
                }
                event.figures?.add(to: &extra)
                result.append(location(fix, trigger: "c", inside: inside, battery: battery, extension: extra, eventID: event.id, retain: retainsEvents))
            }
        }
        guard let last = usable.last else {
            // A transition decided without a fix of its own (a reload closing a stay, an
            // `active:` window closing at its deadline): the retained location would go on
            // listing the region it left. The newest fix's position follows it with the new
            // `inregions`, dated at the transition (newer than the retained location, and kept
            // by the outbox's age bound as the transition is).
            if transitioned, var fix = lastFix, let transitionTime {
                fix.time = max(fix.time, transitionTime)
                switch commit.locations ?? settings.locations {
                case .none: break
                case .significant, .all: result.append(location(fix, trigger: "c", inside: inside, battery: battery))
                }
            }
            return result
        }
        switch commit.locations ?? settings.locations {
        case .none:
            break
        case .significant:
            if transitioned || significant { result.append(location(last, trigger: transitioned ? "c" : "t", inside: inside, battery: battery)) }
        case .all:
            for fix in usable.dropLast() { result.append(location(fix, trigger: "t", inside: inside, battery: battery)) }
            result.append(location(last, trigger: transitioned ? "c" : "t", inside: inside, battery: battery))
        }
        return result
    }

    /// A `location` message for `fix`.
    /// `eventID`: the event it carries (a dwell, approach, movement or mode event), whose
    /// message the outbox's bounds never drop while pending.
    public func location(_ fix: Fix, trigger: String, inside: Set<String>, battery: BatteryStatus? = nil, extension extra: JSONObject? = nil,
                         eventID: String? = nil, retain: Bool = true) -> Publication {
        var o = JSONObject()
        o.add("_type", "location")
        o.add("acc", Self.accuracy(fix.horizontalAccuracyMeters))
        Self.addBattery(battery, to: &o)
        if let course = Self.course(fix) { o.add("cog", course) }
        if let extra { o.add("geomon", extra) }
        let ids = inside.sorted { (order[$0] ?? .max, $0) < (order[$1] ?? .max, $1) }
        if !ids.isEmpty {
            o.add("inregions", ids.map(name))
            o.add("inrids", ids)
        }
        o.add("lat", fix.coordinate.latitude, decimals: 7)
        o.add("lon", fix.coordinate.longitude, decimals: 7)
        o.add("t", trigger)
        o.add("tid", trackerID)
        o.add("tst", Self.seconds(fix.time))
        if let speed = Self.velocity(fix) { o.add("vel", speed) }
        return Publication(kind: .location, topic: settings.topic, payload: o.text, retain: retain, time: fix.time, eventID: eventID)
    }

    /// A `transition` message for an enter or exit event; `fix` (the one that confirmed it)
    /// gives the speed and course, which Home Assistant keeps until the next location.
    public func transition(_ event: GeoEvent, confirmedBy fix: Fix? = nil, battery: BatteryStatus? = nil) -> Publication {
        let id = event.fenceID ?? ""
        var o = JSONObject()
        o.add("_type", "transition")
        o.add("acc", Self.accuracy(event.accuracyMeters))
        Self.addBattery(battery, to: &o)
        if let fix, let course = Self.course(fix) { o.add("cog", course) }
        o.add("desc", event.fenceName ?? name(id))
        o.add("event", event.kind == .enter ? "enter" : "leave")
        if let figures = event.figures, !figures.isEmpty {
            var extra = JSONObject()
            figures.add(to: &extra)
            o.add("geomon", extra)
        }
        o.add("lat", event.coordinate.latitude, decimals: 7)
        o.add("lon", event.coordinate.longitude, decimals: 7)
        o.add("rid", id)
        o.add("t", "c")
        o.add("tid", trackerID)
        o.add("tst", Self.seconds(event.time))
        if let fix, let speed = Self.velocity(fix) { o.add("vel", speed) }
        o.add("wtst", event.kind == .exit ? stayTimes[id] ?? waypointTime(of: id) : waypointTime(of: id))
        return Publication(kind: .transition, topic: eventTopic, payload: o.text, retain: false, time: event.time, eventID: event.id)
    }

    /// OwnTracks `cog`: whole degrees 0…359.
    static func course(_ fix: Fix) -> Int? {
        guard let course = fix.courseDegrees, course.isFinite, course >= 0 else { return nil }
        return course.truncatingRemainder(dividingBy: 360).roundedClampedToInt % 360
    }

    /// OwnTracks `vel`: whole km/h.
    static func velocity(_ fix: Fix) -> Int? {
        guard let speed = fix.speedMetersPerSecond, speed.isFinite, speed >= 0 else { return nil }
        return (speed * 3.6).roundedClampedToInt
    }

    static func addBattery(_ battery: BatteryStatus?, to o: inout JSONObject) {
        guard let battery else { return }
        o.add("batt", battery.percent)
        o.add("bs", battery.state.rawValue)
    }

    /// The `waypoints` message: every circle fence, in profile order; nil when there is none.
    public func waypoints(fences: [Fence], at time: UTCTime) -> Publication? {
        guard let payload = Self.waypointsPayload(fences: fences) else { return nil }
        return Publication(kind: .waypoints, topic: waypointsTopic, payload: payload, retain: true, time: time)
    }

    /// `{"_type":"waypoints","waypoints":[…]}` with one `waypoint` per circle fence (`desc` the
    /// name or id, `rid` the id, `tst` the waypoint's own (pushed fences) or from the id), in order; nil without a circle. It is the
    /// `.otrw` export format too, and geomon reads it back with the same ids.
    public static func waypointsPayload(fences: [Fence]) -> String? {
        var items: [String] = []
        for fence in fences {
            guard case let .circle(center, radius)? = fence.shape else { continue }
            var w = JSONObject()
            w.add("_type", "waypoint")
            w.add("desc", fence.name ?? fence.id)
            w.add("lat", center.latitude, decimals: 7)
            w.add("lon", center.longitude, decimals: 7)
            w.add("rad", radius.roundedClampedToInt)
            w.add("rid", fence.id)
            w.add("tst", fence.waypointTime.map { Int($0) } ?? waypointTime(fenceID: fence.id))
            items.append(w.text)
        }
        guard !items.isEmpty else { return nil }
        var o = JSONObject()
        o.add("_type", "waypoints")
        o.add("waypoints", raw: JSON.array(raw: items))
        return o.text
    }

    /// The will (set with every connection) and the offline status: `{"_type":"lwt","tst":T}`.
    public static func lastWill(connectedAt time: UTCTime) -> String {
        var o = JSONObject()
        o.add("_type", "lwt")
        o.add("tst", seconds(time))
        return o.text
    }

    /// The online status published (retained) once a connection is accepted.
    public static func online(at time: UTCTime, trackerID: String) -> String {
        var o = JSONObject()
        o.add("_type", "status")
        o.add("online", true)
        o.add("tid", trackerID)
        o.add("tst", seconds(time))
        return o.text
    }

    /// A fence's OwnTracks region time (`wtst`): a stable number from its id (FNV-1a), so the
    /// same fence is the same region on every device and every run.
    public static func waypointTime(fenceID: String) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in fenceID.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return 1_000_000_000 + Int(hash % 1_000_000_000)
    }

    public static func accuracy(_ meters: Double) -> Int {
        guard meters.isFinite else { return 1 }
        return max(1, meters.roundedClampedToInt)
    }

    public static func seconds(_ time: UTCTime) -> Int {
        let ms = time.millisecondsSince1970
        return Int(ms >= 0 ? ms / 1000 : (ms - 999) / 1000)
    }

    private func name(_ id: String) -> String { names[id] ?? id }
}
