import GeomonCore
import GeomonFormat
import Testing

/// Approach bands, confirmation by time and repeated dwell, with hand-computed expectations.
/// The fence is TransitionEngineTests' "home" (a 100 m circle); a fix `d` metres north of its
/// centre is `s = d − 100` from the boundary. Accuracy 5 m and hysteresis 10 m make the
/// direction's tolerance 15 m; `policy.max_speed` is 30 m/s.
struct ApproachAndTimeRulesTests {
    typealias T = TransitionEngineTests

    static func profile(bands: [Double] = [1000, 500, 200], reset: Double? = nil) -> Profile {
        var p = T.profile(events: [.enter, .exit], dwell: nil)
        p.fences[0].approach = ApproachSettings(bandsMeters: bands, resetMeters: reset)
        return p
    }

    /// Fixes every `step` seconds from `t0`, at distances `d(t)` from the centre.
    static func track(from t0: Int64, to t1: Int64, step: Int64 = 5, _ d: (Int64) -> Double) -> [Fix] {
        stride(from: t0, through: t1, by: Int(step)).map { T.fix($0, d($0)) }
    }

    static func approaches(_ events: [GeoEvent]) -> [(t: Int64, band: Double, s: Double)] {
        events.compactMap { e in e.approach.map { (e.time.millisecondsSince1970 / 1000, $0.bandMeters ?? .nan, $0.distanceMeters) } }
    }

    // MARK: - Approach

    @Test func straightApproachReportsEachBandOnceWithAnETAThatMeetsTheArrival() throws {
        // 10 m/s inbound, a fix every 5 s: s = 1902 − 10 t. Band 1000 is reached by the fix at
        // t = 95 (s = 952), 500 at t = 145, 200 at t = 175; the boundary at t = 190.2; the
        // first certainly-inside fix (s <= −15) at t = 195 (s = −48), confirmed at t = 200.
        var engine = TransitionEngine(profile: Self.profile())
        let events = T.run(&engine, Self.track(from: 0, to: 200) { 2002 - 10 * Double($0) })
        #expect(T.summary(events) == ["approach@95", "approach@145", "approach@175", "enter@195"])
        let first = try #require(events[0].approach)
        #expect(first.bandMeters == 1000 && abs(first.distanceMeters - 952) < 0.01)
        #expect(abs(first.distanceLowerBoundMeters - 937) < 0.01)
        #expect(first.direction == .towards && abs(first.closingSpeedMetersPerSecond - 10) < 1e-3)
        // ETA 95.2 s: 95 + 95.2 = 190.2, the instant the boundary is reached.
        #expect(abs(try #require(first.eta).secondsValue - 95.2) < 0.01)
        #expect(abs(try #require(first.etaLowerBound).secondsValue - 937.0 / 30) < 0.01)
        for event in events where event.kind == .approach {
            let a = try #require(event.approach)
            let arrival = Double(event.time.millisecondsSince1970) / 1000 + (a.eta?.secondsValue ?? .nan)
            #expect(abs(arrival - 190.2) < 0.01)
        }
        // The worked example of docs/engine.md ("Approach").
        #expect(events[0].rule.text == "approach: within the 1000 m band, d=952.0 m (>= 937.0 m), towards at 10.00 m/s over 8 fixes in 65.0 s, eta 95.2 s (>= 31.2 s at max_speed)")
        #expect(events[0].id == EventID.make(profile: "home-profile", fenceID: "home", kind: .approach, time: T.time(95)))
    }

