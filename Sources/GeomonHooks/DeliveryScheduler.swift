public import GeomonCore

/// Picks which due deliveries start now. Pure.
///
/// Walks `due` in `id` (event) order; the first delivery seen for a `SerialKey` is that key's
/// head and any later one is skipped (it waits behind the head). A head whose key is already
/// running is skipped; a head whose hook conditions are not met is held back (and blocks its
/// key); otherwise it starts while capacity remains.
public enum DeliveryScheduler {
    public struct Selection: Equatable, Sendable {
        public var start: [Delivery]
        /// Heads held back by unmet conditions (the caller rechecks on a timer).
        public var heldBack: [Delivery]
    }

    public static func select(
        due: [Delivery], running: Set<SerialKey>, capacity: Int, isReady: (Delivery) -> Bool
    ) -> Selection {
        var selection = Selection(start: [], heldBack: [])
        var seen = Set<SerialKey>()
        for delivery in due.sorted(by: { $0.id < $1.id }) {
            let key = delivery.serialKey
            guard seen.insert(key).inserted else { continue }
            if running.contains(key) { continue }
            if !isReady(delivery) {
                selection.heldBack.append(delivery)
                continue
            }
            if selection.start.count < capacity {
                selection.start.append(delivery)
            }
        }
        return selection
    }
}
