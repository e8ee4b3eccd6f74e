public import GeomonCore

/// The `receiver_log` table: when the GNSS receiver was switched, and why.
public struct ReceiverLogTable {
    let db: Connection

    func insert(_ change: ReceiverSwitch) throws {
        let s = try db.statement("INSERT INTO receiver_log (time_ms, receiver_on, reason) VALUES (?, ?, ?)")
        s.bind(1, change.time.millisecondsSince1970)
        s.bind(2, change.on ? 1 : 0)
        s.bind(3, change.reason)
        try s.run()
    }

    /// Moves the rows after `row` by `shift` (a run's switches before its first fix).
    func shift(afterRow row: Int64, by shift: Duration) throws {
        let s = try db.statement("UPDATE receiver_log SET time_ms = time_ms + ? WHERE rowid > ?")
        s.bind(1, shift.wholeMilliseconds)
        s.bind(2, row)
        try s.run()
    }

    func prune(before cutoff: Int64) throws {
        let s = try db.statement("DELETE FROM receiver_log WHERE time_ms < ?")
        s.bind(1, cutoff)
        try s.run()
    }

    public func lastRow() throws -> Int64 {
        try db.scalarInt("SELECT coalesce(max(rowid), 0) FROM receiver_log") ?? 0
    }

    /// Every switch in time order.
    public func all() throws -> [ReceiverSwitch] {
        let r = try db.statement("SELECT time_ms, receiver_on, reason FROM receiver_log ORDER BY time_ms, rowid")
        var result: [ReceiverSwitch] = []
        while try r.step() {
            result.append(ReceiverSwitch(time: UTCTime(millisecondsSince1970: r.int64("time_ms")), on: r.int64("receiver_on") != 0, reason: r.text("reason")))
        }
        return result
    }
}