    /// "Home in 2 minutes": ETA bands fire on the ETA's lower bound `(s − τ) / v`, once per
    /// approach, beside distance bands; an event that reaches both kinds names both.
    @Test func etaBandsFireOnTheETAsLowerBoundOncePerApproach() throws {
        var p = T.profile(events: [.enter, .exit], dwell: nil)
        p.fences[0].approach = ApproachSettings(bandsMeters: [1000], etaBands: [.seconds(30), .seconds(120)])
        // 10 m/s inbound, s = 1902 − 10 t. The 120 s band: (s − 15) / 10 ≤ 120 first at t = 70
        // (s = 1202, 118.7 s); the 1000 m band at t = 95; the 30 s band at t = 160 (s = 302).
        var engine = TransitionEngine(profile: p)
        let events = T.run(&engine, Self.track(from: 0, to: 200) { 2002 - 10 * Double($0) })
        #expect(T.summary(events) == ["approach@70", "approach@95", "approach@160", "enter@195"])
        let first = try #require(events[0].approach)
        #expect(first.bandETA == .seconds(120) && first.bandMeters == nil)
        #expect(events[0].rule.text.hasPrefix("approach: within the 120 s ETA band, d=1202.0 m"))
        #expect(try #require(events[1].approach).bandMeters == 1000 && events[1].approach?.bandETA == nil)
        #expect(try #require(events[2].approach).bandETA == .seconds(30))
        #expect(EventRule.approachMembers(first).map(\.name).prefix(2) == ["band_eta_s", "distance_m"])

        // Out again to s = 2500 and back: still within 120 s × max_speed (3600 m) and its reset,
        // so not again; out to s = 4600 (beyond 3600 + 720): armed, and reported on the way in.
        engine = TransitionEngine(profile: p)
        var fixes = Self.track(from: 0, to: 80) { 2002 - 10 * Double($0) }              // s → 1102
        fixes += Self.track(from: 85, to: 220) { 1200 + 10 * Double($0 - 80) }          // s → 2500
        fixes += Self.track(from: 225, to: 300) { 2600 - 10 * Double($0 - 220) }        // s → 1700
        let short = T.run(&engine, fixes).compactMap(\.approach).compactMap(\.bandETA)
        #expect(short == [.seconds(120)])
        engine = TransitionEngine(profile: p)
        fixes = Self.track(from: 0, to: 80) { 2002 - 10 * Double($0) }
        fixes += Self.track(from: 85, to: 420) { 1200 + 10 * Double($0 - 80) }          // s → 4500
        fixes += Self.track(from: 425, to: 800) { 4600 - 10 * Double($0 - 420) }        // s → 800
        let long = T.run(&engine, fixes).compactMap(\.approach).compactMap(\.bandETA)
        #expect(long == [.seconds(120), .seconds(120)])
    }

    @Test func aDeviceFasterThanMaxSpeedGetsItsETABandOncePerApproach() throws {
        // 40 m/s inbound where max_speed is 30 m/s, a fix a second: s = 5102 − 40 t. The 60 s
        // band fires at t = 68 (s = 2382: (2382 − 15) / 40 = 59.2 s). Re-armed beyond
        // max_speed's reach (60 s × 30 m/s = 1800 m, + 360 m reset) it would fire again on
        // every fix down to s = 2175 (six in all); beyond the closing speed's (2400 m, + 480 m)
        // it is not re-armed on this approach.
        var p = T.profile(events: [.enter, .exit], dwell: nil)
        p.fences[0].approach = ApproachSettings(bandsMeters: [], etaBands: [.seconds(60)])
        var engine = TransitionEngine(profile: p)
        let events = T.run(&engine, Self.track(from: 0, to: 125, step: 1) { 5202 - 40 * Double($0) })
        let eta = events.compactMap(\.approach).filter { $0.bandETA == .seconds(60) }
        #expect(eta.count == 1, "\(T.summary(events))")
        // Its lower bound is no later than the ETA itself (max_speed is no bound on this device).
        let first = try #require(eta.first)
        #expect(try #require(first.etaLowerBound) <= (try #require(first.eta)))
    }

    @Test func aCoarseFixBesideGNSSFakesNoApproach() {
        // Standing 800 m from the boundary (GNSS fixes every 10 s, all alike), and one coarse
        // fix of 3 km accuracy placed 3.4 km out: no approach. Without it, none either.
        var engine = TransitionEngine(profile: Self.profile(bands: [1000]))
        var fixes = Self.track(from: 0, to: 60, step: 10) { _ in 900 }
        fixes.insert(T.fix(25, 3500, accuracy: 3000, source: .coarse), at: 3)
        fixes += Self.track(from: 70, to: 200, step: 10) { _ in 900 }
        #expect(Self.approaches(T.run(&engine, fixes)).isEmpty)
    }

