public import GeomonCore

/// The `fix_chunks` table: each commit's fixes as one row (`FixChunk`), pruned by age.
public struct FixChunkTable {
    let db: Connection

    func insert(_ fixes: [Fix]) throws {
        guard let first = fixes.first, let last = fixes.last else { return }
        let s = try db.statement("INSERT OR REPLACE INTO fix_chunks(first_ms, last_ms, count, data) VALUES (?,?,?,?)")
        s.bind(1, first.time.millisecondsSince1970)
        s.bind(2, last.time.millisecondsSince1970)
        s.bind(3, fixes.count)
        s.bind(4, blob: FixChunk.encode(fixes))
        try s.run()
    }

    func oldestMilliseconds() throws -> Int64? {
        try db.scalarInt("SELECT min(first_ms) FROM fix_chunks")
    }

    /// Deletes fixes before `cutoff`: whole chunks at once, at most 1,000 per call, and the one
    /// chunk straddling the cutoff is rewritten without them.
    func prune(before cutoff: Int64) throws {
        let delete = try db.statement(
            "DELETE FROM fix_chunks WHERE first_ms IN (SELECT first_ms FROM fix_chunks WHERE last_ms < ? ORDER BY first_ms LIMIT 1000)")
        delete.bind(1, cutoff)
        try delete.run()
        let straddling = try db.statement("SELECT first_ms, data FROM fix_chunks WHERE first_ms < ? AND last_ms >= ?")
        straddling.bind(1, cutoff)
        straddling.bind(2, cutoff)
        var rewrite: (Int64, [Fix])?
        if try straddling.step() {
            rewrite = (straddling.int64("first_ms"), straddling.withBlob("data") { FixChunk.decode($0) }.filter { $0.time.millisecondsSince1970 >= cutoff })
        }
        straddling.reset()
        guard let (firstMilliseconds, kept) = rewrite else { return }
        let remove = try db.statement("DELETE FROM fix_chunks WHERE first_ms = ?")
        remove.bind(1, firstMilliseconds)
        try remove.run()
        try insert(kept)
    }

    /// Calls `body` for each stored fix in time order (at or after `since`).
    public func forEach(since: UTCTime? = nil, _ body: (Fix) throws -> Void) throws {
        let from = since?.millisecondsSince1970 ?? Int64.min
        // Not the cached statement: `body` may read the store again.
        let r = try db.prepare("SELECT data FROM fix_chunks WHERE last_ms >= ? ORDER BY first_ms")
        r.bind(1, from)
        while try r.step() {
            for fix in r.withBlob("data", { FixChunk.decode($0) }) where fix.time.millisecondsSince1970 >= from {
                try body(fix)
            }
        }
    }

    public func count() throws -> Int {
        try Int(db.scalarInt("SELECT coalesce(sum(count), 0) FROM fix_chunks") ?? 0)
    }

    public func last() throws -> Fix? {
        let r = try db.statement("SELECT data FROM fix_chunks ORDER BY first_ms DESC LIMIT 1")
        defer { r.reset() }
        guard try r.step() else { return nil }
        return r.withBlob("data") { FixChunk.decode($0) }.last
    }
}
