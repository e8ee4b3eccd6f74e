/// Fence records changed since the last `takeChanges()`: what the store must write.
public struct EngineChanges: Hashable, Sendable {
    /// Records to insert or replace, in fence order.
    public var upserts: [FenceStateRecord]
    /// Fence ids whose record returned to the implicit state (delete the row).
    public var removals: [String]
    /// Every approach record, when any changed (they are few: fences near the device).
    public var approaches: [ApproachRecord]?

    public init(upserts: [FenceStateRecord] = [], removals: [String] = []) {
        self.upserts = upserts
        self.removals = removals
    }

    public var isEmpty: Bool { upserts.isEmpty && removals.isEmpty && approaches == nil }

    /// Adds `later`'s changes: a fence's last change wins.
    public mutating func merge(_ later: EngineChanges) {
        guard !later.isEmpty else { return }
        if isEmpty {
            self = later
            return
        }
        if let approaches = later.approaches { self.approaches = approaches }
        for record in later.upserts {
            removals.removeAll { $0 == record.fenceID }
            if let i = upserts.firstIndex(where: { $0.fenceID == record.fenceID }) {
                upserts[i] = record
            } else {
                upserts.append(record)
            }
        }
        for id in later.removals {
            upserts.removeAll { $0.fenceID == id }
            if !removals.contains(id) { removals.append(id) }
        }
    }
}
