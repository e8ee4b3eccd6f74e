/// The `kv` table: the engine's scalars and the database's owner.
struct KeyValueTable {
    let db: Connection

    func value(forKey key: String) throws -> String? {
        let r = try db.statement("SELECT value FROM kv WHERE key = ?")
        r.bind(1, key)
        defer { r.reset() }
        return try r.step() ? r.text(0) : nil
    }

    func set(_ value: String, forKey key: String) throws {
        let s = try db.statement("INSERT INTO kv(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
        s.bind(1, key)
        s.bind(2, value)
        try s.run()
    }
}
