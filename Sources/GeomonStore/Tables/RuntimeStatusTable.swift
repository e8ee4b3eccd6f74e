import GeomonCore

/// The `runtime_status` table: the one row of the daemon's `RuntimeStatus`.
public struct RuntimeStatusTable {
    let db: Connection

    static let columns = """
        running, pid, profile, mode, receiver_on, receiver_reason, gnss_plugin, gnss_endpoint, gnss_state, \
        coarse_plugin, coarse_endpoint, coarse_state, coarse_accuracy, coarse_malformed, \
        last_fix_ms, last_fix_lat, last_fix_lon, last_fix_accuracy_m, last_fix_source, inside, \
        mqtt_broker, mqtt_topic, mqtt_state, mqtt_published, uptime_s, loop_wakeups, hooks_running, updated_ms, \
        gnss_power_method, gnss_power_state, gnss_measured_on_s, motion_plugin, motion_state, motion_since_ms, \
        planning_activity, planning_from, planning_bounds, planning_widened, planning_violations, \
        planning_ttff_hot_s, planning_ttff_measured_s, planning_ttff_samples, profile_fences
        """

    func write(_ s: RuntimeStatus) throws {
        let statement = try db.prepare("INSERT OR REPLACE INTO runtime_status (id, \(Self.columns)) VALUES (1\(String(repeating: ", ?", count: 43)))")
        statement.bind(1, s.running ? 1 : 0)
        statement.bind(2, s.pid)
        statement.bind(3, s.profile)
        statement.bind(4, s.mode)
        statement.bind(5, s.receiverOn ? 1 : 0)
        statement.bind(6, s.receiverReason)
        statement.bind(7, s.gnss?.plugin)
        statement.bind(8, s.gnss?.endpoint)
        statement.bind(9, s.gnss?.state)
        statement.bind(10, s.coarse?.plugin)
        statement.bind(11, s.coarse?.endpoint)
        statement.bind(12, s.coarse?.state)
        statement.bind(13, s.coarse?.accuracy)
        statement.bind(14, s.coarse?.malformedLines.map(Int64.init))
        statement.bind(15, s.lastFix?.time.millisecondsSince1970)
        statement.bind(16, s.lastFix?.coordinate.latitude)
        statement.bind(17, s.lastFix?.coordinate.longitude)
        statement.bind(18, s.lastFix?.horizontalAccuracyMeters)
        statement.bind(19, s.lastFix?.source.rawValue)
        // Fence ids have no control characters: one per line.
        statement.bind(20, s.inside.joined(separator: "\n"))
        statement.bind(21, s.mqtt?.broker)
        statement.bind(22, s.mqtt?.topic)
        statement.bind(23, s.mqtt?.state)
        statement.bind(24, s.mqtt.map { Int64($0.published) })
        statement.bind(25, s.uptimeSeconds)
        statement.bind(26, s.loopWakeups)
        statement.bind(27, s.hooksRunning)
        statement.bind(28, s.updated.millisecondsSince1970)
        statement.bind(29, s.gnss?.power?.method)
        statement.bind(30, s.gnss?.power?.state)
        statement.bind(31, s.gnss?.power?.measuredOnSeconds)
        statement.bind(32, s.motion?.plugin)
        statement.bind(33, s.motion?.state)
        statement.bind(34, s.motion?.since?.millisecondsSince1970)
        statement.bind(35, s.planning?.activity)
        statement.bind(36, s.planning?.from)
        statement.bind(37, s.planning?.bounds)
        statement.bind(38, s.planning.map { Int64($0.widened ? 1 : 0) })
        statement.bind(39, s.planning.map { Int64($0.violations) })
        statement.bind(40, s.planning?.ttffHotSeconds)
        statement.bind(41, s.planning?.ttffMeasuredSeconds)
        statement.bind(42, s.planning.map { Int64($0.ttffSamples) })
        statement.bind(43, s.profileFences.joined(separator: "\n"))
        try statement.run()
    }

    public func read() throws -> RuntimeStatus? {
        let r = try db.prepare("SELECT \(Self.columns) FROM runtime_status WHERE id = 1")
        guard try r.step() else { return nil }
        var s = RuntimeStatus()
        s.running = r.int64("running") != 0
        s.pid = r.int("pid")
        s.profile = r.text("profile")
        s.mode = r.text("mode")
        s.receiverOn = r.int64("receiver_on") != 0
        s.receiverReason = r.text("receiver_reason")
        if let plugin = r.optionalText("gnss_plugin") {
            s.gnss = .init(plugin: plugin, endpoint: r.optionalText("gnss_endpoint"), state: r.optionalText("gnss_state") ?? "")
            if let method = r.optionalText("gnss_power_method") {
                s.gnss?.power = .init(method: method, state: r.optionalText("gnss_power_state") ?? "", measuredOnSeconds: r.optionalDouble("gnss_measured_on_s") ?? 0)
            }
        }
        if let plugin = r.optionalText("coarse_plugin") {
            s.coarse = .init(plugin: plugin, endpoint: r.optionalText("coarse_endpoint"), state: r.optionalText("coarse_state") ?? "",
                             accuracy: r.optionalText("coarse_accuracy"), malformedLines: r.optionalInt64("coarse_malformed").map(Int.init))
        }
        if let ms = r.optionalInt64("last_fix_ms") {
            s.lastFix = Fix(time: UTCTime(millisecondsSince1970: ms),
                            coordinate: Coordinate(latitude: r.double("last_fix_lat"), longitude: r.double("last_fix_lon")),
                            horizontalAccuracyMeters: r.double("last_fix_accuracy_m"),
                            source: FixSource(rawValue: r.optionalText("last_fix_source") ?? "") ?? .gnss)
        }
        let inside = r.text("inside")
        s.inside = inside.isEmpty ? [] : inside.split(separator: "\n").map(String.init)
        let own = r.optionalText("profile_fences") ?? ""
        s.profileFences = own.isEmpty ? [] : own.split(separator: "\n").map(String.init)
        if let broker = r.optionalText("mqtt_broker") {
            s.mqtt = .init(broker: broker, topic: r.optionalText("mqtt_topic") ?? "", state: r.optionalText("mqtt_state") ?? "", published: r.optionalInt64("mqtt_published").map(Int.init) ?? 0)
        }
        s.uptimeSeconds = r.int("uptime_s")
        s.loopWakeups = r.int("loop_wakeups")
        s.hooksRunning = r.int("hooks_running")
        s.updated = UTCTime(millisecondsSince1970: r.int64("updated_ms"))
        if let plugin = r.optionalText("motion_plugin") {
            s.motion = .init(plugin: plugin, state: r.optionalText("motion_state") ?? "unknown", since: r.optionalInt64("motion_since_ms").map(UTCTime.init(millisecondsSince1970:)))
        }
        if let activity = r.optionalText("planning_activity") {
            s.planning = .init(activity: activity, from: r.optionalText("planning_from") ?? "declared", bounds: r.optionalText("planning_bounds") ?? "",
                               widened: (r.optionalInt64("planning_widened") ?? 0) != 0, violations: r.optionalInt64("planning_violations").map(Int.init) ?? 0)
            s.planning?.ttffHotSeconds = r.optionalDouble("planning_ttff_hot_s")
            s.planning?.ttffMeasuredSeconds = r.optionalDouble("planning_ttff_measured_s")
            s.planning?.ttffSamples = r.optionalInt64("planning_ttff_samples").map(Int.init) ?? 0
        }
        return s
    }
}
