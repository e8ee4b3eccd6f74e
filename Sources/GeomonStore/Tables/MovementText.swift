import GeomonCore

// The movement rules' state and the events' figures as the store keeps them: one line per
// value, `name field…`, numbers in Swift's shortest round-trip form (a state read back is the
// state written, bit for bit, so a restart decides as an uninterrupted run does).

extension TrackPoint {
    /// `ms lat lon accuracy`: four fields of a stored line.
    var storedFields: String {
        "\(time.millisecondsSince1970) \(coordinate.latitude) \(coordinate.longitude) \(accuracyMeters)"
    }

    /// The point in `fields[i..<i+4]` (`storedFields`); nil when they are not one.
    init?(storedFields f: [String], at i: Int) {
        guard f.count >= i + 4, let ms = Int64(f[i]), let lat = Double(f[i + 1]), let lon = Double(f[i + 2]), let a = Double(f[i + 3]) else { return nil }
        self.init(time: UTCTime(millisecondsSince1970: ms), coordinate: Coordinate(latitude: lat, longitude: lon), accuracyMeters: a)
    }
}

extension EventFigures {
    /// `name=value` pairs separated by spaces (the events table's `figures` column).
    var storedText: String? {
        var fields: [String] = []
        func add(_ name: String, _ value: Double?) { if let value { fields.append("\(name)=\(value)") } }
        if let source { fields.append("source=\(source)") }
        add("inside_s", insideSeconds)
        if let since { fields.append("since=\(since.millisecondsSince1970)") }
        add("duration_s", durationSeconds)
        add("distance_m", distanceMeters)
        add("moving_s", movingSeconds)
        add("max_speed", maxSpeedMetersPerSecond)
        add("mean_speed", meanSpeedMetersPerSecond)
        if let start { fields.append("start=\(start.latitude),\(start.longitude)") }
        if let center { fields.append("center=\(center.latitude),\(center.longitude)") }
        add("radius_m", radiusMeters)
        add("limit", limitMetersPerSecond)
        // Mode names are [a-z0-9-]: no spaces, no '='.
        if let mode { fields.append("mode=\(mode)") }
        if let modeFrom { fields.append("mode_from=\(modeFrom)") }
        if let modeCause { fields.append("cause=\(modeCause.rawValue)") }
        if let batteryPercent { fields.append("battery=\(batteryPercent)") }
        if let externalPower { fields.append("external_power=\(externalPower ? 1 : 0)") }
        return fields.isEmpty ? nil : fields.joined(separator: " ")
    }

    /// Reads `storedText` back; nil when it is not one.
    init?(storedText text: String) {
        self.init()
        for field in text.split(separator: " ") {
            guard let eq = field.firstIndex(of: "=") else { return nil }
            let name = field[..<eq]
            let value = String(field[field.index(after: eq)...])
            func coordinate() -> Coordinate? {
                let p = value.split(separator: ",")
                guard p.count == 2, let lat = Double(p[0]), let lon = Double(p[1]) else { return nil }
                return Coordinate(latitude: lat, longitude: lon)
            }
            switch name {
            case "source": source = value
            case "inside_s": insideSeconds = Double(value)
            case "since": since = Int64(value).map(UTCTime.init(millisecondsSince1970:))
            case "duration_s": durationSeconds = Double(value)
            case "distance_m": distanceMeters = Double(value)
            case "moving_s": movingSeconds = Double(value)
            case "max_speed": maxSpeedMetersPerSecond = Double(value)
            case "mean_speed": meanSpeedMetersPerSecond = Double(value)
            case "start": start = coordinate()
            case "center": center = coordinate()
            case "radius_m": radiusMeters = Double(value)
            case "limit": limitMetersPerSecond = Double(value)
            case "mode": mode = value
            case "mode_from": modeFrom = value
            case "cause": modeCause = ModeCause(rawValue: value)
            case "battery": batteryPercent = Int(value)
            case "external_power": externalPower = value == "1"
            default: continue
            }
        }
    }
}

