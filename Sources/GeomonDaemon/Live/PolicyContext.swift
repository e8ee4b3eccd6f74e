public import GeomonCore

/// What the engine and the fence index know about a fix, in the form the power policy takes
/// (`EngineTransitionOracle.observation` and `FixContext.make`: the same as replay's, heading
/// bound included).
public enum PolicyContext {
    /// - Parameter accepted: whether the engine took the fix (a rejected one decides nothing).
    public static func make(engine: TransitionEngine, fix: Fix, accepted: Bool = true, configuration: PowerConfiguration) -> FixContext {
        let observation = EngineTransitionOracle.observation(engine: engine, after: fix, accepted: accepted)
        return FixContext.make(
            for: fix, index: engine.index, configuration: configuration,
            allCertain: observation.allCertain, transitionPending: observation.transitionPending,
            earliestDwellDeadline: observation.earliestDwellDeadline
        )
    }
}
