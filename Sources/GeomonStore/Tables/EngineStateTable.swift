public import GeomonCore

/// The engine's scalars as the store keeps them: the one `engine_state` row.
public struct EngineState: Hashable, Sendable {
    /// The profile the database belongs to.
    public var profile: String
    public var usableFixCount: Int
    public var lastFixTime: UTCTime?
    public var location: LocationReference?
    /// What a fence without a stored record is taken to be (`transitions.initial`'s outcome).
    public var implicitState: FenceState?
    /// The power policy's watch on its assumptions; nil keeps the stored one.
    public var assumptions: AssumptionState?
    /// The movement rules' state; nil keeps the stored one.
    public var movement: MovementState?
    /// The fences' cooldown records; nil keeps the stored ones.
    public var cooldowns: [CooldownRecord]?
    /// Speeding in progress in fences with `speed_limit:`; nil keeps the stored records.
    public var speeding: [SpeedingRecord]?
    /// The mode in effect and its inputs; nil keeps the stored one.
    public var mode: ModeState?

    public init(profile: String, usableFixCount: Int = 0, lastFixTime: UTCTime? = nil, location: LocationReference? = nil,
                implicitState: FenceState? = nil, assumptions: AssumptionState? = nil, movement: MovementState? = nil,
                cooldowns: [CooldownRecord]? = nil, speeding: [SpeedingRecord]? = nil, mode: ModeState? = nil) {
        self.speeding = speeding
        self.mode = mode
        self.assumptions = assumptions
        self.movement = movement
        self.cooldowns = cooldowns
        self.profile = profile
        self.usableFixCount = usableFixCount
        self.lastFixTime = lastFixTime
        self.location = location
        self.implicitState = implicitState
    }
}

/// The `engine_state` table: the one row of `EngineState`.
struct EngineStateTable {
    let db: Connection

    func read() throws -> EngineState? {
        let r = try db.statement("SELECT profile, usable_fix_count, last_fix_ms, location_ms, location_lat, location_lon, implicit_state, widened_speed, widened_acceleration, violations, still_distrusted, still_distrusted_sensor, movement, cooldowns, speeding, mode FROM engine_state WHERE id = 1")
        defer { r.reset() }
        guard try r.step() else { return nil }
        var state = EngineState(profile: r.text("profile"), usableFixCount: r.int("usable_fix_count"))
        state.lastFixTime = r.optionalInt64("last_fix_ms").map(UTCTime.init(millisecondsSince1970:))
        if let ms = r.optionalInt64("location_ms"), let lat = r.optionalDouble("location_lat"), let lon = r.optionalDouble("location_lon") {
            state.location = LocationReference(time: UTCTime(millisecondsSince1970: ms), coordinate: Coordinate(latitude: lat, longitude: lon))
        }
        state.implicitState = r.optionalText("implicit_state").flatMap(FenceState.init(rawValue:))
        var assumptions = AssumptionState(violations: r.int("violations"), stillDistrusted: r.int("still_distrusted") != 0,
                                          stillDistrustedSensor: r.optionalText("still_distrusted_sensor"))
        if let speed = r.optionalDouble("widened_speed"), let acceleration = r.optionalDouble("widened_acceleration") {
            assumptions.widened = MotionBounds(maxSpeedMetersPerSecond: speed, maxAccelerationMetersPerSecondSquared: acceleration)
        }
        state.assumptions = assumptions
        state.movement = r.optionalText("movement").flatMap(MovementState.init(storedText:))
        state.cooldowns = r.optionalText("cooldowns").map(CooldownRecord.records(storedText:))
        state.speeding = r.optionalText("speeding").map(SpeedingRecord.records(storedText:))
        state.mode = r.optionalText("mode").flatMap(ModeState.init(storedText:))
        return state
    }

