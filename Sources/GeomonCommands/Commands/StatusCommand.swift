import GeomonCore
import GeomonDaemon
import GeomonFormat
import GeomonStore

/// `geomon status`: Shows fence states, the last fix and pending deliveries.
struct StatusCommand: GeomonCommand {
    static let spec = CommandSpec(
        "status",
        abstract: "Shows fence states, the last fix and pending deliveries",
        discussion: """
        Shows what the database records: the profile, the last processed fix, every fence with a
        stored state (fences not listed are in the implicit state shown), and delivery counts.
        For a database a `geomon run` instance owns, also the daemon's own status: whether it is
        running, the receiver state and why, gpsd's state, the fences inside. Small and cheap
        enough for a status bar to poll.
        """,
        options: [readDatabaseOption, profileDatabaseOption, insecureProfileOption, .choice("--format", ["text", "json"], "text (default) or json")]
    )

    var database: DatabaseChoice
    var json: Bool

    init(_ arguments: ParsedArguments) throws {
        database = try DatabaseChoice(arguments)
        json = arguments.choice("--format", default: "text") == "json"
    }

    func run() throws -> Int32 {
        let store = try openReadOnlyStore(try database.path())
        // One commit's state throughout, whatever a running daemon commits meanwhile.
        let (snapshot, state, lastFix, pending, dead, eventCount, pendingMessages, refusedMessages, daemon) = try store.consistentRead {
            (try store.loadSnapshot(), try store.engineState(), try store.fixLog.last(), try store.deliveryQueue.pendingDeliveryCount(),
             try store.deliveryQueue.deliveries(status: .dead).count, try store.eventLog.count(), try store.outbox.pendingPublicationCount(),
             try store.outbox.refusedPublicationCount(),
             // The daemon's last written status; "running" is decided by the instance lock, so
             // a killed daemon is not reported as running.
             try store.daemonStatus.read())
        }
        let profile = state?.profile
        // Fences without a row are in the engine's implicit state (outside once confirmed).
        let implicit = state?.implicitState?.rawValue ?? "unknown"
        // Running: a `geomon run` holds the database (a replay holding it writes no status).
        let holder = InstanceLock.holderAndRole(databasePath: store.path)
        let running = holder?.role == "run"
        if json {
            var o = JSONObject()
            o.add("profile", profile)
            o.add("schema_version", try store.userVersion())
            o.add("last_fix_time", snapshot.lastFixTime?.rfc3339)
            if let lastFix {
                o.add("last_fix", FixEncoding.object(lastFix))
            } else {
                o.add("last_fix", raw: "null")
            }
            o.add("usable_fixes", snapshot.usableFixCount)
            o.add("other_fences", implicit)
            let fences = snapshot.records.map { r -> String in
                var f = JSONObject()
                f.add("id", r.fenceID)
                f.add("state", r.state.rawValue)
                f.add("since", r.stateSince?.rfc3339)
                f.add("dwell_fired", r.dwellFired)
                f.add("dwells", r.dwellCount)
                if let p = r.pending {
                    var q = JSONObject()
                    q.add("state", p.state.rawValue)
                    q.add("count", p.count)
                    q.add("since", p.firstTime.rfc3339)
                    f.add("pending", q)
                } else {
                    f.add("pending", raw: "null")
                }
                return f.text
            }
            o.add("fences", raw: JSON.array(raw: fences))
            o.add("movement", raw: Self.movementJSON(snapshot.movement))
            // A stored mode of nothing: a profile without `modes:` forgot one.
            o.add("mode", raw: snapshot.mode.flatMap { $0 == ModeState() ? nil : Self.modeJSON($0) } ?? "null")
            o.add("events", eventCount)
            o.add("pending_deliveries", pending)
            o.add("dead_deliveries", dead)
            o.add("pending_messages", pendingMessages)
            o.add("refused_messages", refusedMessages)
            if let daemon {
                o.add("daemon", raw: RuntimeStatusText.json(daemon, running: running, pendingDeliveries: pending, pendingMessages: pendingMessages))
            } else {
                o.add("daemon", raw: "null")
            }
            print(o.text)
        } else {
            var daemonLine = running ? "running" : "not running"
            if let holder, !running { daemonLine += " (a geomon \(holder.role), pid \(holder.pid), holds the database)" }
            if let daemon {
                // A daemon that stopped left its last record: said as such, not as the present.
                let receiver = "receiver \(daemon.receiverOn ? "on" : "off") (\(daemon.receiverReason))"
                daemonLine += running ? ", " + receiver : "; when it last ran: " + receiver
            }
            print("profile:            \(profile ?? "-")")
            print("daemon:             \(daemonLine)")
            // What a daemon that stopped left of its run: said as such, not as the present.
            let then = running ? "" : " (when it last ran)"
            if let daemon {
                for (label, source) in [("gnss:               ", daemon.gnss), ("coarse:             ", daemon.coarse)] {
                    guard let source else { continue }
                    print(label + source.plugin + (source.endpoint.map { " \($0)" } ?? "") + ", \(source.state)" + then)
                }
                print("inside:             " + (daemon.inside.isEmpty ? "no fence" : daemon.inside.joined(separator: ", ")) + then)
                print("uptime:             \(daemon.uptimeSeconds) s, \(daemon.loopWakeups) loop wake-ups" + then)
            }
            print("last fix:           " + (lastFix.map {
                "\($0.time.rfc3339)  \(NumberText.short($0.coordinate.latitude, 7)),\(NumberText.short($0.coordinate.longitude, 7))  ±\(NumberText.short($0.horizontalAccuracyMeters, 1)) m"
            } ?? "none"))
            if let line = Self.movementText(snapshot.movement) { print("movement:           " + line) }
            if let mode = snapshot.mode, mode != ModeState() { print("mode:               " + Self.modeText(mode)) }
            if let power = daemon?.gnss?.power {
                print("receiver switch:    power: \(power.method), \(power.state); measured on \(NumberText.short(power.measuredOnSeconds, 0)) s since start" + then)
            }
            if let planning = daemon?.planning {
                print("planned for:        \(planning.activity) (\(planning.from)): \(planning.bounds)"
                      + (planning.widened ? ", widened for this trip" : "")
                      + (planning.violations > 0 ? "; \(planning.violations) violation\(planning.violations == 1 ? "" : "s") of the bounds" : "") + then)
                if let planned = planning.ttffHotSeconds {
                    print("time to first fix:  planned \(NumberText.short(planned, 2)) s (hot)"
                          + (planning.ttffMeasuredSeconds.map { "; measured \(NumberText.short($0, 2)) s, the median of the last \(planning.ttffSamples) after hot wakes" } ?? "") + then)
                }
            }
            if let motion = daemon?.motion {
                print("motion:             \(motion.state)" + (motion.since.map { " since \($0.rfc3339)" } ?? "") + " (\(motion.plugin))" + then)
            }
            print("events:             \(eventCount)")
            print("pending deliveries: \(pending)")
            print("dead deliveries:    \(dead)")
            if let mqtt = daemon?.mqtt {
                let state = running ? mqtt.state : "not running"
                print("mqtt:               \(mqtt.broker), \(state), \(pendingMessages) pending"
                      + (refusedMessages > 0 ? ", \(refusedMessages) refused by the broker ('geomon publish list')" : ""))
            } else if pendingMessages > 0 {
                print("pending messages:   \(pendingMessages)")
            }
            print("fences:             (others \(implicit))")
            for r in snapshot.records {
                var line = "  \(r.fenceID)  \(r.state.rawValue)"
                if let since = r.stateSince { line += " since \(since.rfc3339)" }
                if r.dwellCount == 1 { line += ", dwell fired" } else if r.dwellCount > 1 { line += ", \(r.dwellCount) dwells fired" }
                if let p = r.pending { line += ", pending \(p.state.rawValue) ×\(p.count) since \(p.firstTime.rfc3339)" }
                print(line)
            }
        }
        return 0
    }
}

