import GeomonCore
import GeomonFormat
import Testing

/// Scripted fixes in, events out. Fence "home": a 100 m circle at 47°N 8°E; fixes are placed
/// on its meridian, `d` metres north of the centre (by the same local WGS84 metric the fence
/// index measures with), so the signed distance is d − 100 to well under a millimetre.
struct TransitionEngineTests {
    static let center = Coordinate(latitude: 47, longitude: 8)
    static let metersPerDegree = 6_371_008.8 * Double.pi / 180

    static func at(_ d: Double) -> Coordinate {
        Geodesy.localDestination(from: center, bearingDegrees: 0, distanceMeters: d)
    }

    static func fix(_ t: Int64, _ d: Double, accuracy: Double = 5, source: FixSource = .gnss) -> Fix {
        Fix(time: UTCTime(millisecondsSince1970: t * 1000), coordinate: at(d), horizontalAccuracyMeters: accuracy, source: source)
    }

    static func time(_ t: Int64) -> UTCTime { UTCTime(millisecondsSince1970: t * 1000) }

    static func profile(
        confirm: Int = 2, initial: InitialReport = .silent, events: Set<EventKind> = [.enter, .exit, .dwell],
        dwell: Duration? = .seconds(60), mode: MonitoringMode = .regions
    ) -> Profile {
        var p = Profile(name: "home-profile", mode: mode)
        p.transitions.confirm = confirm
        p.transitions.initial = initial
        p.transitions.hysteresisMeters = 10
        p.sources.gnss = GNSSSourceSettings()
        p.fences = [Fence(id: "home", name: "Home", shape: .circle(center: center, radiusMeters: 100), events: events, dwell: dwell)]
        return p
    }

    /// Runs fixes (and deadlines before each fix, like replay) and returns (kind, time s) pairs.
    static func run(_ engine: inout TransitionEngine, _ fixes: [Fix], deadlines: Bool = true) -> [GeoEvent] {
        var events: [GeoEvent] = []
        for fix in fixes {
            while deadlines, let d = engine.nextDeadline, d < fix.time {
                events += engine.deadlineReached(at: d)
            }
            events += engine.fixReceived(fix).events
        }
        return events
    }

    static func summary(_ events: [GeoEvent]) -> [String] {
        events.map { "\($0.kind.rawValue)@\($0.time.millisecondsSince1970 / 1000)" }
    }

    @Test func enterIsConfirmedByTwoCertainFixesAndCarriesTheFirst() {
        var engine = TransitionEngine(profile: Self.profile())
        let events = Self.run(&engine, [Self.fix(1, 300), Self.fix(2, 300), Self.fix(10, 0), Self.fix(11, 0)])
        #expect(Self.summary(events) == ["enter@10"])
        #expect(events[0].coordinate == Self.at(0))
        #expect(events[0].fenceID == "home" && events[0].fenceName == "Home")
        #expect(events[0].rule.text.hasPrefix("enter: outside -> inside, 2 consecutive certain-inside fixes"))
        #expect(engine.state(of: "home") == .inside)
    }

    @Test func certaintyBoundariesAreInclusive() {
        // a = 5, h = 10: certain inside iff s <= -15 (d <= 85), certain outside iff s >= 15 (d >= 115).
        var engine = TransitionEngine(profile: Self.profile())
        #expect(Self.run(&engine, [Self.fix(1, 115.01), Self.fix(2, 115.01)]).isEmpty)
        #expect(engine.state(of: "home") == .outside)
        #expect(Self.run(&engine, [Self.fix(3, 85.1), Self.fix(4, 85.1)]).isEmpty)
        #expect(Self.summary(Self.run(&engine, [Self.fix(5, 84.99), Self.fix(6, 84.99)])) == ["enter@5"])
        var other = TransitionEngine(profile: Self.profile())
        _ = Self.run(&other, [Self.fix(1, 114.9), Self.fix(2, 114.9)])
        #expect(other.state(of: "home") == .unknown)
    }

