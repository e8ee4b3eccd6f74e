import GeomonCore

/// Results handed from hook threads to the thread that owns the queue. The queue (the store)
/// is only ever touched by its owner; hook threads only append here and signal.
final class CompletionInbox<Item: Sendable>: @unchecked Sendable {
    private let condition = Condition()
    private var items: [Item] = []
    private let onActivity: (@Sendable () -> Void)?

    init(onActivity: (@Sendable () -> Void)?) {
        self.onActivity = onActivity
    }

    func post(_ item: Item) {
        condition.lock()
        items.append(item)
        condition.broadcast()
        condition.unlock()
        onActivity?()
    }

    func takeAll() -> [Item] {
        condition.lock()
        defer { condition.unlock() }
        let taken = items
        items.removeAll()
        return taken
    }

    /// Returns items that could not be handled, ahead of newer ones.
    func putBack(_ returned: [Item]) {
        guard !returned.isEmpty else { return }
        condition.lock()
        items.insert(contentsOf: returned, at: 0)
        condition.unlock()
    }

    /// Blocks until an item is waiting or `timeout` passed.
    func wait(timeout: Duration) {
        let deadline = Condition.deadline(after: max(0, timeout.secondsValue))
        condition.lock()
        while items.isEmpty {
            if !condition.wait(until: deadline) { break }
        }
        condition.unlock()
    }
}