    /// Writes the row; a nil last fix, location or implicit state keeps the stored one.
    func write(_ state: EngineState) throws {
        let s = try db.statement("""
            INSERT INTO engine_state (id, profile, usable_fix_count, last_fix_ms, location_ms, location_lat, location_lon, implicit_state,
                                      widened_speed, widened_acceleration, violations, movement, cooldowns, speeding, mode, still_distrusted,
                                      still_distrusted_sensor)
            VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, COALESCE(?, 0), ?12, ?13, ?14, ?15, COALESCE(?16, 0), ?17)
            ON CONFLICT(id) DO UPDATE SET profile = excluded.profile, usable_fix_count = excluded.usable_fix_count,
                last_fix_ms = COALESCE(excluded.last_fix_ms, last_fix_ms),
                location_ms = COALESCE(excluded.location_ms, location_ms),
                location_lat = COALESCE(excluded.location_lat, location_lat),
                location_lon = COALESCE(excluded.location_lon, location_lon),
                implicit_state = COALESCE(excluded.implicit_state, implicit_state),
                widened_speed = CASE WHEN ?11 THEN excluded.widened_speed ELSE widened_speed END,
                widened_acceleration = CASE WHEN ?11 THEN excluded.widened_acceleration ELSE widened_acceleration END,
                violations = CASE WHEN ?11 THEN excluded.violations ELSE violations END,
                still_distrusted = CASE WHEN ?11 THEN excluded.still_distrusted ELSE still_distrusted END,
                still_distrusted_sensor = CASE WHEN ?11 THEN excluded.still_distrusted_sensor ELSE still_distrusted_sensor END,
                movement = COALESCE(excluded.movement, movement),
                cooldowns = COALESCE(excluded.cooldowns, cooldowns),
                speeding = COALESCE(excluded.speeding, speeding),
                mode = COALESCE(excluded.mode, mode)
            """)
        Self.bindScalars(s, state)
        s.bind(8, state.assumptions?.widened?.maxSpeedMetersPerSecond)
        s.bind(9, state.assumptions?.widened?.maxAccelerationMetersPerSecondSquared)
        s.bind(10, state.assumptions.map { Int64($0.violations) })
        s.bind(11, state.assumptions != nil ? 1 : 0)
        s.bind(12, state.movement?.storedText)
        s.bind(13, state.cooldowns.map(CooldownRecord.storedText))
        s.bind(14, state.speeding.map(SpeedingRecord.storedText))
        s.bind(15, state.mode?.storedText)
        s.bind(16, state.assumptions.map { $0.stillDistrusted ? Int64(1) : 0 })
        s.bind(17, state.assumptions?.stillDistrustedSensor)
        try s.run()
    }
}

extension EngineStateTable {
    /// Parameters 1–7: profile, usable fix count, last fix, location, implicit state.
    static func bindScalars(_ s: Statement, _ state: EngineState) {
        s.bind(1, state.profile)
        s.bind(2, state.usableFixCount)
        s.bind(3, state.lastFixTime?.millisecondsSince1970)
        s.bind(4, state.location?.time.millisecondsSince1970)
        s.bind(5, state.location?.coordinate.latitude)
        s.bind(6, state.location?.coordinate.longitude)
        s.bind(7, state.implicitState?.rawValue)
    }
}

/// The `approach_state` and `approach_samples` tables: each fence's `ApproachRecord`.
struct ApproachStateTable {
    let db: Connection

    func all() throws -> [ApproachRecord] {
        var records: [ApproachRecord] = []
        let r = try db.statement("SELECT fence_id, fired FROM approach_state ORDER BY fence_id")
        defer { r.reset() }
        while try r.step() { records.append(ApproachRecord(fenceID: r.text("fence_id"), fired: UInt32(truncatingIfNeeded: r.int64("fired")))) }
        let samples = try db.statement("SELECT time_ms, distance_m FROM approach_samples WHERE fence_id = ? ORDER BY k")
        for k in records.indices {
            samples.reset().bind(1, records[k].fenceID)
            while try samples.step() {
                records[k].samples.append(ApproachSample(time: UTCTime(millisecondsSince1970: samples.int64("time_ms")), signedDistanceMeters: samples.double("distance_m")))
            }
        }
        samples.reset()
        return records
    }

