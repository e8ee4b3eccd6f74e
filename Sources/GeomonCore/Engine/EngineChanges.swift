/// Fence records changed since the last `takeChanges()`: what the store must write.
public struct EngineChanges: Hashable, Sendable {
    /// Records to insert or replace, in fence order.
    public var upserts: [FenceStateRecord]
    /// Fence ids whose record returned to the implicit state (delete the row).
    public var removals: [String]

    public init(upserts: [FenceStateRecord] = [], removals: [String] = []) {
        self.upserts = upserts
        self.removals = removals
    }

    public var isEmpty: Bool { upserts.isEmpty && removals.isEmpty }
}
