public import GeomonCore

extension EventRule {
    /// The rule in words, as stored, printed and handed to hooks, e.g.
    /// `enter: outside -> inside, 2 consecutive certain-inside fixes (s <= -(a+h)); first s=-35.2 m a=5.0 m h=10.0 m`.
    public var text: String {
        switch self {
        case let .recorded(text):
            return text
        case let .transition(t):
            let evidence = "\(t.confirmations) consecutive certain-\(t.to.rawValue) fixes"
                + " (\(t.to == .inside ? "s <= -(a+h)" : "s >= a+h")); first s=\(Self.tenths(t.firstSignedDistanceMeters)) m"
                + " a=\(Self.tenths(t.firstAccuracyMeters)) m h=\(Self.tenths(t.hysteresisMeters)) m"
                + (t.confirmTime > .zero ? ", held \(Self.tenths(t.heldFor.secondsValue)) s >= \(Self.tenths(t.confirmTime.secondsValue)) s" : "")
            if t.from == .unknown { return "initial inside (initial: report): " + evidence }
            return "\(t.to == .inside ? "enter" : "exit"): \(t.from.rawValue) -> \(t.to.rawValue), " + evidence
        case let .dwell(d):
            let repeated = d.number > 1 || d.every != nil
                ? " (dwell \(d.number)\(d.every.map { ", every \(Self.tenths($0.secondsValue)) s" } ?? ""))" : ""
            return "dwell: inside since \(d.insideSince.rfc3339) for \(Self.tenths(d.dwell.secondsValue)) s\(repeated), "
                + (d.byFix ? "fired by the first fix past it" : "fired by deadline at the enter position")
        case let .activated(since):
            return "enter: inside since \(since.rfc3339) when the fence became active (initial: report)"
        case let .closed(c):
            let since = c.insideSince.map { "; inside since \($0.rfc3339)" } ?? ""
            switch c.reason {
            case .windowClosed: return "exit: the fence's active window closed while inside\(since)"
            case .removed: return "exit: the fence was removed while inside\(since)"
            case .replaced: return "exit: the fence was replaced (renamed, moved or resized) while inside\(since)"
            }
        case let .approach(a):
            let bands = [a.bandMeters.map { "the \(NumberText.short($0, 1)) m band" },
                         a.bandETA.map { "the \(NumberText.short($0.secondsValue, 1)) s ETA band" }].compactMap { $0 }
            var text = "approach: within \(bands.joined(separator: " and ")), d=\(Self.tenths(a.distanceMeters)) m"
                + " (>= \(Self.tenths(a.distanceLowerBoundMeters)) m), \(a.direction.rawValue) at \(NumberText.fixed(a.closingSpeedMetersPerSecond, 2)) m/s"
                + " over \(a.samples) fixes in \(Self.tenths(a.span.secondsValue)) s"
            if let eta = a.eta { text += ", eta \(Self.tenths(eta.secondsValue)) s" }
            if let lower = a.etaLowerBound { text += " (>= \(Self.tenths(lower.secondsValue)) s at max_speed)" }
            return text
        case let .cooledDown(since, cooldown):
            if cooldown == .zero { return "enter: inside since \(since.rfc3339); delivered when the fence's cooldown was removed" }
            return "enter: inside since \(since.rfc3339); delivered when the fence's cooldown (\(Self.tenths(cooldown.secondsValue)) s) ended"
        case let .movement(kind, f):
            return Self.movementText(kind, f)
        case let .location(l):
            guard let moved = l.movedMeters, let elapsed = l.elapsed else { return "location: first usable fix" }
            return "location: moved \(Self.tenths(moved)) m >= \(Self.tenths(l.thresholdMeters)) m from the last reported location"
                + " after \(Self.tenths(elapsed.secondsValue)) s >= \(Self.tenths(l.minInterval.secondsValue)) s"
        }
    }