    @Test func confirmCountsConsecutiveCertainFixesAndAnOppositeFixResets() {
        var engine = TransitionEngine(profile: Self.profile(confirm: 3))
        let fixes = [Self.fix(1, 300), Self.fix(2, 300), Self.fix(3, 300),
                     Self.fix(10, 0), Self.fix(11, 300), Self.fix(12, 0), Self.fix(13, 0), Self.fix(14, 0)]
        #expect(Self.summary(Self.run(&engine, fixes)) == ["enter@12"])
    }

    @Test func uncertainFixesNeitherChangeNorResetAPendingChange() {
        var engine = TransitionEngine(profile: Self.profile())
        let fixes = [Self.fix(1, 300), Self.fix(2, 300), Self.fix(10, 0), Self.fix(11, 100), Self.fix(12, 95), Self.fix(13, 0)]
        #expect(Self.summary(Self.run(&engine, fixes)) == ["enter@10"])
    }

    @Test func aReceiverParkedOnTheBoundaryGivesNoEvents() {
        var engine = TransitionEngine(profile: Self.profile(initial: .report))
        var seed: UInt64 = 42
        var fixes: [Fix] = []
        for t in 1...2000 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            let jitter = Double(seed >> 33) / Double(1 << 31) * 28 - 14 // ±14 m around the boundary
            fixes.append(Self.fix(Int64(t), 100 + jitter, accuracy: 5))
        }
        #expect(Self.run(&engine, fixes).isEmpty)
        #expect(engine.state(of: "home") == .unknown)
    }

    @Test func aBadFixFarAwayGivesNoExit() {
        var engine = TransitionEngine(profile: Self.profile())
        _ = Self.run(&engine, [Self.fix(1, 300), Self.fix(2, 300), Self.fix(3, 0), Self.fix(4, 0)])
        #expect(engine.state(of: "home") == .inside)
        // GNSS fixes 3 km away with 2 km accuracy: worse than min_accuracy (50 m), never used.
        let bad = (5...9).map { Self.fix(Int64($0), 3000, accuracy: 2000) }
        // A coarse 2 km fix 1 km away is uncertain (s = 900 < a + h = 2010).
        let coarse = Self.fix(10, 1000, accuracy: 2000, source: .coarse)
        #expect(Self.run(&engine, bad + [coarse, Self.fix(11, 0)]).isEmpty)
        #expect(engine.state(of: "home") == .inside)
    }

    @Test func aTunnelGapChangesNothingAndTheExitAfterItCarriesItsFirstFix() {
        var engine = TransitionEngine(profile: Self.profile(events: [.enter, .exit], dwell: nil))
        _ = Self.run(&engine, [Self.fix(1, 0), Self.fix(2, 0)])
        #expect(Self.run(&engine, [Self.fix(600, 0), Self.fix(601, 0)]).isEmpty)
        let events = Self.run(&engine, [Self.fix(1200, 800), Self.fix(1201, 900)])
        #expect(Self.summary(events) == ["exit@1200"])
        #expect(events[0].coordinate == Self.at(800))
    }

    @Test func fixesWorseThanMinAccuracyNeverChangeState() {
        var engine = TransitionEngine(profile: Self.profile())
        _ = Self.run(&engine, [Self.fix(1, 300), Self.fix(2, 300)])
        #expect(Self.run(&engine, (3...20).map { Self.fix(Int64($0), 0, accuracy: 50.5) }).isEmpty)
        #expect(engine.state(of: "home") == .outside)
        #expect(Self.summary(Self.run(&engine, [Self.fix(21, 0, accuracy: 50), Self.fix(22, 0, accuracy: 50)])) == ["enter@21"])
    }

    @Test func dwellFiresOnTheFirstFixPastIt() {
        var engine = TransitionEngine(profile: Self.profile())
        let fixes = [Self.fix(1, 300), Self.fix(2, 300)] + stride(from: 10, through: 100, by: 7).map { Self.fix(Int64($0), 0) }
        let events = Self.run(&engine, fixes, deadlines: false)
        // enter at 10, dwell due at 70, first fix past it at 73.
        #expect(Self.summary(events) == ["enter@10", "dwell@73"])
        #expect(events[1].rule.text.contains("fired by the first fix past it"))
    }

    @Test func dwellFiresAtItsDeadlineWhenNoFixComes() {
        var engine = TransitionEngine(profile: Self.profile())
        _ = Self.run(&engine, [Self.fix(1, 300), Self.fix(2, 300), Self.fix(10, 0), Self.fix(11, 0)])
        #expect(engine.nextDeadline == Self.time(70))
        #expect(engine.deadlineReached(at: Self.time(69)).isEmpty)
        let events = engine.deadlineReached(at: Self.time(70))
        #expect(Self.summary(events) == ["dwell@70"])
        #expect(events[0].coordinate == Self.at(0))
        #expect(engine.nextDeadline == nil)
        // Once per stay.
        #expect(Self.run(&engine, [Self.fix(200, 0), Self.fix(300, 0)]).isEmpty)
    }

    @Test func anExitPendingSinceBeforeTheDwellInstantHoldsTheDwell() {
        var engine = TransitionEngine(profile: Self.profile())
        _ = Self.run(&engine, [Self.fix(1, 300), Self.fix(2, 300), Self.fix(10, 0), Self.fix(11, 0), Self.fix(65, 300)])
        #expect(engine.nextDeadline == nil)
        var left = engine
        #expect(Self.summary(Self.run(&left, [Self.fix(75, 300)])) == ["exit@65"])
        var stayed = engine
        #expect(Self.summary(Self.run(&stayed, [Self.fix(80, 0)])) == ["dwell@80"])
    }

    @Test func aRestartMidDwellContinuesTheDwell() {
        var engine = TransitionEngine(profile: Self.profile())
        _ = Self.run(&engine, [Self.fix(1, 300), Self.fix(2, 300), Self.fix(10, 0), Self.fix(11, 0), Self.fix(40, 0)])
        let snapshot = engine.snapshot
        var restarted = TransitionEngine(profile: Self.profile(), snapshot: snapshot)
        #expect(restarted.snapshot == snapshot)
        #expect(restarted.nextDeadline == Self.time(70))
        #expect(Self.summary(restarted.deadlineReached(at: Self.time(70))) == ["dwell@70"])
    }

    @Test func splittingAtAnyFixThroughASnapshotGivesTheSameEvents() {
        // A triangle wave between 400 m out and the centre, with noise, bad fixes and a gap.
        var fixes: [Fix] = []
        var seed: UInt64 = 7
        for t in 1...400 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            let d = Double(abs(t % 100 - 50)) * 8 + Double(seed >> 59) - 16
            let accuracy = t % 37 == 0 ? 500 : 4 + Double(seed >> 62)
            fixes.append(Self.fix(Int64(t * 3 + (t > 120 ? 400 : 0)), d, accuracy: accuracy))
        }
        var whole = TransitionEngine(profile: Self.profile(dwell: .seconds(20)))
        let expected = Self.summary(Self.run(&whole, fixes))
        #expect(!expected.isEmpty)
        for split in stride(from: 0, through: fixes.count, by: 13) {
            var first = TransitionEngine(profile: Self.profile(dwell: .seconds(20)))
            var events = Self.run(&first, Array(fixes[..<split]))
            var second = TransitionEngine(profile: Self.profile(dwell: .seconds(20)), snapshot: first.snapshot)
            events += Self.run(&second, Array(fixes[split...]))
            #expect(Self.summary(events) == expected, "split at \(split)")
        }
    }

    @Test func fixesNotNewerThanTheLastAreIgnored() {
        var engine = TransitionEngine(profile: Self.profile())
        #expect(engine.fixReceived(Self.fix(10, 300)).accepted)
        #expect(!engine.fixReceived(Self.fix(10, 0)).accepted)
        #expect(!engine.fixReceived(Self.fix(5, 0)).accepted)
        #expect(engine.fixReceived(Self.fix(11, 300)).accepted)
        #expect(engine.lastFixTime == Self.time(11))
        #expect(engine.state(of: "home") == .outside)
    }

    @Test(arguments: [(InitialReport.silent, [String]()), (.report, ["enter@1"])])
    func theInitialInsideStateIsSilentOrReported(initial: InitialReport, expected: [String]) {
        var engine = TransitionEngine(profile: Self.profile(initial: initial, dwell: nil))
        let events = Self.run(&engine, [Self.fix(1, 0), Self.fix(2, 0)])
        #expect(Self.summary(events) == expected)
        if let event = events.first { #expect(event.rule.text.hasPrefix("initial inside (initial: report)")) }
        #expect(engine.state(of: "home") == .inside)
        #expect(Self.summary(Self.run(&engine, [Self.fix(3, 300), Self.fix(4, 300)])) == ["exit@3"])
    }

    @Test func onlyListedEventKindsAreEmitted() {
        var engine = TransitionEngine(profile: Self.profile(events: [.exit], dwell: nil))
        let events = Self.run(&engine, [Self.fix(1, 300), Self.fix(2, 300), Self.fix(3, 0), Self.fix(4, 0), Self.fix(5, 300), Self.fix(6, 300)])
        #expect(Self.summary(events) == ["exit@5"])
    }

    @Test func eventIDsAreStableFNV1aOverProfileFenceKindAndTime() {
        // Computed independently (scripts/replay_expected.py's fnv_id).
        #expect(EventID.make(profile: "home-profile", fenceID: "home", kind: .enter, time: UTCTime(millisecondsSince1970: 1_700_000_000_000)) == "b567418cdc70ccab")
        #expect(EventID.make(profile: "p", fenceID: "a", kind: .enter, time: Self.time(1))
                != EventID.make(profile: "p", fenceID: "a", kind: .exit, time: Self.time(1)))
    }

    @Test func locationEventsFollowDistanceAndMinInterval() {
        var p = Self.profile(mode: .significantChange)
        p.fences = []
        p.significantChange.distanceMeters = 500
        p.significantChange.minInterval = .seconds(300)
        var engine = TransitionEngine(profile: p)
        // 100 m per minute north: 500 m after 5 min; still for a while; then fast: 600 m/min.
        var fixes = (0...10).map { Self.fix(Int64($0 * 60), Double($0) * 100) }
        fixes += (11...20).map { Self.fix(Int64($0 * 60), 1000) }
        fixes += (21...26).map { Self.fix(Int64($0 * 60), 1000 + Double($0 - 20) * 600) }
        let events = Self.run(&engine, fixes)
        #expect(Self.summary(events) == ["location@0", "location@300", "location@600", "location@1260", "location@1560"])
        #expect(events.allSatisfy { $0.fenceID == nil })
    }

    @Test func manyFencesOnlyTheCrossedOnesFire() {
        // A 40 × 40 grid of 100 m circles 1 km apart; a path along one row crosses 10 of them.
        var p = Self.profile(dwell: nil)
        p.fences = []
        for row in 0..<40 {
            for col in 0..<40 {
                let c = Coordinate(latitude: 47 + Double(row) * 1000 / Self.metersPerDegree,
                                   longitude: 8 + Double(col) * 1000 / (Self.metersPerDegree * 0.6819983600624985))
                p.fences.append(Fence(id: "r\(row)c\(col)", shape: .circle(center: c, radiusMeters: 100)))
            }
        }
        var engine = TransitionEngine(profile: p)
        var fixes: [Fix] = []
        for step in 0...950 {  // 10 m steps east along row 20, from col 0 − 200 m to col 9 + 250 m
            let east = -200 + Double(step) * 10
            let c = Coordinate(latitude: 47 + 20_000 / Self.metersPerDegree,
                               longitude: 8 + east / (Self.metersPerDegree * 0.6819983600624985))
            fixes.append(Fix(time: Self.time(Int64(step)), coordinate: c, horizontalAccuracyMeters: 5))
        }
        let events = Self.run(&engine, fixes)
        #expect(events.filter { $0.kind == .enter }.map(\.fenceID) == (0...9).map { "r20c\($0)" })
        #expect(events.filter { $0.kind == .exit }.map(\.fenceID) == (0...9).map { "r20c\($0)" })
        #expect(engine.snapshot.records.count <= 2)
    }
}
