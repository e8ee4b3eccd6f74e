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

    /// One decimal, always shown (`-35.2`, `5.0`); `inf` and `-inf` for unbounded distances.
    static func tenths(_ value: Double) -> String {
        guard value.isFinite else { return value < 0 ? "-inf" : "inf" }
        return NumberText.fixed(value, 1)
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
