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
public struct CommandTable {
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

    /// Stores a received command and, in the same transaction, what it changed: every pushed
    /// fence removed first when `clearing`, then `removing` (by key), then `setting` (by key,
    /// their `command` set to this command's number). Returns the command's number.
    @discardableResult
    public func record(_ command: StoredCommand, clearing: Bool = false, removing: [String] = [], setting: [PushedFence] = []) throws -> Int64 {
        try db.transaction {
            let seq = try insert(command)
            let fences = PushedFenceTable(db: db)
            if clearing { try fences.deleteAll() }
            for key in removing { try fences.delete(key: key) }
            for var fence in setting {
                fence.command = seq
                try fences.upsert(fence)
            }
            return seq
        }
    }

    /// Every command received over MQTT, in order.
    public func all() throws -> [StoredCommand] {
        let r = try db.statement("SELECT seq, received_ms, topic, action, accepted, summary FROM commands ORDER BY seq")
        var result: [StoredCommand] = []
        while try r.step() {
            result.append(StoredCommand(seq: r.int64("seq"), received: UTCTime(millisecondsSince1970: r.int64("received_ms")), topic: r.text("topic"),
                                        action: r.text("action"), accepted: r.int64("accepted") != 0, summary: r.text("summary")))
        }
        return result
    }
}

/// The `pushed_fences` table: the fences pushed over MQTT, by their waypoint's identity.
public struct PushedFenceTable {
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
    public func all() throws -> [PushedFence] {
        let r = try db.statement("SELECT key, fence_id, name, lat, lon, radius_m, pushed_ms, command_seq, tst FROM pushed_fences ORDER BY command_seq, key")
        var result: [PushedFence] = []
        while try r.step() {
            result.append(PushedFence(key: r.text("key"), fenceID: r.text("fence_id"), name: r.optionalText("name"),
                                      center: Coordinate(latitude: r.double("lat"), longitude: r.double("lon")), radiusMeters: r.double("radius_m"),
                                      pushedAt: UTCTime(millisecondsSince1970: r.int64("pushed_ms")), command: r.int64("command_seq"), waypointTime: r.optionalInt64("tst")))
        }
        return result
    }
}

/// The `placed_fences` table: circles placed at run time (`geomon fences here`, `placeFence`).
public struct PlacedFenceTable {
    let db: Connection

    /// Places `fence`, replacing one with its id.
    public func upsert(_ fence: PlacedFence) throws {
        let s = try db.statement("""
            INSERT INTO placed_fences (fence_id, name, lat, lon, radius_m, placed_ms, placed_by) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(fence_id) DO UPDATE SET name = excluded.name, lat = excluded.lat, lon = excluded.lon,
                radius_m = excluded.radius_m, placed_ms = excluded.placed_ms, placed_by = excluded.placed_by
            """)
        s.bind(1, fence.fenceID)
        s.bind(2, fence.name)
        s.bind(3, fence.center.latitude)
        s.bind(4, fence.center.longitude)
        s.bind(5, fence.radiusMeters)
        s.bind(6, fence.placedAt.millisecondsSince1970)
        s.bind(7, fence.placedBy)
        try s.run()
    }

    /// Removes the fence `id`; false when there was none.
    public func delete(fenceID id: String) throws -> Bool {
        let s = try db.statement("DELETE FROM placed_fences WHERE fence_id = ?")
        s.bind(1, id)
        try s.run()
        return db.changes > 0
    }

    /// Every placed fence, in the order they were placed (then by id).
    public func all() throws -> [PlacedFence] {
        let r = try db.statement("SELECT fence_id, name, lat, lon, radius_m, placed_ms, placed_by FROM placed_fences ORDER BY placed_ms, fence_id")
        var result: [PlacedFence] = []
        while try r.step() {
            result.append(PlacedFence(fenceID: r.text("fence_id"), name: r.optionalText("name"),
                                      center: Coordinate(latitude: r.double("lat"), longitude: r.double("lon")), radiusMeters: r.double("radius_m"),
                                      placedAt: UTCTime(millisecondsSince1970: r.int64("placed_ms")), placedBy: r.text("placed_by")))
        }
        return result
    }
}
