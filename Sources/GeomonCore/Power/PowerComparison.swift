/// A run, the same run with the receiver forced on, and how they compare: everything
/// `replay --compare-always-on` reports.
public struct PowerComparison: Sendable {
    public var policy: SimulationRun.Result
    public var baseline: SimulationRun.Result
    public var match: EventMatch
    public var oracle: OracleBound

    /// Runs `simulation` twice (as configured, then always-on) with fresh copies of `oracle`.
    /// Events match within `window` (default: the configuration's `max_sleep`).
    public init<Oracle: TransitionOracle>(
        simulation: SimulationRun, track: [Fix], coarse: [Fix] = [], oracle: Oracle, window: Duration? = nil
    ) {
        var forced = simulation
        forced.configuration.alwaysOn = true
        policy = simulation.run(track: track, coarse: coarse, oracle: oracle)
        baseline = forced.run(track: track, coarse: coarse, oracle: oracle)
        match = EventMatch(baseline: baseline.events, candidate: policy.events, window: window ?? simulation.configuration.maxSleep)
        self.oracle = OracleBound(track: track, index: simulation.index, settings: simulation.receiver)
    }

    /// `gnss_on_s` of the run as a share of always-on's.
    public var onTimeShare: Double {
        baseline.report.gnssOnSeconds > 0 ? policy.report.gnssOnSeconds / baseline.report.gnssOnSeconds : 0
    }
}
