/// Runs the power policy and the receiver model over a recorded track on a virtual clock.
///
/// The loop (the same one the daemon runs on a real clock): the earliest of the next fix the
/// receiver model (or the coarse feed, while on) would deliver and the policy's `nextDeadline`
/// happens next; a fix at the same instant as a deadline goes first. Each fix is screened by the
/// policy, the passed fixes go to the transition oracle, and the last one, with a `FixContext`
/// built from the fence index and the oracle's answer, to `fixReceived`. The run ends at the
/// track's last recorded fix, where the receiver is switched off for the accounting.
public struct SimulationRun: Sendable {
    public var configuration: PowerConfiguration
    public var receiver: ReceiverSettings
    public var index: FenceIndex
    /// Spacing of the boundary-clearance samples along a fix's course (heading bound).
    public var courseStepMeters: Double = FixContext.courseStepMeters
    /// Longest stretch of course sampled.
    public var courseLengthMeters: Double = FixContext.courseLengthMeters
    /// The receiver model's longest recorded gap bridged by interpolation (10 s: the issue's
    /// model; larger values are a what-if for sparsely logged tracks, docs/power.md).
    public var interpolationMaxGap: Duration = .seconds(10)

    public init(configuration: PowerConfiguration, receiver: ReceiverSettings, index: FenceIndex) {
        self.configuration = configuration
        self.receiver = receiver
        self.index = index
    }

    /// An action with the virtual time it was issued at.
    public struct TimedAction: Hashable, Sendable {
        public var time: UTCTime
        public var action: PowerAction
    }

    public struct Result: Sendable {
        public var report: EnergyReport
        public var events: [GeoEvent]
        /// Every fix delivered (GNSS and coarse), in delivery order.
        public var delivered: [Fix]
        public var actions: [TimedAction]
        public var usage: ReceiverUsage
        /// On-time by reason (`OnTimeLedger`).
        public var onTime: OnTimeLedger
    }

    /// Runs the simulation. `track` must be sorted by time; `coarse` too.
    public func run<Oracle: TransitionOracle>(track: [Fix], coarse: [Fix] = [], oracle: Oracle) -> Result {
        var oracle = oracle
        var policy = PowerPolicy(configuration: configuration)
        var model = ReceiverModel(track: track, settings: receiver, interpolationMaxGap: interpolationMaxGap)
        var events: [GeoEvent] = []
        var delivered: [Fix] = []
        var actions: [TimedAction] = []
        var coarseOn = false
        var coarseCursor = 0
        var ledger = OnTimeLedger()
        var switchedOnFor: PowerReason.Kind?
        guard let start = track.first?.time, let end = track.last?.time else {
            return Result(report: EnergyReport(trackSeconds: 0, usage: model.usage, settings: receiver, events: 0),
                          events: [], delivered: [], actions: [], usage: model.usage, onTime: ledger)
        }
        var now = start

        func perform(_ list: [PowerAction]) {
            for action in list {
                actions.append(TimedAction(time: now, action: action))
                switch action {
                case let .gnssOn(reason):
                    if !model.isOn {
                        ledger.mark(now, label: "acquire \(reason.kind.rawValue)")
                        switchedOnFor = reason.kind
                    }
                    model.turnOn(at: now)
                case .gnssOff:
                    ledger.mark(now, label: nil)
                    model.turnOff(at: now)
                case .coarseOn: coarseOn = true
                case .coarseOff: coarseOn = false
                case .wakeAt: break
                }
            }
        }

        perform(policy.start(now: now))
        var stalled = 0
        while true {
            if coarseOn {
                while coarseCursor < coarse.count, coarse[coarseCursor].time < now { coarseCursor += 1 }
            }
            let gnssNext = model.nextFix?.time
            let coarseNext = coarseOn && coarseCursor < coarse.count ? coarse[coarseCursor].time : nil
            let fixTime = [gnssNext, coarseNext].compactMap { $0 }.min()
            if let deadline = policy.nextDeadline, fixTime.map({ deadline < $0 }) ?? true {
                guard deadline <= end else { break }
                let before = now
                now = max(now, deadline)
                perform(policy.deadlineReached(now: now))
                // A policy that keeps a deadline in the past would loop forever.
                stalled = now == before ? stalled + 1 : 0
                if stalled > 3 { break }
                continue
            }
            guard let time = fixTime, time <= end else { break }
            now = max(now, time)
            stalled = 0
            let fix: Fix
            if gnssNext == time, let next = model.takeFix() {
                fix = next
            } else {
                fix = coarse[coarseCursor]
                coarseCursor += 1
            }
            delivered.append(fix)
            guard case let .pass(passed) = policy.screen(fix), let last = passed.last else { continue }
            var observation = TransitionObservation(events: [], allCertain: true, transitionPending: false)
            for f in passed {
                observation = oracle.observe(f)
                events.append(contentsOf: observation.events)
            }
            let context = makeContext(for: last, observation: observation)
            perform(policy.fixReceived(last, context: context, now: now))
            // Still on after a GNSS fix: credit the time to the decision that kept it on (or, in
            // always-on and significant-change, to why it was switched on).
            if last.source == .gnss, model.isOn,
               let kind = configuration.alwaysOn || configuration.mode == .significantChange ? switchedOnFor : policy.lastDecision?.kind
            {
                ledger.mark(now, label: "on \(kind.rawValue)")
            }
        }
        ledger.mark(end, label: nil)
        model.turnOff(at: end)
        let report = EnergyReport(trackSeconds: (end - start).secondsValue, usage: model.usage, settings: receiver, events: events.count)
        return Result(report: report, events: events, delivered: delivered, actions: actions, usage: model.usage, onTime: ledger)
    }

    /// The `FixContext` for a fix (`FixContext.make`) with the oracle's certainty.
    public func makeContext(for fix: Fix, observation: TransitionObservation) -> FixContext {
        FixContext.make(
            for: fix, index: index, configuration: configuration,
            allCertain: observation.allCertain, transitionPending: observation.transitionPending,
            earliestDwellDeadline: observation.earliestDwellDeadline,
            courseStepMeters: courseStepMeters, courseLengthMeters: courseLengthMeters
        )
    }
}
