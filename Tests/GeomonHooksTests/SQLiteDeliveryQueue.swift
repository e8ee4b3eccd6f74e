import Foundation
import GeomonCore
import GeomonDaemon
import GeomonHooks
import GeomonStore
import GeomonTestSupport

/// The real queue: the SQLite `EventStore` (on a temp file), with rows created the way the
/// journal creates them: in the event's commit.
final class SQLiteDeliveryQueue: TestDeliveryQueue, @unchecked Sendable {
    private let directory: TemporaryDirectory
    private let adapter: EventStore
    private let lock = NSLock()

    init() {
        // A test without a writable temp dir cannot run at all; fail loudly there.
        do {
            directory = try TemporaryDirectory(prefix: "geomon-queue")
            adapter = try EventStore(path: directory.path("queue.db"))
        } catch {
            preconditionFailure("cannot create the test queue database: \(error)")
        }
    }

    deinit { directory.remove() }

    /// The database file (another connection may lock it).
    var path: String { directory.path("queue.db") }

    @discardableResult
    func enqueue(_ event: GeoEvent, hooks: [HookSpec]) -> [Int64] {
        lock.lock()
        defer { lock.unlock() }
        var batch = CommitBatch(profileName: "test-profile", committedAt: event.time)
        batch.events = [(event, hooks.map { DeliveryTarget(hookKey: HookCatalog.key(for: $0), argv: $0.exec) })]
        do {
            try adapter.commit(batch)
            return try adapter.deliveryQueue.deliveries(eventID: event.id).map(\.id)
        } catch {
            preconditionFailure("enqueue failed: \(error)")
        }
    }

    func row(_ id: Int64) -> Delivery? {
        lock.lock()
        defer { lock.unlock() }
        return try? adapter.deliveryQueue.delivery(id: id)
    }

    func dueDeliveries(now: UTCTime, limit: Int) throws -> [Delivery] {
        lock.lock()
        defer { lock.unlock() }
        return try adapter.deliveryQueue.dueDeliveries(now: now, limit: limit)
    }

    func markRunning(id: Int64, attempt: Int) throws {
        lock.lock()
        defer { lock.unlock() }
        try adapter.deliveryQueue.markRunning(id: id, attempt: attempt)
    }

    func markDelivered(id: Int64) throws {
        lock.lock()
        defer { lock.unlock() }
        try adapter.deliveryQueue.markDelivered(id: id)
    }

    func markRetry(id: Int64, nextAttemptAt: UTCTime, error: String) throws {
        lock.lock()
        defer { lock.unlock() }
        try adapter.deliveryQueue.markRetry(id: id, nextAttemptAt: nextAttemptAt, error: error)
    }

    func markDead(id: Int64, error: String) throws {
        lock.lock()
        defer { lock.unlock() }
        try adapter.deliveryQueue.markDead(id: id, error: error)
    }

    func requeueDead() throws -> Int {
        lock.lock()
        defer { lock.unlock() }
        return try adapter.deliveryQueue.requeueDead()
    }

    func markInterrupted(id: Int64, attempt: Int, attempts: Int, note: String) throws {
        lock.lock()
        defer { lock.unlock() }
        try adapter.deliveryQueue.markInterrupted(id: id, attempt: attempt, attempts: attempts, note: note)
    }

    func recoverInterrupted(attempts: Int) throws {
        lock.lock()
        defer { lock.unlock() }
        try adapter.deliveryQueue.recoverInterrupted(attempts: attempts)
    }

    func deliveries(status: DeliveryStatus) throws -> [Delivery] {
        lock.lock()
        defer { lock.unlock() }
        return try adapter.deliveryQueue.deliveries(status: status)
    }
}
