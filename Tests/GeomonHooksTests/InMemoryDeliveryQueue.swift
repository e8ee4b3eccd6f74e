import Foundation
import GeomonCore
import GeomonHooks

/// What the worker and contract tests need beyond `DeliveryQueue`: creating rows the way the
/// store does in an event's transaction, and reading one row back.
protocol TestDeliveryQueue: DeliveryQueue {
    /// Adds one delivery per hook for `event`, in order; returns their ids.
    @discardableResult
    func enqueue(_ event: GeoEvent, hooks: [HookSpec]) -> [Int64]
    func row(_ id: Int64) -> Delivery?
}

enum QueueFactory {
    /// The queue every worker/contract test runs against: the real SQLite store (on a temp
    /// file). `InMemoryDeliveryQueue()` is the reference model of the same contract.
    static func make() -> any TestDeliveryQueue {
        SQLiteDeliveryQueue()
    }
}

/// The `DeliveryQueue` contract on an array, for the worker tests (the store implements the
/// same contract on SQLite; the lead reruns these tests against it).
final class InMemoryDeliveryQueue: TestDeliveryQueue, @unchecked Sendable {
    private let lock = NSLock()
    private var rows: [Delivery] = []
    private var nextID: Int64 = 1

    /// Adds one delivery per hook target for `event` (what the store does in the event's transaction).
    @discardableResult
    func enqueue(_ event: GeoEvent, hooks: [HookSpec]) -> [Int64] {
        lock.lock()
        defer { lock.unlock() }
        var ids: [Int64] = []
        for spec in hooks {
            rows.append(Delivery(id: nextID, event: event, hookKey: HookCatalog.key(for: spec), argv: spec.exec))
            ids.append(nextID)
            nextID += 1
        }
        return ids
    }

    func row(_ id: Int64) -> Delivery? {
        lock.lock()
        defer { lock.unlock() }
        return rows.first { $0.id == id }
    }

    func dueDeliveries(now: UTCTime, limit: Int) throws -> [Delivery] {
        lock.lock()
        defer { lock.unlock() }
        var heads: [SerialKey: Delivery] = [:]
        var order: [SerialKey] = []
        for row in rows where row.status != .delivered && row.status != .dead {
            if heads[row.serialKey] == nil {
                heads[row.serialKey] = row
                order.append(row.serialKey)
            }
        }
        var due: [Delivery] = []
        for key in order {
            guard let head = heads[key] else { continue }
            guard head.status == .pending || head.status == .retrying else { continue }
            if let at = head.nextAttemptAt, at > now { continue }
            due.append(head)
        }
        return Array(due.sorted { $0.id < $1.id }.prefix(limit))
    }

    func markRunning(id: Int64, attempt: Int) throws {
        update(id) { $0.status = .running; $0.attempt = attempt }
    }

    func markDelivered(id: Int64) throws {
        update(id) { $0.status = .delivered; $0.nextAttemptAt = nil }
    }

    func markRetry(id: Int64, nextAttemptAt: UTCTime, error: String) throws {
        update(id) { $0.status = .retrying; $0.nextAttemptAt = nextAttemptAt; $0.lastError = error }
    }

    func markDead(id: Int64, error: String) throws {
        update(id) { $0.status = .dead; $0.nextAttemptAt = nil; $0.lastError = error }
    }

    func requeueDead() throws -> Int {
        lock.lock()
        defer { lock.unlock() }
        var count = 0
        for i in rows.indices where rows[i].status == .dead {
            rows[i].status = .pending
            rows[i].attempt = 0
            rows[i].nextAttemptAt = nil
            count += 1
        }
        return count
    }

    func recoverInterrupted() throws {
        lock.lock()
        defer { lock.unlock() }
        for i in rows.indices where rows[i].status == .running {
            rows[i].status = .retrying
            rows[i].nextAttemptAt = nil
        }
    }

    func deliveries(status: DeliveryStatus) throws -> [Delivery] {
        lock.lock()
        defer { lock.unlock() }
        return rows.filter { $0.status == status }
    }

    private func update(_ id: Int64, _ change: (inout Delivery) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        if let i = rows.firstIndex(where: { $0.id == id }) { change(&rows[i]) }
    }
}