extension MovementState {
    /// Lines `name fields…` (the engine_state table's `movement` column).
    var storedText: String {
        var lines: [String] = []
        func point(_ p: TrackPoint) -> String { p.storedFields }
        func totals(_ t: TripTotals) -> String { "\(t.distanceMeters) \(t.movingSeconds) \(t.maxSpeedMetersPerSecond)" }
        func stay(_ name: String, _ s: Stay) {
            lines.append("\(name) \(point(s.first)) \(s.lastInside.millisecondsSince1970) \(s.sumLatitude) \(s.sumLongitude) \(s.count) "
                + "\(s.confirmed ? 1 : 0) " + (s.tripAtFirst.map(totals) ?? "-"))
            if let id = s.fenceID { lines.append("\(name)_fence \(id)") }
            if let fenceName = s.fenceName { lines.append("\(name)_fence_name \(fenceName)") }
        }
        if let motion, let since = motionSince { lines.append("motion \(motion.rawValue) \(since.millisecondsSince1970)") }
        if let candidate, let since = candidateSince { lines.append("candidate \(candidate.rawValue) \(point(since))") }
        if let sensor, let since = sensorSince { lines.append("sensor \(sensor.rawValue) \(since.millisecondsSince1970)") }
        if let last { lines.append("last \(point(last))") }
        lines.append("odometer \(odometerMeters)")
        if let odometerAnchor { lines.append("odometer_anchor \(point(odometerAnchor))") }
        if let departure { lines.append("departure \(point(departure)) \(totals(sinceDeparture))") }
        if let trip { lines.append("trip \(point(trip.start)) \(totals(trip.totals)) \(trip.announced ? 1 : 0)") }
        if let stood { lines.append("stood \(point(stood))") }
        if let lastNear { lines.append("near \(point(lastNear)) \(totals(sinceNear)) \(beyond)") }
        if let firstBeyond { lines.append("first_beyond \(firstBeyond.millisecondsSince1970)") }
        if let stop { stay("stop", stop) }
        if let visit { stay("visit", visit) }
        if let visitSeen { lines.append("visit_seen \(visitSeen.millisecondsSince1970)") }
        return lines.joined(separator: "\n")
    }

    /// Reads `storedText` back; nil when a line is not one.
    init?(storedText text: String) {
        self.init()
        for line in text.split(separator: "\n") {
            let name: Substring
            let rest: Substring
            if let space = line.firstIndex(of: " ") {
                name = line[..<space]
                rest = line[line.index(after: space)...]
            } else {
                name = line
                rest = ""
            }
            let f = rest.split(separator: " ").map(String.init)
            func point(_ i: Int) -> TrackPoint? { TrackPoint(storedFields: f, at: i) }
            func totals(_ i: Int) -> TripTotals? {
                guard f.count >= i + 3, let d = Double(f[i]), let m = Double(f[i + 1]), let v = Double(f[i + 2]) else { return nil }
                var t = TripTotals()
                t.distanceMeters = d
                t.movingSeconds = m
                t.maxSpeedMetersPerSecond = v
                return t
            }
            func time(_ i: Int) -> UTCTime? { f.count > i ? Int64(f[i]).map(UTCTime.init(millisecondsSince1970:)) : nil }
            func stay() -> Stay? {
                guard let first = point(0), let lastInside = time(4), f.count >= 9,
                      let sumLat = Double(f[5]), let sumLon = Double(f[6]), let count = Int(f[7]) else { return nil }
                var s = Stay(first: first, tripAtFirst: f.count >= 12 ? totals(9) : nil)
                s.lastInside = lastInside
                s.sumLatitude = sumLat
                s.sumLongitude = sumLon
                s.count = count
                s.confirmed = f[8] == "1"
                return s
            }
            switch name {
            case "motion":
                guard let m = f.first.flatMap(Motion.init(rawValue:)), let since = time(1) else { return nil }
                motion = m
                motionSince = since
            case "candidate":
                guard let m = f.first.flatMap(Motion.init(rawValue:)), let p = point(1) else { return nil }
                candidate = m
                candidateSince = p
            case "sensor":
                guard let m = f.first.flatMap(Motion.init(rawValue:)), let since = time(1) else { return nil }
                sensor = m
                sensorSince = since
            case "last": last = point(0)
            case "odometer": odometerMeters = f.first.flatMap(Double.init) ?? 0
            case "odometer_anchor": odometerAnchor = point(0)
            case "departure":
                departure = point(0)
                sinceDeparture = totals(4) ?? TripTotals()
            case "trip":
                guard let start = point(0), let t = totals(4) else { return nil }
                var trip = TripProgress(start: start)
                trip.totals = t
                trip.announced = f.count > 7 && f[7] == "1"
                self.trip = trip
            case "stood": stood = point(0)
            case "near":
                lastNear = point(0)
                sinceNear = totals(4) ?? TripTotals()
                beyond = f.count > 7 ? Int(f[7]) ?? 0 : 0
            case "first_beyond": firstBeyond = time(0)
            case "stop": stop = stay()
            case "visit": visit = stay()
            case "stop_fence": stop?.fenceID = String(rest)
            case "stop_fence_name": stop?.fenceName = String(rest)
            case "visit_fence": visit?.fenceID = String(rest)
            case "visit_fence_name": visit?.fenceName = String(rest)
            case "visit_seen": visitSeen = time(0)
            default: continue
            }
        }
    }
}