    /// The figures of an approach event as `(name, JSON value)` pairs: the event JSON's
    /// `approach` object, the hook's `GEOMON_APPROACH_*` variables and the OwnTracks extension.
    public static func approachMembers(_ a: Approach) -> [(name: String, value: String)] {
        var members: [(String, String)] = []
        if let band = a.bandMeters { members.append(("band_m", JSON.number(band, decimals: 1))) }
        if let band = a.bandETA { members.append(("band_eta_s", JSON.number(band.secondsValue, decimals: 1))) }
        members += [
            ("distance_m", JSON.number(a.distanceMeters, decimals: 1)),
            ("distance_min_m", JSON.number(a.distanceLowerBoundMeters, decimals: 1)),
            ("direction", a.direction.rawValue),
            ("closing_speed_mps", JSON.number(a.closingSpeedMetersPerSecond, decimals: 2)),
        ]
        if let eta = a.eta { members.append(("eta_s", JSON.number(eta.secondsValue, decimals: 1))) }
        if let lower = a.etaLowerBound { members.append(("eta_min_s", JSON.number(lower.secondsValue, decimals: 1))) }
        return members
    }

    /// The approach figures as a JSON object (`approachMembers`).
    public static func approachObject(_ a: Approach) -> JSONObject {
        var o = JSONObject()
        for (name, value) in approachMembers(a) {
            if name == "direction" { o.add(name, value) } else { o.add(name, raw: value) }
        }
        return o
    }

    /// A movement rule in words, e.g. `trip_end: stopped within 100.0 m for stop_after; 12345.6 m
    /// in 1834.0 s (moving 1700.0 s), max 25.0 m/s`.
    static func movementText(_ kind: EventKind, _ f: EventFigures) -> String {
        func s(_ v: Double?) -> String { v.map { tenths($0) } ?? "?" }
        switch kind {
        case .moving, .still:
            return "\(kind.rawValue): " + (f.source == "motion" ? "the motion source's word" : "GNSS fixes held for movement.confirm")
        case .tripStart:
            return "trip_start: seen beyond the stop radius of the place it stood, dated at the first fix that showed movement"
        case .tripEnd:
            return "trip_end: stopped for stop_after; \(s(f.distanceMeters)) m in \(s(f.durationSeconds)) s"
                + " (moving \(s(f.movingSeconds)) s), max \(s(f.maxSpeedMetersPerSecond)) m/s"
        case .arrival:
            return "arrival: within \(s(f.radiusMeters)) m for min_duration since \(f.since?.rfc3339 ?? "?")"
        case .departure:
            return "departure: beyond \(s(f.radiusMeters)) m of the visit's first fix after \(s(f.durationSeconds)) s"
        case .overspeed:
            return "overspeed: above the limit of \(s(f.limitMetersPerSecond)) m/s (plus tolerance) for the fence's speed_limit.for; max \(s(f.maxSpeedMetersPerSecond)) m/s so far"
        case .overspeedEnd:
            return "overspeed_end: no longer above \(s(f.limitMetersPerSecond)) m/s after \(s(f.durationSeconds)) s and \(s(f.distanceMeters)) m, max \(s(f.maxSpeedMetersPerSecond)) m/s"
        case .mode:
            return "mode: \(f.modeFrom ?? "?") -> \(f.mode ?? "?"), " + modeCauseText(f)
        case .enter, .exit, .dwell, .location, .approach:
            return kind.rawValue
        }
    }

    /// Why the mode changed, in words: the input that changed and what it now says.
    static func modeCauseText(_ f: EventFigures) -> String {
        let power = PowerSupplyReading.powerText(f.externalPower) ?? "external power unknown"
        let battery = PowerSupplyReading.batteryText(f.batteryPercent) ?? "no battery reading"
        switch f.modeCause {
        case .start?: return "the first condition that holds at start (\(power), \(battery))"
        case .externalPower?: return power + " (\(battery))"
        case .battery?: return battery + " (\(power))"
        case .activity?: return "the sensed activity changed"
        case .moving?: return "the motion state changed"
        case .time?: return "an active: window opened or closed"
        case nil: return "?"
        }
    }

    /// One decimal, always shown (`-35.2`, `5.0`); `inf` and `-inf` for unbounded distances.
    static func tenths(_ value: Double) -> String {
        guard value.isFinite else { return value < 0 ? "-inf" : "inf" }
        return NumberText.fixed(value, 1)
    }
}