    @Test func aShortDetourDoesNotReportABandAgainButALongOneDoes() {
        // In to s = 800 (band 1000 at t = 90), out to s = 1100 (100 m beyond the band, less
        // than its reset, 200 m), back in: no second band-1000 event; band 500 later.
        var engine = TransitionEngine(profile: Self.profile())
        var fixes = Self.track(from: 0, to: 110) { 2002 - 10 * Double($0) }           // s 1900 → 800
        fixes += Self.track(from: 115, to: 140) { 900 + 12 * Double($0 - 110) }        // s → 1160
        fixes += Self.track(from: 145, to: 260) { 1260 - 10 * Double($0 - 140) }       // s → 0
        let short = Self.approaches(T.run(&engine, fixes))
        #expect(short.map(\.band) == [1000, 500, 200])

        // The same, but out to s = 1500: certainly beyond 1000 + 200, so band 1000 is offered
        // again and reported on the way back in.
        engine = TransitionEngine(profile: Self.profile())
        fixes = Self.track(from: 0, to: 110) { 2002 - 10 * Double($0) }
        fixes += Self.track(from: 115, to: 180) { 900 + 10 * Double($0 - 110) }        // s → 1500
        fixes += Self.track(from: 185, to: 340) { 1603 - 10 * Double($0 - 180) }
        let long = Self.approaches(T.run(&engine, fixes))
        #expect(long.map(\.band) == [1000, 1000, 500, 200])
    }

    @Test func aStopAtAJunctionDoesNotFlipTheApproach() throws {
        // Inbound, a 2-minute stop at s = 700 with ±4 m of scatter, then on: each band once,
        // every one reported moving towards.
        var engine = TransitionEngine(profile: Self.profile())
        var fixes = Self.track(from: 0, to: 120) { 2002 - 10 * Double($0) }            // s → 700
        fixes += Self.track(from: 121, to: 240, step: 1) { 800 + ($0 % 2 == 0 ? 4 : -4) }
        fixes += Self.track(from: 245, to: 400) { 803 - 10 * Double($0 - 240) }
        let events = T.run(&engine, fixes)
        let approaches = Self.approaches(events)
        #expect(approaches.map(\.band) == [1000, 500, 200])
        #expect(approaches.map(\.t) == [95, 265, 295])
        #expect(events.filter { $0.kind == .approach }.allSatisfy { $0.approach?.direction == .towards })
    }

    @Test func bandsCrossedBetweenTwoWakesAreOneEventAtTheActualDistance() throws {
        // Fixes at s = 1500 and 1400 (beyond every band, within twice the reach: sampled),
        // then s = 400 after 90 s: bands 1000 and 500 were both crossed, reported as one
        // event for band 500 at s = 400; band 200 at s = 100.
        var engine = TransitionEngine(profile: Self.profile())
        let events = T.run(&engine, [T.fix(0, 1600), T.fix(10, 1500), T.fix(100, 500), T.fix(130, 200)])
        let approaches = Self.approaches(events)
        #expect(approaches.map(\.t) == [100, 130])
        #expect(approaches.map(\.band) == [500, 200])
        #expect(abs(approaches[0].s - 400) < 0.01)
    }

    @Test func standingStillNearAFenceOrLeavingItReportsNoApproach() {
        var engine = TransitionEngine(profile: Self.profile())
        // Standing 150 m out with ±6 m of scatter for 10 minutes: stationary, no approach.
        var fixes = Self.track(from: 0, to: 600, step: 1) { 250 + Double(($0 * 7) % 13) - 6 }
        var events = T.run(&engine, fixes)
        #expect(events.isEmpty)
        // Walking in at 8 m/s: band 200 (the one it stands in) once it moves towards; enter at
        // the first fix with s <= −15 (t = 625, d = 50).
        fixes = Self.track(from: 605, to: 630) { 250 - 8 * Double($0 - 600) }
        // Out again at 4 m/s (first certainly-outside fix, s >= 15, at t = 660) to s = 190,
        // then back towards it at 1.5 m/s: inside ended the approach, and band 200 is offered
        // again only once the device is certainly beyond 200 + 100 m.
        fixes += Self.track(from: 635, to: 700) { 10 + 4 * Double($0 - 630) }
        fixes += Self.track(from: 705, to: 760) { 290 - 1.5 * Double($0 - 700) }
        events = T.run(&engine, fixes)
        #expect(Self.approaches(events).map(\.band) == [200])
        #expect(T.summary(events).filter { !$0.hasPrefix("approach") } == ["enter@625", "exit@660"])
    }