extension CooldownRecord {
    /// One line per record: `last_ms held_ms|- lat lon accuracy|- - - id` then, when known, a
    /// tab and the fence name (the id last: it may hold spaces).
    static func storedText(_ records: [CooldownRecord]) -> String {
        records.map { r in
            var held = "- - - -"
            if let since = r.suppressedSince, let c = r.suppressedCoordinate {
                held = "\(since.millisecondsSince1970) \(c.latitude) \(c.longitude) \(r.suppressedAccuracyMeters ?? 0)"
            }
            return "\(r.lastDelivered.millisecondsSince1970) \(held) \(r.fenceID)" + (r.fenceName.map { "\t" + $0 } ?? "")
        }.joined(separator: "\n")
    }

    /// Reads `storedText` back (lines that are not one are skipped).
    static func records(storedText text: String) -> [CooldownRecord] {
        text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
            let f = parts[0].split(separator: " ", maxSplits: 5, omittingEmptySubsequences: false)
            guard f.count == 6, let last = Int64(f[0]) else { return nil }
            var r = CooldownRecord(fenceID: String(f[5]), lastDelivered: UTCTime(millisecondsSince1970: last))
            if let since = Int64(f[1]), let lat = Double(f[2]), let lon = Double(f[3]) {
                r.suppressedSince = UTCTime(millisecondsSince1970: since)
                r.suppressedCoordinate = Coordinate(latitude: lat, longitude: lon)
                r.suppressedAccuracyMeters = Double(f[4])
            }
            if parts.count == 2 { r.fenceName = String(parts[1]) }
            return r
        }
    }
}

extension SpeedingRecord {
    /// One line per record: `since(ms lat lon acc) last(ms lat lon acc) max distance reported id`
    /// (the id last: it may hold spaces).
    static func storedText(_ records: [SpeedingRecord]) -> String {
        records.map { r in
            "\(r.since.storedFields) \(r.last.storedFields) \(r.maxSpeedMetersPerSecond) \(r.distanceMeters) \(r.reported ? 1 : 0) \(r.fenceID)"
        }.joined(separator: "\n")
    }

    /// Reads `storedText` back (lines that are not one are skipped).
    static func records(storedText text: String) -> [SpeedingRecord] {
        text.split(separator: "\n").compactMap { line in
            let f = line.split(separator: " ", maxSplits: 11, omittingEmptySubsequences: false).map(String.init)
            guard f.count == 12, let since = TrackPoint(storedFields: f, at: 0), let last = TrackPoint(storedFields: f, at: 4), let speed = Double(f[8]), let d = Double(f[9]) else { return nil }
            var r = SpeedingRecord(fenceID: f[11], since: since, speed: speed)
            r.last = last
            r.distanceMeters = d
            r.reported = f[10] == "1"
            return r
        }
    }
}

extension ModeState {
    /// `name=value` pairs separated by spaces (the engine_state table's `mode` column):
    /// `mode=parked since=MS capacity=76 online=0 supply=1 held=a,b activity=foot moving=1`; a
    /// field unknown is left out.
    var storedText: String {
        var fields = ["mode=\(name)"]
        if let since { fields.append("since=\(since.millisecondsSince1970)") }
        if let capacity = supply?.capacity { fields.append("capacity=\(capacity)") }
        if let online = supply?.online { fields.append("online=\(online ? 1 : 0)") }
        if supply != nil { fields.append("supply=1") }
        if !batteryHeld.isEmpty { fields.append("held=" + batteryHeld.joined(separator: ",")) }
        if let activity { fields.append("activity=\(activity.rawValue)") }
        if let moving { fields.append("moving=\(moving ? 1 : 0)") }
        return fields.joined(separator: " ")
    }

    /// Reads `storedText` back; nil when it is not one.
    init?(storedText text: String) {
        self.init()
        var capacity: Int?
        var online: Bool?
        var hasSupply = false
        var hasMode = false
        for field in text.split(separator: " ") {
            guard let eq = field.firstIndex(of: "=") else { return nil }
            let value = String(field[field.index(after: eq)...])
            switch field[..<eq] {
            case "mode":
                name = value
                hasMode = true
            case "since": since = Int64(value).map(UTCTime.init(millisecondsSince1970:))
            case "capacity": capacity = Int(value)
            case "online": online = value == "1"
            case "supply": hasSupply = true
            case "held": batteryHeld = value.split(separator: ",").map(String.init)
            case "activity": activity = Activity(rawValue: value)
            case "moving": moving = value == "1"
            default: continue
            }
        }
        guard hasMode else { return nil }
        if hasSupply { supply = PowerSupplyReading(capacity: capacity, online: online) }
    }
}
