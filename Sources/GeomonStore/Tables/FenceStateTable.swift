import GeomonCore

/// The `fence_state` table: one row per fence with a state the engine recorded.
struct FenceStateTable {
    let db: Connection

    func upsert(_ record: FenceStateRecord) throws {
        let s = try db.statement("""
            INSERT OR REPLACE INTO fence_state(fence_id, state, since_ms, since_lat, since_lon, since_accuracy_m, dwell_fired,
                pending_state, pending_count, pending_ms, pending_lat, pending_lon, pending_accuracy_m, pending_s_m,
                reported, fence_name, fingerprint)
            VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
            """)
        s.bind(1, record.fenceID)
        s.bind(2, record.state.rawValue)
        s.bind(3, record.stateSince?.millisecondsSince1970)
        s.bind(4, record.sinceCoordinate?.latitude)
        s.bind(5, record.sinceCoordinate?.longitude)
        s.bind(6, record.sinceAccuracyMeters)
        s.bind(7, Int64(record.dwellCount))
        s.bind(8, record.pending?.state.rawValue)
        s.bind(9, record.pending?.count ?? 0)
        s.bind(10, record.pending?.firstTime.millisecondsSince1970)
        s.bind(11, record.pending?.firstCoordinate.latitude)
        s.bind(12, record.pending?.firstCoordinate.longitude)
        s.bind(13, record.pending?.firstAccuracyMeters)
        s.bind(14, record.pending.map(\.firstSignedDistanceMeters).flatMap { $0.isFinite ? $0 : nil })
        s.bind(15, Int64(record.reported ? 1 : 0))
        s.bind(16, record.name)
        s.bind(17, record.fingerprint.map { Int64(bitPattern: $0) })
        try s.run()
    }

    func delete(fenceID: String) throws {
        let s = try db.statement("DELETE FROM fence_state WHERE fence_id = ?")
        s.bind(1, fenceID)
        try s.run()
    }

    /// Every record, ordered by fence id.
    func all() throws -> [FenceStateRecord] {
        let r = try db.statement("""
            SELECT fence_id, state, since_ms, since_lat, since_lon, since_accuracy_m, dwell_fired,
                   pending_state, pending_count, pending_ms, pending_lat, pending_lon, pending_accuracy_m, pending_s_m,
                   reported, fence_name, fingerprint
            FROM fence_state ORDER BY fence_id
            """)
        var records: [FenceStateRecord] = []
        while try r.step() {
            var record = FenceStateRecord(fenceID: r.text("fence_id"), state: FenceState(rawValue: r.text("state")) ?? .unknown)
            record.stateSince = r.optionalInt64("since_ms").map { UTCTime(millisecondsSince1970: $0) }
            if let lat = r.optionalDouble("since_lat"), let lon = r.optionalDouble("since_lon") {
                record.sinceCoordinate = Coordinate(latitude: lat, longitude: lon)
            }
            record.sinceAccuracyMeters = r.optionalDouble("since_accuracy_m")
            record.dwellCount = Int(clamping: max(0, r.int64("dwell_fired")))
            if let text = r.optionalText("pending_state"), let state = FenceState(rawValue: text), let ms = r.optionalInt64("pending_ms") {
                record.pending = PendingTransition(
                    state: state, count: r.int("pending_count"), firstTime: UTCTime(millisecondsSince1970: ms),
                    firstCoordinate: Coordinate(latitude: r.double("pending_lat"), longitude: r.double("pending_lon")),
                    firstAccuracyMeters: r.double("pending_accuracy_m"),
                    firstSignedDistanceMeters: r.optionalDouble("pending_s_m") ?? .infinity)
            }
            record.reported = r.optionalInt64("reported").map { $0 != 0 } ?? (record.state == .inside)
            record.name = r.optionalText("fence_name")
            record.fingerprint = r.optionalInt64("fingerprint").map { UInt64(bitPattern: $0) }
            records.append(record)
        }
        return records
    }
}