extension EventFigures {
    /// The figures as `(name, JSON value)` pairs, in one order: members of the event JSON,
    /// the hook's `GEOMON_*` variables (upper-cased) and the OwnTracks `geomon` extension.
    public var members: [(name: String, value: String)] {
        var m: [(String, String)] = []
        func add(_ name: String, _ value: Double?, _ decimals: Int) {
            if let value, value.isFinite { m.append((name, JSON.number(value, decimals: decimals))) }
        }
        if let source { m.append(("source", JSON.string(source))) }
        add("inside_s", insideSeconds, 1)
        if let since { m.append(("since", JSON.string(since.rfc3339))) }
        add("duration_s", durationSeconds, 1)
        add("distance_m", distanceMeters, 1)
        add("moving_s", movingSeconds, 1)
        add("max_speed_mps", maxSpeedMetersPerSecond, 2)
        add("mean_speed_mps", meanSpeedMetersPerSecond, 2)
        add("start_lat", start?.latitude, 7)
        add("start_lon", start?.longitude, 7)
        add("center_lat", center?.latitude, 7)
        add("center_lon", center?.longitude, 7)
        add("radius_m", radiusMeters, 1)
        add("limit_mps", limitMetersPerSecond, 2)
        if let mode { m.append(("mode", JSON.string(mode))) }
        if let modeFrom { m.append(("from", JSON.string(modeFrom))) }
        if let modeCause { m.append(("cause", JSON.string(modeCause.rawValue))) }
        if let batteryPercent { m.append(("battery_pct", String(batteryPercent))) }
        if let externalPower { m.append(("external_power", externalPower ? "true" : "false")) }
        return m
    }

    /// Adds the members to `object`.
    public func add(to object: inout JSONObject) {
        for (name, value) in members { object.add(name, raw: value) }
    }

    /// The members as hook variables: `GEOMON_DISTANCE_M=12345.6`, strings without quotes.
    public var variables: [String: String] {
        var env: [String: String] = [:]
        for (name, value) in members {
            let plain = value.hasPrefix("\"") ? String(value.dropFirst().dropLast()) : value
            env["GEOMON_" + name.uppercased()] = plain
        }
        return env
    }
}

extension PowerReason {
    /// One line of `key=value` pairs, e.g. `sleep bound=heading d=812m acc=5m v=13.2m/s sleep=74.2s ttff=2s`.
    public var text: String {
        var parts = [kind.rawValue]
        if let bound { parts.append("bound=\(bound.rawValue)") }
        if let distanceMeters { parts.append("d=\(NumberText.fixed(distanceMeters, 0))m") }
        if let accuracyMeters { parts.append("acc=\(NumberText.fixed(accuracyMeters, 0))m") }
        if let speedMetersPerSecond { parts.append("v=\(NumberText.fixed(speedMetersPerSecond, 1))m/s") }
        if let sleep { parts.append("sleep=\(NumberText.fixed(sleep.secondsValue, 1))s") }
        if let ttff { parts.append("ttff=\(NumberText.fixed(ttff.secondsValue, 0))s") }
        return parts.joined(separator: " ")
    }

}

extension MotionBounds {
    /// For `validate`, `fences`, `status` and logs: `max_speed 4 m/s, max_acceleration 1 m/s²`.
    public var text: String {
        "max_speed \(NumberText.short(maxSpeedMetersPerSecond, 1)) m/s, max_acceleration \(NumberText.short(maxAccelerationMetersPerSecondSquared, 1)) m/s²"
    }
}

extension PolicySettings {
    /// `planned for foot (policy.activity): max_speed 4 m/s, max_acceleration 1 m/s²`, with the
    /// keys that override the activity's figures named: what `validate` and `fences` print.
    public var plannedBoundsText: String {
        var overrides: [String] = []
        if activity != .any, maxSpeedSet { overrides.append("max_speed") }
        if activity != .any, maxAccelerationSet { overrides.append("max_acceleration") }
        let source = activity == .any ? "policy.max_speed and max_acceleration" : "policy.activity"
        return "planned for \(activity.rawValue) (\(source)" + (overrides.isEmpty ? "" : "; \(overrides.joined(separator: " and ")) set") + "): \(plannedBounds.text)"
    }
}

extension PowerAction {
    /// `gnss-on REASON`, `gnss-off REASON`, `wake-at TIME REASON`, `coarse-on REASON`, `coarse-off REASON`.
    public var text: String {
        switch self {
        case let .gnssOn(r): "gnss-on \(r.text)"
        case let .gnssOff(r): "gnss-off \(r.text)"
        case let .wakeAt(t, r): "wake-at \(t.rfc3339) \(r.text)"
        case let .coarseOn(r): "coarse-on \(r.text)"
        case let .coarseOff(r): "coarse-off \(r.text)"
        }
    }
}

