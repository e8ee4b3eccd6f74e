import GeomonCore
import Testing

/// Event matching against always-on, the oracle bound, the minimal engine and the simulation.
@Suite struct PowerReportTests {
    static let t0 = UTCTime(millisecondsSince1970: 1_700_000_000_000)
    static func at(_ s: Double) -> UTCTime { t0 + .milliseconds(Int64(s * 1000)) }
    static func event(_ fence: String, _ kind: EventKind, _ s: Double) -> GeoEvent {
        GeoEvent(id: "\(fence)-\(kind)-\(s)", kind: kind, fenceID: fence, time: at(s), coordinate: Coordinate(latitude: 0, longitude: 0), accuracyMeters: 5, rule: "test")
    }
    static func east(_ m: Double) -> Coordinate { Coordinate(latitude: 0, longitude: m / 111_195.08) }

    @Test func matchCountsRecallExtrasAndLatencyPercentiles() {
        let baseline = [Self.event("A", .enter, 100), Self.event("A", .exit, 200), Self.event("B", .enter, 300)]
        let candidate = [Self.event("A", .exit, 260), Self.event("A", .enter, 105), Self.event("C", .enter, 400), Self.event("B", .enter, 1000)]
        let m = EventMatch(baseline: baseline, candidate: candidate, window: .seconds(600))
        // B enter at 1000 s is 700 s late: outside the window, so missed and extra.
        #expect(m.matched == 2)
        #expect(m.missed.map(\.fenceID) == ["B"])
        #expect(m.extra == 2)
        #expect(abs(m.recall - 2.0 / 3.0) < 1e-12)
        #expect(m.latenciesSeconds == [5, 60])
        #expect(m.latencyP50Seconds == 5)
        #expect(m.latencyP95Seconds == 60)
        #expect(m.jsonMembers == "\"recall\": 0.6667, \"extra\": 2, \"latency_s_p50\": 5.000, \"latency_s_p95\": 60.000")
        let empty = EventMatch(baseline: [], candidate: [], window: .seconds(1))
        #expect(empty.jsonMembers == "\"recall\": 1.0000, \"extra\": 0, \"latency_s_p50\": null, \"latency_s_p95\": null")
        #expect(empty.recall == 1)
        #expect(empty.latencyP95Seconds == nil)
    }

    static func straightTrack(seconds: Int, speed: Double) -> [Fix] {
        (0...seconds).map { s in
            Fix(time: at(Double(s)), coordinate: east(Double(s) * speed), horizontalAccuracyMeters: 5, speedMetersPerSecond: speed, courseDegrees: 90)
        }
    }

    @Test func oracleBoundCountsCrossingsOfTheRecordedTrack() {
        // 10 m/s east for 300 s through a 250 m circle centred at 1500 m: in at 1250 m, out at 1750 m.
        let track = Self.straightTrack(seconds: 300, speed: 10)
        let index = FenceIndex(shapes: [.circle(center: Self.east(1500), radiusMeters: 250)])
        var settings = ReceiverSettings()
        settings.ttffHot = .seconds(2)
        settings.ttffWarm = .seconds(30)
        let bound = OracleBound(track: track, index: index, settings: settings)
        #expect(bound.crossings == 2)
        // 30 + 2·2 s acquiring, 1 + 2 s tracking.
        #expect(abs(bound.gnssOnSeconds - 37) < 1e-9)
        #expect(abs(bound.energyMilliwattHours - (34 * 120 + 3 * 90) / 3600.0) < 1e-9)
        // (34·120 + 3·90)/3600 = 1.2083 mWh.
        #expect(bound.jsonMembers == "\"crossings\": 2, \"gnss_on_s\": 37.000, \"energy_mwh\": 1.208")
    }