    @Test func approachStateSurvivesASnapshot() {
        var engine = TransitionEngine(profile: Self.profile())
        let fixes = Self.track(from: 0, to: 200) { 2002 - 10 * Double($0) }
        let uninterrupted = T.summary(T.run(&engine, fixes))
        var first = TransitionEngine(profile: Self.profile())
        var events = T.run(&first, Array(fixes.prefix(25)))
        var second = TransitionEngine(profile: Self.profile(), snapshot: first.snapshot)
        events += T.run(&second, Array(fixes.dropFirst(25)))
        #expect(T.summary(events) == uninterrupted)
        #expect(!first.snapshot.approaches.isEmpty)
    }

    @Test func theDirectionRuleOnItsOwn() {
        func samples(_ pairs: [(Int64, Double)]) -> [ApproachSample] {
            pairs.map { ApproachSample(time: T.time($0.0), signedDistanceMeters: $0.1) }
        }
        // 12 m closed in 20 s: 0.6 m/s, but under the 15 m tolerance.
        #expect(ApproachEstimate.of(samples([(0, 100), (10, 94), (20, 88)]), toleranceMeters: 15, minSpeed: 0.5).direction == .stationary)
        #expect(ApproachEstimate.of(samples([(0, 100), (10, 90), (20, 80)]), toleranceMeters: 15, minSpeed: 0.5).direction == .towards)
        #expect(ApproachEstimate.of(samples([(0, 80), (10, 90), (20, 100)]), toleranceMeters: 15, minSpeed: 0.5).direction == .away)
        // 20 m in 100 s is 0.2 m/s: under the speed floor.
        #expect(ApproachEstimate.of(samples([(0, 100), (100, 80)]), toleranceMeters: 15, minSpeed: 0.5).direction == .stationary)
        #expect(ApproachEstimate.of(samples([(0, 100)]), toleranceMeters: 15, minSpeed: 0.5).direction == .stationary)
    }

    // MARK: - Confirmation by time

    @Test func aChangeIsConfirmedWhenBothTheFixesAndTheTimeHold() throws {
        var p = T.profile(events: [.enter, .exit], dwell: nil)
        p.transitions.confirmTime = .seconds(30)
        var engine = TransitionEngine(profile: p)
        // Three certain-inside fixes within 10 s are not enough; an outside fix at 25 resets
        // the run; the new run starting at 30 is confirmed by the fix at 60.
        let events = T.run(&engine, [T.fix(1, 300), T.fix(2, 300), T.fix(10, 0), T.fix(11, 0), T.fix(20, 0),
                                     T.fix(25, 300), T.fix(30, 0), T.fix(45, 0), T.fix(59, 0), T.fix(60, 0)])
        #expect(T.summary(events) == ["enter@30"])
        #expect(events[0].rule.text.hasSuffix(", held 30.0 s >= 30.0 s"))
        // Time alone (`confirm: {time: 30s}`): the count is 1, so the fix 30 s after the first confirms.
        p.transitions.confirm = 1
        engine = TransitionEngine(profile: p)
        let alone = T.run(&engine, [T.fix(1, 300), T.fix(10, 0), T.fix(39, 0), T.fix(40, 0)])
        #expect(T.summary(alone) == ["enter@10"])
    }

    // MARK: - Repeated dwell

    static func dwellProfile() -> Profile {
        var p = T.profile(events: [.enter, .exit, .dwell], dwell: .seconds(60))
        p.fences[0].dwellEvery = .seconds(120)
        return p
    }

    @Test func theEarliestPendingChangeIsTheSameInEveryRun() throws {
        // Two circles about one centre (100 m and 200 m); outside both, then at the centre:
        // each starts an enter at the same fix. The one the power policy is told of is the
        // profile's first fence's, whatever the order of the engine's dictionary.
        var p = T.profile(confirm: 4)
        p.fences.append(Fence(id: "yard", shape: .circle(center: T.center, radiusMeters: 200), events: [.enter, .exit]))
        var engine = TransitionEngine(profile: p)
        _ = T.run(&engine, [T.fix(0, 600), T.fix(1, 600), T.fix(2, 600), T.fix(3, 600), T.fix(4, 600), T.fix(10, 0)])
        let pending = try #require(engine.earliestPending)
        #expect(abs(pending.firstSignedDistanceMeters + 100) < 0.5, "\(pending)")
    }