extension GeometryLimitProblem {
    /// The validator's message.
    public var text: String {
        let maxLat = Int(geometryMaxLatitudeDegrees)
        func ring(_ r: Ring) -> String { r.hole == 0 ? "polygon \(r.member) shell" : "polygon \(r.member) hole \(r.hole)" }
        switch self {
        case .circleNotFinite:
            return "circle has a non-finite centre or radius"
        case let .circleTooLarge(radius):
            return "circle radius \(NumberText.short(radius, 2)) m is over the supported 1000 km"
        case let .circleReachesLatitude(reach):
            let pole = reach < 0 ? "the South Pole" : "the North Pole"
            let whereTo = abs(reach) >= 90 ? pole : "latitude \(NumberText.short(reach, 2))°"
            return "circle reaches \(whereTo), beyond the supported ±\(maxLat)° (fences near the poles are not supported)"
        case let .ringNotFinite(r):
            return "\(ring(r)) has a non-finite coordinate"
        case let .ringReachesLatitude(r, worst):
            return "\(ring(r)) reaches latitude \(NumberText.short(worst, 2))°, beyond the supported ±\(maxLat)° (fences near the poles are not supported)"
        case let .ringEncirclesPole(r):
            return "\(ring(r)) encircles a pole (its longitudes wind around the globe); split it or keep fences within ±\(maxLat)°"
        case .corridorNotFinite:
            return "corridor has a non-finite position or width"
        case let .corridorLineTooShort(line):
            return "corridor line \(line) needs at least 2 distinct positions"
        case let .corridorTooWide(width):
            return "corridor width \(NumberText.short(width, 2)) m is over the supported 2000 km"
        case let .corridorReachesLatitude(reach):
            let whereTo = abs(reach) >= 90 ? (reach < 0 ? "the South Pole" : "the North Pole") : "latitude \(NumberText.short(reach, 2))°"
            return "corridor reaches \(whereTo), beyond the supported ±\(maxLat)° (fences near the poles are not supported)"
        case let .spansLongitude(span):
            return "fence spans \(NumberText.short(span, 2))° of longitude, over the supported 180° (edges that change longitude by more than 180° are taken to cross the antimeridian)"
        }
    }
}

extension PowerSupplyReading {
    /// `external power online` / `offline`; nil when unknown.
    public static func powerText(_ online: Bool?) -> String? {
        online.map { $0 ? "external power online" : "external power offline" }
    }

    /// `battery 76 %`; nil without a capacity.
    public static func batteryText(_ capacity: Int?) -> String? {
        capacity.map { "battery \($0) %" }
    }

    /// `external power offline, battery 76 %`: what is known.
    public var text: String {
        [Self.powerText(online), Self.batteryText(capacity)].compactMap { $0 }.joined(separator: ", ")
    }
}

extension ModeCondition {
    /// `external power online, battery below 20 %, active in windows`; `always` without a
    /// condition.
    public var text: String {
        var parts: [String] = []
        if let power = PowerSupplyReading.powerText(externalPower) { parts.append(power) }
        if let batteryBelow { parts.append("battery below \(batteryBelow) %") }
        if let batteryAbove { parts.append("battery above \(batteryAbove) %") }
        if let activity { parts.append("activity \(activity.rawValue)") }
        if let moving { parts.append(moving ? "moving" : "still") }
        if active != nil { parts.append("within its active: windows") }
        return parts.isEmpty ? "always" : parts.joined(separator: ", ")
    }
}

extension ModeRule {
    /// `driving: continuous when external power online` — what the entry changes and when.
    public var text: String {
        var changes: [String] = []
        if let mode { changes.append(mode.rawValue) }
        if policy != nil { changes.append("its policy") }
        if let mqttLocations { changes.append("MQTT locations \(mqttLocations.rawValue)") }
        if coarse == false { changes.append("no coarse source") }
        return "\(name): \(changes.isEmpty ? "the profile's settings" : changes.joined(separator: ", ")) when \(when.text)"
    }
}
