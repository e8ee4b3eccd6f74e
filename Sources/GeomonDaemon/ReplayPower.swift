public import GeomonCore

/// The power policy and the receiver model in `geomon replay` (issue 6).
///
/// The run is the pure `SimulationRun` loop with the real `TransitionEngine` as its oracle
/// (`EngineTransitionOracle`): the policy decides when the receiver is on, the receiver model
/// delivers only the fixes a real receiver would have produced (TTFF, interpolation across
/// gaps ≤ 10 s, nothing while off), and the engine decides from those fixes. The delivered
/// fixes are then replayed through the `Monitor` (store, hooks, printed events), so the
/// printed events are the engine's decisions on exactly the fixes the receiver delivered.
public struct ReplayPower: Sendable {
    public struct Options: Sendable {
        /// Force the receiver on (`--always-on`).
        public var alwaysOn = false
        /// Also run always-on and compare (`--compare-always-on`).
        public var compareAlwaysOn = false
        /// A recorded coarse track (`--coarse FILE`); nil derives coarse fixes from the track.
        public var coarse: [Fix]?
        /// Seed of the derived coarse fixes' degradation (`--seed`).
        public var seed: UInt64 = 1
        /// The receiver model's longest gap bridged by interpolation (`--interpolate-gaps`).
        public var interpolationMaxGap: Duration = .seconds(10)
        public init() {}
    }

    public let profile: Profile
    public let options: Options
    public let index: FenceIndex
    public let simulation: SimulationRun
    /// The recorded fixes, sorted by time (stable).
    public let track: [Fix]
    /// The coarse fixes offered to the policy (recorded or derived), sorted by time.
    public let coarse: [Fix]

    public private(set) var result: SimulationRun.Result
    public private(set) var baseline: SimulationRun.Result?
    public private(set) var match: EventMatch?
    public private(set) var oracle: OracleBound?

    /// Runs the policy (and the always-on baseline with `compareAlwaysOn`) over `fixes`.
    public init(profile: Profile, fixes: [Fix], options: Options) {
        self.profile = profile
        self.options = options
        index = FenceIndex(shapes: profile.fences.map(\.shape))
        track = fixes.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
        var configuration = PowerConfiguration(profile: profile)
        configuration.alwaysOn = options.alwaysOn
        var simulation = SimulationRun(configuration: configuration, receiver: profile.policy.receiver, index: index)
        simulation.interpolationMaxGap = options.interpolationMaxGap
        self.simulation = simulation
        coarse = Self.coarseFixes(profile: profile, track: track, options: options)
        let engine = EngineTransitionOracle(profile: profile, index: index)
        if options.compareAlwaysOn {
            let comparison = PowerComparison(simulation: simulation, track: track, coarse: coarse, oracle: engine)
            result = comparison.policy
            baseline = comparison.baseline
            match = comparison.match
            oracle = comparison.oracle
        } else {
            result = simulation.run(track: track, coarse: coarse, oracle: engine)
        }
    }

    /// Coarse fixes: the recorded coarse track, else (when the profile has a coarse source or
    /// runs significant-change) derived every `sources.coarse.interval` with the documented
    /// seeded degradation (`CoarseFixGenerator`), else none.
    static func coarseFixes(profile: Profile, track: [Fix], options: Options) -> [Fix] {
        if let recorded = options.coarse {
            return recorded.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map {
                var fix = $0.element
                fix.source = .coarse
                return fix
            }
        }
        guard profile.sources.coarse != nil || profile.mode == .significantChange else { return [] }
        let settings = profile.sources.coarse ?? CoarseSourceSettings()
        return CoarseFixGenerator.derive(track: track, interval: settings.interval,
                                         accuracyMeters: settings.expectedAccuracyMeters, seed: options.seed)
    }

    /// The fixes the receiver delivered (GNSS and coarse), in delivery order: what the
    /// `Monitor` replays. With `alwaysOn` the receiver is taken to be on before the track
    /// starts, so every recorded fix is delivered (the energy figures still count a warm start
    /// at the first fix, like the comparison baseline).
    public var delivered: [Fix] { options.alwaysOn ? track : result.delivered }

    /// The receiver's intervals from the policy's actions: acquiring from switch-on to the
    /// first delivered GNSS fix, on until switch-off, off in between; each with its reason.
    public var receiverIntervals: [RunPicture.ReceiverInterval] {
        Self.intervals(result, start: track.first?.time, end: track.last?.time)
    }

    static func intervals(_ run: SimulationRun.Result, start: UTCTime?, end: UTCTime?) -> [RunPicture.ReceiverInterval] {
        guard let start, let end else { return [] }
        let gnssTimes = run.delivered.filter { $0.source == .gnss }.map(\.time)
        var out: [RunPicture.ReceiverInterval] = []
        var onAt: UTCTime?
        var onReason = ""
        var offAt = start
        var offReason = ""
        func close(at t: UTCTime) {
            guard let since = onAt else { return }
            // First delivered GNSS fix in [since, t].
            var lo = 0, hi = gnssTimes.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if gnssTimes[mid] < since { lo = mid + 1 } else { hi = mid }
            }
            let first = lo < gnssTimes.count && gnssTimes[lo] <= t ? gnssTimes[lo] : t
            if first > since { out.append(.init(start: since, end: first, state: .acquiring, reason: onReason)) }
            if t > first { out.append(.init(start: first, end: t, state: .on, reason: onReason)) }
            onAt = nil
            offAt = t
        }
        for timed in run.actions {
            switch timed.action {
            case let .gnssOn(reason):
                guard onAt == nil else { continue }
                if timed.time > offAt { out.append(.init(start: offAt, end: timed.time, state: .off, reason: offReason)) }
                onAt = timed.time
                onReason = reason.description
            case let .gnssOff(reason):
                close(at: timed.time)
                offReason = reason.description
            case .wakeAt, .coarseOn, .coarseOff:
                continue
            }
        }
        if onAt != nil {
            close(at: end)
        } else if end > offAt {
            out.append(.init(start: offAt, end: end, state: .off, reason: offReason))
        }
        return out
    }
}