extension StatusCommand {
    /// The mode in effect (`modes:`), since when, and the power supply it was chosen on.
    static func modeJSON(_ m: ModeState) -> String {
        var o = JSONObject()
        o.add("name", m.name)
        o.add("since", m.since?.rfc3339)
        o.add("battery_pct", m.supply?.capacity)
        if let online = m.supply?.online { o.add("external_power", online) } else { o.add("external_power", raw: "null") }
        o.add("battery_thresholds_holding", m.batteryHeld)
        return o.text
    }

    /// `parked since 2026-…Z (external power offline, battery 76 %)`.
    static func modeText(_ m: ModeState) -> String {
        let supply = m.supply?.text ?? ""
        return m.name + (m.since.map { " since \($0.rfc3339)" } ?? "") + (supply.isEmpty ? "" : " (\(supply))")
    }

    /// The movement rules' state (`movement:`): the motion state, the odometer, the trip and
    /// the visit under way; `null` before the rules took a fix.
    static func movementJSON(_ m: MovementState) -> String {
        guard m.last != nil || m.motion != nil else { return "null" }
        var o = JSONObject()
        o.add("motion", m.motion?.rawValue)
        o.add("motion_since", m.motionSince?.rfc3339)
        o.add("odometer_m", m.odometerMeters, decimals: 1)
        if let trip = m.trip, trip.announced {
            var t = JSONObject()
            t.add("since", trip.start.time.rfc3339)
            t.add("distance_m", trip.totals.distanceMeters, decimals: 1)
            o.add("trip", t)
        } else {
            o.add("trip", raw: "null")
        }
        if let visit = m.visit, visit.confirmed {
            var v = JSONObject()
            v.add("since", visit.first.time.rfc3339)
            v.add("center_lat", visit.center.latitude, decimals: 7)
            v.add("center_lon", visit.center.longitude, decimals: 7)
            v.add("fence", visit.fenceID)
            o.add("visit", v)
        } else {
            o.add("visit", raw: "null")
        }
        return o.text
    }

    /// `moving since 2026-…Z; odometer 12.3 km; trip since 2026-…Z, 4.2 km so far; visit since …`.
    static func movementText(_ m: MovementState) -> String? {
        guard m.last != nil || m.motion != nil else { return nil }
        var parts: [String] = []
        if let motion = m.motion { parts.append("\(motion.rawValue)" + (m.motionSince.map { " since \($0.rfc3339)" } ?? "")) }
        parts.append("odometer \(NumberText.short(m.odometerMeters / 1000, 2)) km")
        if let trip = m.trip, trip.announced {
            parts.append("trip since \(trip.start.time.rfc3339), \(NumberText.short(trip.totals.distanceMeters / 1000, 2)) km so far")
        }
        if let visit = m.visit, visit.confirmed {
            parts.append("visit since \(visit.first.time.rfc3339)" + (visit.fenceID.map { " in \($0)" } ?? ""))
        }
        return parts.joined(separator: "; ")
    }
}