    /// Replaces every record with `records`.
    func replace(with records: [ApproachRecord]) throws {
        try db.execute("DELETE FROM approach_state; DELETE FROM approach_samples;")
        let state = try db.statement("INSERT INTO approach_state (fence_id, fired) VALUES (?, ?)")
        let sample = try db.statement("INSERT INTO approach_samples (fence_id, k, time_ms, distance_m) VALUES (?, ?, ?, ?)")
        for record in records {
            state.reset().bind(1, record.fenceID)
            state.bind(2, Int64(record.fired))
            try state.run()
            for (k, s) in record.samples.enumerated() {
                sample.reset().bind(1, record.fenceID)
                sample.bind(2, k)
                sample.bind(3, s.time.millisecondsSince1970)
                sample.bind(4, s.signedDistanceMeters)
                try sample.run()
            }
        }
    }
}

/// The engine state as text in `kv` (schema 1–9), read once by migration 10 into the typed
/// rows and removed.
enum LegacyEngineState {
    static func migrate(_ db: Connection) throws {
        let kv = try db.prepare("SELECT key, value FROM kv")
        var values: [String: String] = [:]
        while try kv.step() { values[kv.text("key")] = kv.text("value") }
        if let profile = values["profile"] {
            var state = EngineState(profile: profile, usableFixCount: values["usable_fix_count"].flatMap { Int($0) } ?? 0)
            state.lastFixTime = values["last_fix_ms"].flatMap { Int64($0) }.map(UTCTime.init(millisecondsSince1970:))
            if let parts = values["location"]?.split(separator: ","), parts.count == 3,
               let ms = Int64(parts[0]), let lat = Double(parts[1]), let lon = Double(parts[2]) {
                state.location = LocationReference(time: UTCTime(millisecondsSince1970: ms), coordinate: Coordinate(latitude: lat, longitude: lon))
            }
            state.implicitState = values["implicit_state"].flatMap(FenceState.init(rawValue:))
            // The row as schema 10 has it (later steps add their columns with defaults).
            let s = try db.statement("""
                INSERT INTO engine_state (id, profile, usable_fix_count, last_fix_ms, location_ms, location_lat, location_lon, implicit_state)
                VALUES (1, ?, ?, ?, ?, ?, ?, ?)
                """)
            EngineStateTable.bindScalars(s, state)
            try s.run()
        }
        if let text = values["approach"] {
            try ApproachStateTable(db: db).replace(with: text.split(separator: "\n").compactMap(record))
        }
        try db.execute("DELETE FROM kv WHERE key IN ('profile', 'usable_fix_count', 'last_fix_ms', 'location', 'implicit_state', 'approach')")
    }

    /// One line of the old text: `len:id fired ms:distance …`.
    static func record(_ text: Substring) -> ApproachRecord? {
        guard let colon = text.firstIndex(of: ":"), let length = Int(text[..<colon]) else { return nil }
        let idStart = text.index(after: colon)
        let utf8 = text[idStart...].utf8
        guard let idEnd = utf8.index(utf8.startIndex, offsetBy: length, limitedBy: utf8.endIndex) else { return nil }
        let id = String(text[idStart..<idEnd])
        let rest = text[idEnd...].split(separator: " ")
        guard let first = rest.first, let fired = UInt32(first) else { return nil }
        var samples: [ApproachSample] = []
        for pair in rest.dropFirst() {
            let parts = pair.split(separator: ":")
            guard parts.count == 2, let ms = Int64(parts[0]), let s = Double(parts[1]) else { return nil }
            samples.append(ApproachSample(time: UTCTime(millisecondsSince1970: ms), signedDistanceMeters: s))
        }
        return ApproachRecord(fenceID: id, fired: fired, samples: samples)
    }
}