    @Test func certaintyOracleConfirmsWithTwoFixesAndDatesTheEventAtTheFirst() {
        let index = FenceIndex(shapes: [.circle(center: Self.east(0), radiusMeters: 100)])
        var o = BoundaryCertaintyOracle(index: index, fenceIDs: ["home"], hysteresisMeters: 10, confirm: 2, minAccuracyMeters: 50)
        func f(_ s: Double, _ m: Double) -> Fix { Fix(time: Self.at(s), coordinate: Self.east(m), horizontalAccuracyMeters: 5) }
        // Outside (s = 100 ≥ 15): first certain side, silent.
        #expect(o.observe(f(0, 200)) == TransitionObservation(events: [], allCertain: true, transitionPending: false))
        // s = −5: within ±15, uncertain.
        let unsure = o.observe(f(1, 95))
        #expect(!unsure.allCertain && unsure.events.isEmpty)
        // Certainly inside twice: enter dated at the first of the two.
        let first = o.observe(f(2, 50))
        #expect(first.transitionPending && first.events.isEmpty)
        let second = o.observe(f(3, 40))
        #expect(second.events.map(\.kind) == [.enter])
        #expect(second.events.first?.time == Self.at(2))
        #expect(second.allCertain && !second.transitionPending)
    }

    @Test func simulationFindsTheAlwaysOnEventsWithLessOnTimeAndIsDeterministic() {
        let track = Self.straightTrack(seconds: 600, speed: 10)
        let index = FenceIndex(shapes: [.circle(center: Self.east(3000), radiusMeters: 250)])
        var profile = Profile(name: "sim", mode: .regions)
        profile.policy.maxSpeedMetersPerSecond = 45
        profile.policy.wakeMarginMeters = 20
        profile.policy.minSleep = .seconds(10)
        profile.policy.maxSleep = .seconds(600)
        profile.policy.receiver.ttffHot = .seconds(2)
        let config = PowerConfiguration(profile: profile)
        var alwaysOn = config
        alwaysOn.alwaysOn = true
        let oracle = BoundaryCertaintyOracle(index: index, fenceIDs: ["f"], hysteresisMeters: 10, confirm: 2, minAccuracyMeters: 50)
        let run = SimulationRun(configuration: config, receiver: profile.policy.receiver, index: index)
        let policy = run.run(track: track, oracle: oracle)
        let again = run.run(track: track, oracle: oracle)
        let baseline = SimulationRun(configuration: alwaysOn, receiver: profile.policy.receiver, index: index).run(track: track, oracle: oracle)

        #expect(baseline.events.map(\.kind) == [.enter, .exit])
        let match = EventMatch(baseline: baseline.events, candidate: policy.events, window: .seconds(600))
        #expect(match.recall == 1)
        #expect(match.extra == 0)
        #expect((match.latencyP95Seconds ?? .infinity) <= 12)
        #expect(baseline.report.gnssOnSeconds == 600)
        #expect(baseline.report.wakeups == 1)
        #expect(policy.report.gnssOnSeconds < 0.5 * baseline.report.gnssOnSeconds)
        #expect(policy.report.trackSeconds == 600)
        #expect(abs(policy.report.acquireSeconds + policy.report.trackingSeconds - policy.report.gnssOnSeconds) < 1e-9)
        // The on-time by reason adds up to the on-time: acquiring after each switch-on, then
        // on while confirming the two crossings (or watching the near boundary).
        let byReason = policy.onTime.entries
        #expect(abs(byReason.map(\.seconds).reduce(0, +) - policy.report.gnssOnSeconds) < 1e-6)
        #expect(byReason.contains { $0.label == "acquire start" })
        #expect(byReason.contains { $0.label == "acquire scheduled-wake" })
        #expect(byReason.contains { $0.label == "on confirming" })
        #expect(byReason.map(\.label) == byReason.map(\.label).sorted())
        #expect(abs(baseline.onTime.entries.map(\.seconds).reduce(0, +) - 600) < 1e-6)
        #expect(baseline.onTime.entries.allSatisfy { $0.label.hasSuffix("always-on") })
        #expect(policy.actions == again.actions)
        #expect(policy.events == again.events)
        #expect(policy.report == again.report)
        // No fix is delivered while the policy has the receiver off.
        var on = false
        var actionIndex = 0
        for fix in policy.delivered {
            while actionIndex < policy.actions.count, policy.actions[actionIndex].time <= fix.time {
                switch policy.actions[actionIndex].action {
                case .gnssOn: on = true
                case .gnssOff: on = false
                default: break
                }
                actionIndex += 1
            }
            #expect(on || policy.actions.contains { $0.time == fix.time })
        }
    }

