/// The durable side of hook delivery: the store's deliveries table (`EventStore` conforms).
///
/// Contract (the in-memory test queue and the store must agree):
/// - Rows are created `pending`, `attempt` 0, with their event, in event order (increasing `id`).
/// - `dueDeliveries` returns, ordered by `id`, at most one delivery per (`hookKey`, `fenceID`):
///   the earliest one of that key whose status is not `delivered`/`dead`, and only if it is
///   `pending` or `retrying` with `nextAttemptAt` nil or ≤ `now`. A key whose earliest open row
///   is `running` or not yet due yields nothing (later events wait behind it).
/// - `markRunning` sets `running` and `attempt`; `markRetry` sets `retrying`, `nextAttemptAt`
///   and `lastError`; `markDelivered` / `markDead` are terminal (`dead` keeps `lastError`).
/// - `requeueDead` turns every `dead` row into `pending` with `attempt` 0, `nextAttemptAt` nil
///   (keeps `lastError`), returning how many. `recoverInterrupted(attempts:)` turns `running`
///   rows (a crash during an attempt) into `retrying` due now, keeping their attempt count; a
///   row whose attempt was already the last of `attempts` becomes `dead` with a `lastError`
///   that says so: a hook that crashes or reboots the machine every time is dead-lettered
///   after its attempts, not run after every boot for ever.
/// - `markInterrupted` turns a `running` row whose attempt geomon itself cut short (a stop)
///   into `retrying` due now with `note` as `lastError`, its attempt not counted (`attempt`
///   one less): the rerun has the same number. The same attempt cut short a second time in a
///   row (its `lastError` is `note` already) counts, and once that is attempt `attempts` the
///   row is `dead`: a hook that stops geomon every time is dead-lettered after its attempts,
///   not run for ever.
/// - `deliveries(status:)` lists rows with that status ordered by `id`.
public protocol DeliveryQueue {
    func dueDeliveries(now: UTCTime, limit: Int) throws -> [Delivery]
    func markRunning(id: Int64, attempt: Int) throws
    func markDelivered(id: Int64) throws
    func markRetry(id: Int64, nextAttemptAt: UTCTime, error: String) throws
    func markDead(id: Int64, error: String) throws
    func requeueDead() throws -> Int
    func recoverInterrupted(attempts: Int) throws
    func markInterrupted(id: Int64, attempt: Int, attempts: Int, note: String) throws
    func deliveries(status: DeliveryStatus) throws -> [Delivery]
}

extension DeliveryQueue {
    public func dueDeliveries(now: UTCTime) throws -> [Delivery] { try dueDeliveries(now: now, limit: 256) }
}
