public import GeomonCore

/// A command received over MQTT (`publish.mqtt.commands`), accepted or refused, as stored.
public struct StoredCommand: Hashable, Sendable {
    public var seq: Int64
    public var received: UTCTime
    public var topic: String
    /// The OwnTracks `action` (`setWaypoints`, …), or what the message was when it had none.
    public var action: String
    public var accepted: Bool
    /// What it changed, or why it was refused.
    public var summary: String

    public init(seq: Int64 = 0, received: UTCTime, topic: String, action: String, accepted: Bool, summary: String) {
        self.seq = seq
        self.received = received
        self.topic = topic
        self.action = action
        self.accepted = accepted
        self.summary = summary
    }
}

/// The `commands` table: every command received over MQTT, in order.
struct CommandTable {
    let db: Connection

    func insert(_ command: StoredCommand) throws -> Int64 {
        let s = try db.statement("INSERT INTO commands (received_ms, topic, action, accepted, summary) VALUES (?, ?, ?, ?, ?)")
        s.bind(1, command.received.millisecondsSince1970)
        s.bind(2, command.topic)
        s.bind(3, command.action)
        s.bind(4, command.accepted ? 1 : 0)
        s.bind(5, command.summary)
        try s.run()
        return try db.scalarInt("SELECT last_insert_rowid()") ?? 0
    }

    func all() throws -> [StoredCommand] {
        let r = try db.statement("SELECT seq, received_ms, topic, action, accepted, summary FROM commands ORDER BY seq")
        var result: [StoredCommand] = []
        while try r.step() {
            result.append(StoredCommand(seq: r.int64(0), received: UTCTime(millisecondsSince1970: r.int64(1)), topic: r.text(2),
                                        action: r.text(3), accepted: r.int64(4) != 0, summary: r.text(5)))
        }
        return result
    }
}

/// The `pushed_fences` table: the fences pushed over MQTT, by their waypoint's identity.
struct PushedFenceTable {
    let db: Connection

    func upsert(_ fence: PushedFence) throws {
        let s = try db.statement("""
            INSERT INTO pushed_fences (key, fence_id, name, lat, lon, radius_m, pushed_ms, command_seq, tst) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(key) DO UPDATE SET fence_id = excluded.fence_id, name = excluded.name, lat = excluded.lat, lon = excluded.lon,
                radius_m = excluded.radius_m, pushed_ms = excluded.pushed_ms, command_seq = excluded.command_seq, tst = excluded.tst
            """)
        s.bind(1, fence.key)
        s.bind(2, fence.fenceID)
        s.bind(3, fence.name)
        s.bind(4, fence.center.latitude)
        s.bind(5, fence.center.longitude)
        s.bind(6, fence.radiusMeters)
        s.bind(7, fence.pushedAt.millisecondsSince1970)
        s.bind(8, fence.command)
        s.bind(9, fence.waypointTime)
        try s.run()
    }

    func delete(key: String) throws {
        let s = try db.statement("DELETE FROM pushed_fences WHERE key = ?")
        s.bind(1, key)
        try s.run()
    }

    func deleteAll() throws {
        try db.execute("DELETE FROM pushed_fences")
    }

    /// Every pushed fence, in the order they were first pushed (then by key).
    func all() throws -> [PushedFence] {
        let r = try db.statement("SELECT key, fence_id, name, lat, lon, radius_m, pushed_ms, command_seq, tst FROM pushed_fences ORDER BY command_seq, key")
        var result: [PushedFence] = []
        while try r.step() {
            result.append(PushedFence(key: r.text(0), fenceID: r.text(1), name: r.optionalText(2),
                                      center: Coordinate(latitude: r.double(3), longitude: r.double(4)), radiusMeters: r.double(5),
                                      pushedAt: UTCTime(millisecondsSince1970: r.int64(6)), command: r.int64(7), waypointTime: r.optionalInt64(8)))
        }
        return result
    }
}