    @Test func onTimeLedgerCreditsEachIntervalToTheLabelRunningThen() {
        var ledger = OnTimeLedger()
        ledger.mark(Self.at(0), label: "acquire start")
        ledger.mark(Self.at(30), label: "on uncertain")
        ledger.mark(Self.at(45), label: nil)
        ledger.mark(Self.at(100), label: "acquire scheduled-wake")
        ledger.mark(Self.at(102), label: "on uncertain")
        ledger.mark(Self.at(103.5), label: nil)
        ledger.mark(Self.at(500), label: nil)
        #expect(ledger.current == nil)
        #expect(ledger.entries.map(\.label) == ["acquire scheduled-wake", "acquire start", "on uncertain"])
        #expect(ledger.entries.map(\.seconds) == [2, 30, 16.5])
    }

    @Test func widerInterpolationDeliversTheFirstFixSoonerAcrossASamplingGap() {
        // Fixes every 15 s: a wake between them waits for the next recorded fix under the 10 s
        // model, and gets an interpolated fix after the hot TTFF when gaps up to 20 s are bridged.
        let track = (0..<5).map { Fix(time: Self.at(Double($0) * 15), coordinate: Self.east(Double($0) * 15), horizontalAccuracyMeters: 5) }
        var strict = ReceiverModel(track: track, settings: ReceiverSettings())
        strict.turnOn(at: Self.at(0))
        _ = strict.takeFix()
        strict.turnOff(at: Self.at(1))
        strict.turnOn(at: Self.at(20))
        #expect(strict.nextFix?.time == Self.at(30))
        var wide = ReceiverModel(track: track, settings: ReceiverSettings(), interpolationMaxGap: .seconds(20))
        wide.turnOn(at: Self.at(0))
        _ = wide.takeFix()
        wide.turnOff(at: Self.at(1))
        wide.turnOn(at: Self.at(20))
        let fix = wide.nextFix
        #expect(fix?.time == Self.at(22))
        #expect(abs((fix?.coordinate.longitude ?? 0) - Self.east(22).longitude) < 1e-9)
    }

    @Test func reportRendersDeterministicJSONMembers() {
        var usage = ReceiverUsage()
        usage.acquire = .seconds(4)
        usage.track = .seconds(56)
        usage.wakeups = 2
        usage.fixesDelivered = 57
        var s = ReceiverSettings()
        s.powerAcquireMilliwatts = 120
        s.powerTrackMilliwatts = 90
        let r = EnergyReport(trackSeconds: 600, usage: usage, settings: s, events: 2)
        #expect(r.jsonMembers == "\"track_s\": 600.000, \"fixes_used\": 57, \"gnss_on_s\": 60.000, \"gnss_acquire_s\": 4.000, \"gnss_track_s\": 56.000, \"duty_cycle\": 0.1000, \"wakeups\": 2, \"energy_mwh\": 1.533, \"events\": 2")
    }
}

/// Whole-loop simulations of the continuous and significant-change modes.
@Suite struct PowerSimulationModeTests {
    static let t0 = UTCTime(millisecondsSince1970: 1_700_000_000_000)
    static func east(_ m: Double) -> Coordinate { Coordinate(latitude: 0, longitude: m / 111_195.08) }

    static func profile(_ mode: MonitoringMode) -> Profile {
        var p = Profile(name: "sim", mode: mode)
        p.sources.gnss = GNSSSourceSettings()
        p.policy.maxSpeedMetersPerSecond = 45
        p.policy.wakeMarginMeters = 20
        p.policy.minSleep = .seconds(10)
        p.policy.maxSleep = .seconds(600)
        p.policy.receiver.ttffHot = .seconds(2)
        return p
    }

