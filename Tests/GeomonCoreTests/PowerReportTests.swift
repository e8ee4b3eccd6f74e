import GeomonCore
import GeomonEvaluation
import Testing

/// Event matching against always-on, the oracle bound, the on-time ledger, the receiver model.
@Suite struct PowerReportTests {
    static let t0 = UTCTime(millisecondsSince1970: 1_700_000_000_000)
    static func at(_ s: Double) -> UTCTime { t0 + .milliseconds(Int64(s * 1000)) }
    static func event(_ fence: String, _ kind: EventKind, _ s: Double) -> GeoEvent {
        GeoEvent(id: "\(fence)-\(kind)-\(s)", kind: kind, fenceID: fence, time: at(s), coordinate: Coordinate(latitude: 0, longitude: 0), accuracyMeters: 5, rule: .recorded("test"))
    }
    static func east(_ m: Double) -> Coordinate { Coordinate(latitude: 0, longitude: m / 111_195.08) }

    /// The matching as defined, by trying every assignment of candidates to baseline events:
    /// the most pairs, then the least total |latency|. Small random runs with ties, gaps and
    /// floods of one fence; the missed events are compared by their times (equal-time events
    /// of one fence and kind are interchangeable).
    @Test func matchingGivesTheMostPairsWithTheLeastLatency() {
        var rng = SplitMix64(seed: 7)
        func definition(_ baseline: [GeoEvent], _ candidate: [GeoEvent], _ window: Duration) -> (count: Int, cost: Int64) {
            var best = (count: 0, cost: Int64.max)
            var used = [Bool](repeating: false, count: candidate.count)
            func search(_ i: Int, _ count: Int, _ cost: Int64) {
                guard i < baseline.count else {
                    if count > best.count || (count == best.count && cost < best.cost) { best = (count, cost) }
                    return
                }
                search(i + 1, count, cost)
                for (j, c) in candidate.enumerated() where !used[j] && c.fenceID == baseline[i].fenceID && c.kind == baseline[i].kind {
                    let delta = abs((c.time - baseline[i].time).wholeMilliseconds)
                    guard delta <= window.wholeMilliseconds else { continue }
                    used[j] = true
                    search(i + 1, count + 1, cost + delta)
                    used[j] = false
                }
            }
            search(0, 0, 0)
            return best
        }
        for round in 0..<300 {
            let fences = ["A", "B"].prefix(Int(rng.next() % 2) + 1)
            func events(_ n: Int, _ prefix: String) -> [GeoEvent] {
                (0..<n).map { k in
                    let fence = fences[Int(rng.next() % UInt64(fences.count))]
                    let kind: EventKind = rng.next() % 3 == 0 ? .exit : .enter
                    // Whole tens of seconds: many ties.
                    let s = Double(rng.next() % 30) * 10
                    return GeoEvent(id: "\(prefix)\(k)", kind: kind, fenceID: fence, time: Self.at(s), coordinate: Coordinate(latitude: 0, longitude: 0),
                                    accuracyMeters: 5, rule: .recorded("test"))
                }
            }
            let baseline = events(Int(rng.next() % 7), "b"), candidate = events(Int(rng.next() % 7), "c")
            let window = Duration.seconds(Int64(rng.next() % 4) * 20)
            let m = EventMatch(baseline: baseline, candidate: candidate, window: window)
            let expected = definition(baseline, candidate, window)
            #expect(m.matched == expected.count, "round \(round)")
            let cost = m.latenciesSeconds.reduce(Int64(0)) { $0 + Int64((abs($1) * 1000).rounded()) }
            #expect(cost == (expected.count == 0 ? 0 : expected.cost), "round \(round)")
            #expect(m.extra == candidate.count - expected.count, "round \(round)")
            #expect(m.missed.count == baseline.count - expected.count, "round \(round)")
        }
    }

