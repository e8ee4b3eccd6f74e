public import GeomonCore
public import GeomonStore
public import GeomonHooks

/// The SQLite store as the hook worker's `GeomonHooks.DeliveryQueue`: rows of
/// `GeomonStore.Delivery` become `GeomonHooks.Delivery` with their stored event.
///
/// Clock-free: new rows and recovered/requeued ones are due at once (`next_attempt_at` 0), so
/// the worker may run on the wall clock while the events carry replay's virtual times.
public final class StoreDeliveryQueue: DeliveryQueue {
    public let store: EventStore

    public init(store: EventStore) {
        self.store = store
    }

    /// A stored delivery names an event the store does not have (a damaged database).
    public struct MissingEvent: Error, CustomStringConvertible, Sendable {
        public var deliveryID: Int64
        public var eventID: String
        public var description: String { "delivery #\(deliveryID) refers to event \(eventID), which is not stored" }
    }

    public func dueDeliveries(now: UTCTime, limit: Int) throws -> [GeomonHooks.Delivery] {
        try map(store.dueDeliveries(now: now, limit: limit))
    }

    public func markRunning(id: Int64, attempt: Int) throws {
        try store.markRunning(id: id, attempt: attempt)
    }

    public func markDelivered(id: Int64) throws {
        try store.markDelivered(id: id)
    }

    public func markRetry(id: Int64, nextAttemptAt: UTCTime, error: String) throws {
        try store.markRetry(id: id, nextAttemptAt: nextAttemptAt, error: error)
    }

    public func markDead(id: Int64, error: String) throws {
        try store.markDead(id: id, error: error)
    }

    public func requeueDead() throws -> Int {
        try store.requeueDead()
    }

    public func recoverInterrupted() throws {
        try store.recoverInterrupted()
    }

    public func deliveries(status: GeomonHooks.DeliveryStatus) throws -> [GeomonHooks.Delivery] {
        guard let stored = GeomonStore.DeliveryStatus(rawValue: status.rawValue) else { return [] }
        return try map(store.deliveries(status: stored))
    }

    /// One row by id (nil when there is none).
    public func delivery(id: Int64) throws -> GeomonHooks.Delivery? {
        try store.delivery(id: id).map { try map([$0]) }?.first
    }

    /// Deliveries not yet delivered or dead.
    public func openCount() throws -> Int {
        try store.pendingDeliveryCount()
    }

    private func map(_ rows: [GeomonStore.Delivery]) throws -> [GeomonHooks.Delivery] {
        var events: [String: GeoEvent] = [:]
        return try rows.map { row in
            let event: GeoEvent
            if let known = events[row.eventID] {
                event = known
            } else if let stored = try store.event(id: row.eventID) {
                event = stored.event
                events[row.eventID] = event
            } else {
                throw MissingEvent(deliveryID: row.id, eventID: row.eventID)
            }
            let status = GeomonHooks.DeliveryStatus(rawValue: row.status.rawValue) ?? .pending
            return GeomonHooks.Delivery(
                id: row.id, event: event, hookKey: row.hookKey, argv: row.argv, status: status, attempt: row.attempt,
                nextAttemptAt: status == .retrying && row.nextAttemptAt.millisecondsSince1970 > 0 ? row.nextAttemptAt : nil,
                lastError: row.lastError)
        }
    }
}
