/// What the engine believes about the device and one fence.
public enum FenceState: String, Hashable, Sendable, CaseIterable {
    /// No certain fix has been confirmed yet for this fence.
    case unknown
    case inside
    case outside
}
