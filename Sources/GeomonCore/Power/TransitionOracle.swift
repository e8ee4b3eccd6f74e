/// What a simulation needs from a transition engine: feed it a fix, get the events it decided
/// and how certain it is. The real `TransitionEngine` can conform through a small adapter;
/// `BoundaryCertaintyOracle` is a minimal stand-in.
public protocol TransitionOracle {
    /// Processes one accepted fix.
    mutating func observe(_ fix: Fix) -> TransitionObservation
}

/// The engine's answer for one fix.
public struct TransitionObservation: Hashable, Sendable {
    public var events: [GeoEvent]
    /// Every fence near the fix is in a certain, confirmed state.
    public var allCertain: Bool
    /// A transition waits for confirming fixes.
    public var transitionPending: Bool
    public var earliestDwellDeadline: UTCTime?

    public init(events: [GeoEvent], allCertain: Bool, transitionPending: Bool, earliestDwellDeadline: UTCTime? = nil) {
        self.events = events
        self.allCertain = allCertain
        self.transitionPending = transitionPending
        self.earliestDwellDeadline = earliestDwellDeadline
    }
}