    /// A run that missed the first of three visits to a fence misses that one, not the last:
    /// its two enters pair with the baseline's at the same times.
    @Test func aMissedEventIsTheOneLeftOverNotTheLastOfItsFence() {
        let baseline = [Self.event("F", .enter, 0), Self.event("F", .enter, 30), Self.event("F", .enter, 73)]
        let candidate = [Self.event("F", .enter, 30.5), Self.event("F", .enter, 73)]
        let m = EventMatch(baseline: baseline, candidate: candidate, window: .seconds(600))
        #expect(m.missed.map(\.time) == [Self.at(0)])
        #expect(m.latenciesSeconds == [0.5, 0])
        #expect(m.extra == 0)
        // Runs further apart than the window are aligned apart, each its own way.
        let far = EventMatch(baseline: baseline + [Self.event("F", .enter, 5000), Self.event("F", .enter, 5040)],
                             candidate: candidate + [Self.event("F", .enter, 5041)], window: .seconds(600))
        #expect(far.missed.map(\.time) == [Self.at(0), Self.at(5000)])
        #expect(far.latenciesSeconds == [0.5, 0, 1])
    }

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
        let empty = EventMatch(baseline: [], candidate: [], window: .seconds(1))
        #expect(empty.latencyP50Seconds == nil)
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
    }

    @Test func onTimeLedgerCreditsEachIntervalToTheLabelRunningThen() {
        var ledger = OnTimeLedger()
        ledger.mark(Self.at(0), label: .acquire(.start))
        ledger.mark(Self.at(30), label: .on(.uncertain))
        ledger.mark(Self.at(45), label: nil)
        ledger.mark(Self.at(100), label: .acquire(.scheduledWake))
        ledger.mark(Self.at(102), label: .on(.uncertain))
        ledger.mark(Self.at(103.5), label: nil)
        ledger.mark(Self.at(500), label: nil)
        #expect(ledger.current == nil)
        #expect(ledger.entries.map(\.label) == ["acquire scheduled-wake", "acquire start", "on uncertain"])
        #expect(ledger.entries.map(\.seconds) == [2, 30, 16.5])
    }

    @Test func widerInterpolationDeliversTheFirstFixSoonerAcrossASamplingGap() {
        // Fixes every 15 s: a wake between them waits for the next recorded fix under the 10 s
        // model, and gets an interpolated fix after the hot TTFF when gaps up to 20 s are bridged.
        // (The model reads the recording forwards, as the driver's clock runs: the first fix is
        // taken at its time, the wake comes after it.)
        let track = (0..<6).map { Fix(time: Self.at(Double($0) * 15), coordinate: Self.east(Double($0) * 15), horizontalAccuracyMeters: 5) }
        var strict = ReceiverModel(track: track, settings: ReceiverSettings(), interpolationMaxGap: .seconds(10))
        strict.turnOn(at: Self.at(0))
        #expect(strict.takeFix()?.time == Self.at(30))
        strict.turnOff(at: Self.at(31))
        strict.turnOn(at: Self.at(50))
        #expect(strict.nextFix?.time == Self.at(60))
        var wide = ReceiverModel(track: track, settings: ReceiverSettings(), interpolationMaxGap: .seconds(20))
        wide.turnOn(at: Self.at(0))
        #expect(wide.takeFix()?.time == Self.at(30))
        wide.turnOff(at: Self.at(31))
        wide.turnOn(at: Self.at(50))
        let fix = wide.nextFix
        #expect(fix?.time == Self.at(52))
        #expect(abs((fix?.coordinate.longitude ?? 0) - Self.east(52).longitude) < 1e-9)
    }

    @Test func reportAddsUpTheReceiversPhases() {
        var usage = ReceiverUsage()
        usage.acquire = .seconds(4)
        usage.track = .seconds(56)
        usage.wakeups = 2
        usage.fixesDelivered = 57
        var s = ReceiverSettings()
        s.powerAcquireMilliwatts = 120
        s.powerTrackMilliwatts = 90
        let r = EnergyReport(trackSeconds: 600, usage: usage, settings: s, events: 2, powerMethod: "ubx")
        #expect(r.trackSeconds == 600 && r.fixesUsed == 57 && r.wakeups == 2 && r.events == 2)
        #expect(r.gnssOnSeconds == 60 && r.acquireSeconds == 4 && r.trackingSeconds == 56)
        #expect(abs(r.dutyCycle - 0.1) < 1e-12)
        // (4·120 + 56·90)/3600 = 1.5333 mWh.
        #expect(abs(r.energyMilliwattHours - (4.0 * 120 + 56 * 90) / 3600) < 1e-12)
    }
}
