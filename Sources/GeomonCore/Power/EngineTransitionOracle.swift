/// The real `TransitionEngine` as the power policy's `TransitionOracle` (what `geomon replay`
/// uses): events are the engine's; certainty and pending confirmations come from its state.
///
/// For a fix with accuracy `a` and the profile's hysteresis `h`, the fix is *certain* when the
/// engine has left its start-up `unknown` state, the fix is usable (coarse, or GNSS with
/// `a ≤ min_accuracy`), and no fence boundary is within `a + h` of it (so every fence is
/// certainly inside or outside by the engine's own rule). A transition is *pending* while any
/// fence record holds an unconfirmed change; the dwell deadline is the engine's `nextDeadline`.
public struct EngineTransitionOracle: TransitionOracle, Sendable {
    public private(set) var engine: TransitionEngine

    public init(engine: TransitionEngine) {
        self.engine = engine
    }

    public init(profile: Profile, index: FenceIndex? = nil) {
        engine = TransitionEngine(profile: profile, index: index)
    }

    public mutating func observe(_ fix: Fix) -> TransitionObservation {
        let outcome = engine.fixReceived(fix)
        return Self.observation(engine: engine, after: fix, accepted: outcome.accepted, events: outcome.events)
    }

    /// What the policy needs to know after `engine` took `fix` (the rules above). The live
    /// daemon uses it too, so `geomon run` and `geomon replay` decide alike.
    public static func observation(engine: TransitionEngine, after fix: Fix, accepted: Bool, events: [GeoEvent] = []) -> TransitionObservation {
        let snapshot = engine.snapshot
        let pending = snapshot.records.contains { $0.pending != nil }
        let minAccuracy = engine.profile.sources.gnss?.minAccuracyMeters ?? GNSSSourceSettings().minAccuracyMeters
        var certain = accepted && engine.implicitState != .unknown
        if certain, fix.source == .gnss, fix.horizontalAccuracyMeters > minAccuracy { certain = false }
        if certain {
            let band = fix.horizontalAccuracyMeters + max(0, engine.profile.transitions.hysteresisMeters)
            for near in engine.index.near(fix.coordinate, within: band) where abs(near.signedDistanceMeters) < band {
                certain = false
                break
            }
        }
        if certain, snapshot.records.contains(where: { $0.state == .unknown }) { certain = false }
        return TransitionObservation(
            events: events, allCertain: certain && !pending, transitionPending: pending,
            earliestDwellDeadline: engine.nextDeadline
        )
    }
}
