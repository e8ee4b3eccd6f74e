/// What the engine did with one fix.
public struct FixOutcome: Hashable, Sendable {
    /// False when the fix was ignored (not newer than the last processed fix, or invalid);
    /// an ignored fix is not stored either.
    public var accepted: Bool
    /// Events decided by this fix (dwell events due before it included), in fence order.
    public var events: [GeoEvent]

    public init(accepted: Bool, events: [GeoEvent]) {
        self.accepted = accepted
        self.events = events
    }
}
