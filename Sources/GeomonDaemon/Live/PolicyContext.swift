public import GeomonCore

/// What the engine and the fence index know about a fix, in the form the power policy takes.
public enum PolicyContext {
    public static func make(engine: TransitionEngine, fix: Fix, configuration: PowerConfiguration) -> FixContext {
        let radius = configuration.searchRadiusMeters
        let index = engine.index
        let snapshot = engine.snapshot
        let hysteresis = engine.profile.transitions.hysteresisMeters
        let uncertainBand = fix.horizontalAccuracyMeters + hysteresis
        let nearby = index.near(fix.coordinate, within: uncertainBand)
        let allCertain = nearby.isEmpty && engine.implicitState != .unknown
        let pending = snapshot.records.contains { $0.pending != nil }
        return FixContext(
            nearestBoundaryMeters: index.nearestBoundary(to: fix.coordinate, within: radius).map { abs($0.signedDistanceMeters) },
            searchRadiusMeters: radius,
            allCertain: allCertain,
            transitionPending: pending,
            earliestDwellDeadline: engine.nextDeadline
        )
    }
}
