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
    /// The queue every worker/contract test runs against: the real SQLite store (on a temp file).
    static func make() -> any TestDeliveryQueue {
        SQLiteDeliveryQueue()
    }
}