    @Test func continuousModeIsOffDuringAStopBeyondTimeoutPlusChecks() {
        // 1 Hz: 300 s at 2 m/s, stopped 1200 s (±3 m jitter), 900 s at 2 m/s again.
        var track: [Fix] = []
        for s in 0...2400 {
            let x: Double = s <= 300 ? Double(s) * 2 : (s <= 1500 ? 600 + Double(s % 3) : 600 + Double(s - 1500) * 2)
            track.append(Fix(time: Self.t0 + .seconds(s), coordinate: Self.east(x), horizontalAccuracyMeters: 5, speedMetersPerSecond: s > 300 && s <= 1500 ? 0 : 2))
        }
        let p = Self.profile(.continuous)
        let index = FenceIndex(shapes: [])
        let oracle = BoundaryCertaintyOracle(index: index, fenceIDs: [], hysteresisMeters: 10, confirm: 2, minAccuracyMeters: 50)
        let result = SimulationRun(configuration: PowerConfiguration(profile: p), receiver: p.policy.receiver, index: index).run(track: track, oracle: oracle)
        // Stationary from the stop (300 s) + timeout 300 s = 600 s; checks after 10, 20, 40, 80,
        // 160, 320 s (cumulative 630 s ≤ 900 s left in the stop), each costing one 2 s hot start.
        let duringStop = result.delivered.filter { $0.time > Self.t0 + .seconds(610) && $0.time <= Self.t0 + .seconds(1500) }
        #expect(duringStop.count <= 7)
        #expect(result.actions.contains { if case .gnssOff(let r) = $0.action { return r.kind == .stationary } else { return false } })
        // The next check (at most max_sleep = 600 s after the last one, before 2100 s) finds the
        // device moving and tracking resumes to the end of the track.
        #expect(result.delivered.last?.time == track.last?.time)
        #expect(result.actions.contains { $0.time <= Self.t0 + .seconds(2100) && $0.action == .gnssOn(PowerReason(.stationaryCheck, ttff: .seconds(2))) })
        // On: ≤ 610 s before the stationary switch-off, ≤ 8 checks, then from the resume to the end.
        #expect(result.report.gnssOnSeconds < 610 + 8 * 3 + 900)
        #expect(result.report.gnssOnSeconds > 600 + 300)
    }

    @Test func significantChangeWakesGNSSOnlyNearTheFence() {
        // 1 Hz at 10 m/s for 1500 s (15 km); a 250 m fence at 7.5 km; coarse fixes every 60 s,
        // 200 m accuracy, derived with seed 7.
        let track = (0...1500).map { s in
            Fix(time: Self.t0 + .seconds(s), coordinate: Self.east(Double(s) * 10), horizontalAccuracyMeters: 5, speedMetersPerSecond: 10, courseDegrees: 90)
        }
        let coarse = CoarseFixGenerator.derive(track: track, interval: .seconds(60), accuracyMeters: 200, seed: 7)
        let p = Self.profile(.significantChange)
        let index = FenceIndex(shapes: [.circle(center: Self.east(7500), radiusMeters: 250)])
        let oracle = BoundaryCertaintyOracle(index: index, fenceIDs: ["f"], hysteresisMeters: 10, confirm: 2, minAccuracyMeters: 50)
        let run = SimulationRun(configuration: PowerConfiguration(profile: p), receiver: p.policy.receiver, index: index)
        let result = run.run(track: track, coarse: coarse, oracle: oracle)
        let wakes = result.actions.filter { if case .gnssOn(let r) = $0.action { return r.kind == .coarseNearFence } else { return false } }
        #expect(!wakes.isEmpty)
        // Every GNSS wake happens with the device within coarse accuracy + margin + 60 s of travel
        // of the fence boundary (7250…7750 m): between 6370 m and 8630 m.
        for w in wakes {
            let x = Double((w.time - Self.t0).wholeMilliseconds) / 100
            #expect(x >= 6370 && x <= 8630)
        }
        #expect(result.report.gnssOnSeconds < 0.3 * 1500)
        #expect(result.delivered.contains { $0.source == .coarse })

        var coarseOnly = PowerConfiguration(profile: p)
        coarseOnly.gnssConfigured = false
        let silent = SimulationRun(configuration: coarseOnly, receiver: p.policy.receiver, index: index).run(track: track, coarse: coarse, oracle: oracle)
        #expect(silent.report.gnssOnSeconds == 0)
        #expect(silent.report.wakeups == 0)
    }
}
