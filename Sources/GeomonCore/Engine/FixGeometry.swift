/// What the fence index says about a fix's position, as the transition engine needs it.
///
/// `Monitor` builds it from one `FenceIndex.probe` per fix (or from the last probe when that
/// provably still holds); `TransitionEngine.fixReceived(_:)` probes on its own.
public struct FixGeometry: Hashable, Sendable {
    /// Fences containing the fix (a point on a boundary is inside), ascending.
    public var containing: [Int]
    /// Fences whose boundary is within the fix's band (accuracy + hysteresis), with signed
    /// distances (negative inside), ascending by fence.
    public var band: [FenceDistance]

    public init(containing: [Int] = [], band: [FenceDistance] = []) {
        self.containing = containing
        self.band = band
    }
}