    @Test func aFixThatDecidesNothingDoesNotPlaceADwell() throws {
        // In from 0 s (dwell 60 s); the fix that lands on 60 s is 3 km away with 2 km accuracy:
        // it decides nothing, so the dwell comes in the deadline's form, where the stay began.
        var engine = TransitionEngine(profile: T.profile())
        let events = T.run(&engine, [T.fix(0, 0), T.fix(1, 0), T.fix(30, 0), T.fix(60, 3000, accuracy: 2000)])
        let dwell = try #require(events.first { $0.kind == .dwell })
        #expect(dwell.time == T.time(60))
        #expect(dwell.accuracyMeters == 5 && dwell.coordinate == T.at(0))
    }

    @Test func theStartUpOutsideCountsFixesOnlyAlsoForAFenceTouchedAtStartUp() {
        // confirm {fixes: 2, time: 60 s}. The first fix is 5 m outside (uncertain: touched);
        // 30 s of certain outside fixes confirm `outside` by count, so the entry after them is
        // an enter, and its exit one too; not a silent `unknown → inside` and a lone exit.
        var p = T.profile(events: [.enter, .exit], dwell: nil)
        p.transitions.confirmTime = .seconds(60)
        var engine = TransitionEngine(profile: p)
        var fixes = [T.fix(0, 105)] + Self.track(from: 10, to: 30, step: 10) { _ in 300 }
        fixes += Self.track(from: 40, to: 160, step: 10) { _ in 0 }
        fixes += Self.track(from: 170, to: 300, step: 10) { _ in 300 }
        #expect(T.summary(T.run(&engine, fixes)) == ["enter@40", "exit@170"])
    }

    @Test func aRepeatedDwellFiresAfterTheDwellAndThenEveryPeriod() {
        // Enter at 10 (confirmed at 11): dwells due at 70, 190 and 310, by deadline.
        var engine = TransitionEngine(profile: Self.dwellProfile())
        let events = T.run(&engine, [T.fix(1, 300), T.fix(2, 300), T.fix(10, 0), T.fix(11, 0), T.fix(400, 0), T.fix(401, 300), T.fix(402, 300)])
        #expect(T.summary(events) == ["enter@10", "dwell@70", "dwell@190", "dwell@310", "exit@401"])
        #expect(Set(events.map(\.id)).count == events.count)
        #expect(events[2].rule.text.contains("(dwell 2, every 120.0 s)"))
        // Without deadlines the fix at 400 fires the three due: the older two at their own
        // instants, the last one by the fix.
        engine = TransitionEngine(profile: Self.dwellProfile())
        let late = T.run(&engine, [T.fix(1, 300), T.fix(2, 300), T.fix(10, 0), T.fix(11, 0), T.fix(400, 0)], deadlines: false)
        #expect(T.summary(late) == ["enter@10", "dwell@70", "dwell@190", "dwell@400"])
    }

    @Test func aRepeatedDwellContinuesFromASnapshotWithoutDuplicateOrGap() {
        let fixes = [T.fix(1, 300), T.fix(2, 300), T.fix(10, 0), T.fix(11, 0), T.fix(200, 0), T.fix(500, 0)]
        var engine = TransitionEngine(profile: Self.dwellProfile())
        let uninterrupted = T.run(&engine, fixes)
        for cut in 1..<fixes.count {
            var first = TransitionEngine(profile: Self.dwellProfile())
            var events = T.run(&first, Array(fixes.prefix(cut)))
            var second = TransitionEngine(profile: Self.dwellProfile(), snapshot: first.snapshot)
            events += T.run(&second, Array(fixes.dropFirst(cut)))
            #expect(events.map(\.id) == uninterrupted.map(\.id), "cut after \(cut) fixes")
        }
        #expect(T.summary(uninterrupted) == ["enter@10", "dwell@70", "dwell@190", "dwell@310", "dwell@430"])
    }
}
