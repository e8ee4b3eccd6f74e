import GeomonCore
import Testing

/// The movement rules (docs/engine.md, "Movement"), on hand-made days whose figures are worked
/// out in the comments: a drive with a stop at lights and a parked end, a visit at a café with
/// a GNSS outage inside it, the motion source's word, and a restart in the middle of it all.
@Suite struct MovementTests {
    static let t0 = UTCTime(millisecondsSince1970: 1_700_000_000_000)
    static func at(_ s: Double) -> UTCTime { t0 + .milliseconds(Int64(s * 1000)) }
    static let origin = Coordinate(latitude: 47.0, longitude: 8.0)
    /// A point `m` metres north of the origin (geodesic: distances along it are exact).
    static func north(_ m: Double) -> Coordinate { Geodesy.destination(from: origin, bearingDegrees: 0, distanceMeters: m) }
    static func fix(_ s: Double, _ m: Double, speed: Double?, acc: Double = 5) -> Fix {
        Fix(time: at(s), coordinate: north(m), horizontalAccuracyMeters: acc, speedMetersPerSecond: speed)
    }

    static func settings(motion: Bool = true, trips: Bool = true, visits: Bool = false) -> MovementSettings {
        var s = MovementSettings()
        s.motionEvents = motion
        if trips { s.trips = TripSettings(stopAfter: .seconds(300), radiusMeters: 100) }
        if visits { s.visits = VisitSettings(radiusMeters: 100, minDuration: .seconds(300)) }
        return s
    }

    /// A drive, fixes every 10 s: standing at 0 m until 120 s; 12 m/s north from 130 s to
    /// 300 s (120 m per fix, 2160 m at 300 s); 90 s at lights (310–400 s); 12 m/s again from
    /// 410 s to 600 s (4560 m); parked there until 1200 s.
    static func drive() -> [Fix] {
        var fixes: [Fix] = []
        for t in stride(from: 0.0, through: 120, by: 10) { fixes.append(fix(t, 0, speed: 0)) }
        for t in stride(from: 130.0, through: 300, by: 10) { fixes.append(fix(t, (t - 120) * 12, speed: 12)) }
        for t in stride(from: 310.0, through: 400, by: 10) { fixes.append(fix(t, 2160, speed: 0)) }
        for t in stride(from: 410.0, through: 600, by: 10) { fixes.append(fix(t, 2160 + (t - 400) * 12, speed: 12)) }
        for t in stride(from: 610.0, through: 1200, by: 10) { fixes.append(fix(t, 4560, speed: 0)) }
        return fixes
    }

    static func run(_ tracker: inout MovementTracker, _ fixes: [Fix]) -> [GeoEvent] {
        fixes.flatMap { tracker.fixTaken($0) }
    }

    static func summary(_ events: [GeoEvent]) -> [String] {
        events.map { "\($0.kind.rawValue)@\(Int(($0.time - t0).secondsValue))" }
    }

    @Test func aDriveIsOneTripThroughTheLightsEndedWhereItParkedWithItsFigures() throws {
        var tracker = MovementTracker(settings: Self.settings(), profileName: "p")
        let events = Self.run(&tracker, Self.drive())
        // Motion, confirmed after 30 s and dated at the first fix: still from 0 s, moving from
        // 130 s (confirmed at 160 s), still at the lights from 310 s, moving from 410 s, parked
        // from 610 s. The trip starts on the second fix beyond 100 m of where it stood (140 s,
        // before the motion state is confirmed), dated at 130 s, the first fix that showed
        // movement; it ends 300 s into the stay that began at the 600 s fix (fired at 900 s),
        // dated 600 s.
        #expect(Self.summary(events) == ["still@0", "trip_start@130", "moving@130", "still@310", "moving@410", "still@610", "trip_end@600"])
        let end = try #require(events.last?.figures)
        // 4560 m − 120 m (the departure fix's position), in straight 120 m segments.
        #expect(abs(try #require(end.distanceMeters) - 4440) < 0.01)
        #expect(end.durationSeconds == 470)
        // Segments ending at a fix that reports 12 m/s: 140–300 s (17) and 410–600 s (20).
        #expect(end.movingSeconds == 370)
        #expect(end.maxSpeedMetersPerSecond == 12)
        #expect(abs(try #require(end.meanSpeedMetersPerSecond) - 4440.0 / 470) < 1e-9)
        #expect(end.since == Self.at(130))
        #expect(end.start == Self.north(120))
        #expect(events.last?.coordinate == Self.north(4560))
        #expect(events[2].figures?.source == "gnss")
        // The odometer counts every segment longer than the accuracies: the whole drive.
        #expect(abs(tracker.state.odometerMeters - 4560) < 0.01)
        #expect(tracker.state.trip == nil)
    }

    @Test func stopsShorterThanStopAfterDoNotSplitATripAndJitterAddsNoDistance() {
        // The same drive with 4 m of jitter at every stand (less than the 5 m accuracy).
        let jittered = Self.drive().enumerated().map { i, f -> Fix in
            guard f.speedMetersPerSecond == 0 else { return f }
            var f = f
            f.coordinate = Geodesy.destination(from: f.coordinate, bearingDegrees: Double(i % 4) * 90, distanceMeters: 4)
            return f
        }
        var tracker = MovementTracker(settings: Self.settings(motion: false), profileName: "p")
        let events = Self.run(&tracker, jittered)
        #expect(Self.summary(events) == ["trip_start@130", "trip_end@600"])
        let distance = events.last?.figures?.distanceMeters ?? 0
        // Within the jitter of the two ends, never the jitter of 80 fixes at rest.
        #expect(abs(distance - 4440) < 8.1, "\(distance)")
        #expect(abs(tracker.state.odometerMeters - 4560) < 8.1 * 2)
    }

    @Test func aWalkSlowerThanMovingSpeedIsATripAndOneJumpIsNot() throws {
        // Standing at 0 m until 300 s (a fix every 10 s), one fix 150 m away at 310 s (a jump:
        // back at 0 m at 320 s), then a hike north at 0.7 m/s from 600 s, below `moving_speed`,
        // to 840 m at 1800 s, and standing there until 2400 s.
        var fixes: [Fix] = []
        for t in stride(from: 0.0, through: 2400, by: 10) {
            let m: Double = t == 310 ? 150 : t <= 600 ? 0 : min(0.7 * (t - 600), 840)
            fixes.append(Self.fix(t, m, speed: t > 600 && t <= 1800 ? 0.7 : 0))
        }
        var tracker = MovementTracker(settings: Self.settings(motion: false), profileName: "p")
        let events = Self.run(&tracker, fixes)
        // The hike passes 100 m at 750 s (105 m; 98 m at 740 s) and is beyond it again at
        // 760 s: the trip starts there, dated at 740 s, the last fix within 100 m (no fix
        // reported 1 m/s). It ends where the stay that lasted 300 s began: at the 1660 s fix
        // (742 m), within 100 m of which the walk's last 98 m and the stand lie (a sliding
        // staypoint, as trackintel's): 742 m − 98 m in 920 s.
        #expect(Self.summary(events) == ["trip_start@740", "trip_end@1660"])
        let end = try #require(events.last?.figures)
        #expect(abs(try #require(end.distanceMeters) - 644) < 0.01)
        #expect(end.durationSeconds == 920)
        #expect(end.movingSeconds == 0)
    }

    /// The drive parks at 4560 m from 610 s; at 890 s, 10 s before its stop reaches
    /// `stop_after` (300 s from the 600 s fix), the device walks off north at 1.5 m/s.
    @Test func aWalkOffAsTheStopEndsTheTripDepartsTheNextOne() throws {
        var fixes = Self.drive().filter { $0.time < Self.at(890) }
        for t in stride(from: 890.0, through: 1100, by: 10) { fixes.append(Self.fix(t, 4560 + 1.5 * (t - 880), speed: 1.5)) }
        var tracker = MovementTracker(settings: Self.settings(motion: false), profileName: "p")
        let events = Self.run(&tracker, fixes)
        // The stop is confirmed at 900 s by a fix within 100 m (30 m): the drive ends, dated
        // 600 s. The walk passes 100 m from where the device stood at 950 s (105 m) and is a
        // trip (moving since 890 s, confirmed at 920 s), dated at its first fix, 890 s.
        #expect(Self.summary(events) == ["trip_start@130", "trip_end@600", "trip_start@890"])
    }

    /// A walk at 0.8 m/s reported, below `moving_speed` (fixes every 10 s), from a stand at 0 m
    /// until 300 s; one fix, at 440 s, reports 1.2 m/s. Walking until 700 s (320 m), then
    /// standing there.
    @Test func aTripIsDatedNoLaterThanTheFirstFixBeyondTheStopRadius() throws {
        var fixes: [Fix] = []
        for t in stride(from: 0.0, through: 1100, by: 10) {
            let m = min(max(0, 0.8 * (t - 300)), 320)
            fixes.append(Self.fix(t, m, speed: t > 300 && t <= 700 ? (t == 440 ? 1.2 : 0.8) : 0))
        }
        var tracker = MovementTracker(settings: Self.settings(motion: false), profileName: "p")
        let events = Self.run(&tracker, fixes)
        // 100 m from where it stood is passed at 425 s: 420 s (96 m) is the last fix within,
        // 430 s (104 m) the first beyond, 440 s the second and the trip's start. The only fix
        // showing movement (440 s) came after the first one beyond: the trip is dated 420 s.
        let start = try #require(events.first { $0.kind == .tripStart })
        #expect(start.time == Self.at(420), "\(Self.summary(events))")
    }

    /// Stands that a departure must not outlast (fixes every 10 s, 5 m accurate).
    enum Stand: CaseIterable {
        /// Standing at 0 m for an hour, a speed spike of 1.2 m/s every 30 s from 100 s on: each
        /// spike is followed by still fixes where it was (no progress). It walks off at 3610 s.
        case spikes
        /// 1.3 m/s reported at 110 s (2 m), still at 120 s (20 m on), then the receiver asleep
        /// until 3600 s, when the device drives off: the stand may have lasted the gap.
        case gap
        /// A motion source says `still` at 130 s; a fix at 160 s reports 1.3 m/s, one at 760 s
        /// still; the source says `moving` at 1190 s and the device drives off at 1200 s.
        case motionSource
    }

    @Test(arguments: Stand.allCases)
    func aDepartureDoesNotOutlastAStand(_ stand: Stand) throws {
        var tracker = MovementTracker(settings: Self.settings(motion: false), profileName: "p")
        var events: [GeoEvent] = []
        let leave: Double
        switch stand {
        case .spikes:
            leave = 3610
            for t in stride(from: 0.0, to: leave, by: 10) {
                events += tracker.fixTaken(Self.fix(t, 0, speed: t >= 100 && Int(t) % 30 == 10 ? 1.2 : 0.2))
            }
        case .gap:
            leave = 3600
            for t in stride(from: 0.0, through: 100, by: 10) { events += tracker.fixTaken(Self.fix(t, 0, speed: 0)) }
            events += tracker.fixTaken(Self.fix(110, 2, speed: 1.3))
            events += tracker.fixTaken(Self.fix(120, 20, speed: 0))
        case .motionSource:
            leave = 1200
            for t in stride(from: 0.0, through: 120, by: 10) { events += tracker.fixTaken(Self.fix(t, 0, speed: 0)) }
            events += tracker.motionReported(.still, now: Self.at(130))
            events += tracker.fixTaken(Self.fix(160, 0, speed: 1.3))
            events += tracker.fixTaken(Self.fix(760, 0, speed: 0))
            events += tracker.motionReported(.moving, now: Self.at(1190))
        }
        // Off at 10 m/s (from 20 m in the gap case) for 300 s, then standing there for 400 s.
        let from: Double = stand == .gap ? 20 : 0
        for t in stride(from: leave, through: leave + 700, by: 10) {
            let moving = t < leave + 300
            events += tracker.fixTaken(Self.fix(t, from + 10 * min(t - leave, 300), speed: moving ? 10 : 0))
        }
        // Each trip departs with the drive, not at a fix of the stand before it.
        let start = try #require(events.first { $0.kind == .tripStart })
        #expect(start.time == Self.at(leave), "\(Self.summary(events))")
        let end = try #require(events.first { $0.kind == .tripEnd }?.figures)
        #expect(try #require(end.durationSeconds) < 400)
    }

    /// A walk to a café (at 0 m) and a stay there, fixes every 10 s: from 460 m south at
    /// 2.3 m/s until 200 s, standing at the café until 1000 s, then north at 2.2 m/s.
    static func cafe(outage: ClosedRange<Double>? = nil) -> [Fix] {
        var fixes: [Fix] = []
        for t in stride(from: 0.0, through: 1200, by: 10) {
            if let outage, outage.contains(t) { continue }
            let m = t <= 200 ? -460 + 2.3 * t : t <= 1000 ? 0 : 2.2 * (t - 1000)
            fixes.append(fix(t, m, speed: t <= 200 ? 2.3 : t <= 1000 ? 0 : 2.2))
        }
        return fixes
    }

    /// A fix for `tracker`, an arrival named after the café as the machine names it (a fence
    /// the device is inside).
    static func atCafe(_ tracker: inout MovementTracker, _ fix: Fix) -> [GeoEvent] {
        var events = tracker.fixTaken(fix)
        for k in events.indices where events[k].kind == .arrival {
            tracker.nameVisit(("cafe", "Café"))
            events[k] = tracker.named(events[k], ("cafe", "Café"))
        }
        return events
    }

    @Test(arguments: [nil, 300.0...890.0])
    func aVisitArrivesDatedAtItsFirstFixAndDepartsAtTheFirstFixBeyondTheRadius(_ outage: ClosedRange<Double>?) throws {
        // The sliding window restarts at −345 m (50 s), −230 m (100 s), −115 m (150 s) and at
        // the café (200 s). 300 s later the arrival is due: at the 500 s fix, or with no fix
        // between 300 s and 890 s, at the 900 s fix — the outage inside the visit keeps it.
        // The first fix beyond 100 m is 1050 s (110 m north): the departure, 850 s after 200 s.
        var tracker = MovementTracker(settings: Self.settings(motion: false, trips: false, visits: true), profileName: "p")
        var fired: [(String, Double)] = []
        for f in Self.cafe(outage: outage) {
            for e in Self.atCafe(&tracker, f) { fired.append(("\(e.kind.rawValue)@\(Int((e.time - Self.t0).secondsValue))", (f.time - Self.t0).secondsValue)) }
        }
        #expect(fired.map(\.0) == ["arrival@200", "departure@1050"])
        #expect(fired.first?.1 == (outage == nil ? 500 : 900))
        let events = Self.run(&tracker, [])
        #expect(events.isEmpty)
        var again = MovementTracker(settings: Self.settings(motion: false, trips: false, visits: true), profileName: "p")
        let all = Self.cafe(outage: outage).flatMap { Self.atCafe(&again, $0) }
        let arrival = try #require(all.first)
        #expect(arrival.fenceID == "cafe" && arrival.fenceName == "Café")
        #expect(arrival.coordinate == Self.north(0))
        #expect(arrival.figures?.radiusMeters == 100)
        let departure = try #require(all.last)
        #expect(departure.fenceID == "cafe")
        #expect(departure.figures?.durationSeconds == 850)
        #expect(departure.figures?.since == Self.at(200))
        #expect(departure.coordinate == Self.north(110))
    }

    @Test func theMotionSourceDecidesWhileItSpeaksAndEndsATripWithoutAFix() throws {
        var tracker = MovementTracker(settings: Self.settings(), profileName: "p")
        // Driving: the trip is under way at 160 s.
        _ = Self.run(&tracker, Self.drive().filter { $0.time <= Self.at(300) })
        #expect(tracker.state.trip != nil)
        // The source says still at 305 s and the receiver sleeps: no fix comes. The trip ends
        // `stop_after` later, dated when the source said so, at the last fix's position.
        let still = tracker.motionReported(.still, now: Self.at(305))
        #expect(Self.summary(still) == ["still@305"])
        #expect(still.first?.figures?.source == "motion")
        #expect(tracker.nextDeadline == Self.at(605))
        // GNSS evidence does not overrule the source while it speaks.
        #expect(tracker.fixTaken(Self.fix(400, 2160, speed: 3)).isEmpty)
        let ended = tracker.deadlineReached(now: Self.at(605))
        #expect(Self.summary(ended) == ["trip_end@305"])
        #expect(abs(try #require(ended.first?.figures?.distanceMeters) - 2040) < 0.01)
        #expect(tracker.nextDeadline == nil)
        // Silent again: GNSS decides (moving after 30 s of evidence).
        #expect(tracker.motionReported(nil, now: Self.at(610)).isEmpty)
        _ = tracker.fixTaken(Self.fix(620, 2300, speed: 12))
        // 500 m from where the trip ended, moving: the next trip, departed at 620 s, reported
        // once the device has left the stay where it was seen to begin (the 650 s fix).
        #expect(Self.summary(tracker.fixTaken(Self.fix(650, 2660, speed: 12))) == ["moving@620"])
        #expect(Self.summary(tracker.fixTaken(Self.fix(660, 2780, speed: 12))) == ["trip_start@620"])
    }

    /// A still word while GNSS fixes go on showing the drive (a smooth train, a false still;
    /// the policy keeps the receiver on for them): the word alone ends no trip once a fix has
    /// left the stop it was said in.
    @Test func aStillWordDoesNotEndATripThatFixesShowGoingOn() {
        var tracker = MovementTracker(settings: Self.settings(), profileName: "p")
        _ = Self.run(&tracker, Self.drive().filter { $0.time <= Self.at(300) })
        _ = tracker.motionReported(.still, now: Self.at(305))
        #expect(tracker.nextDeadline == Self.at(605))
        var events: [GeoEvent] = []
        for t in stride(from: 310.0, through: 900, by: 10) {
            events += tracker.fixTaken(Self.fix(t, 2160 + (t - 300) * 12, speed: 12))
            if let due = tracker.nextDeadline, due <= Self.at(t) { events += tracker.deadlineReached(now: Self.at(t)) }
        }
        #expect(!Self.summary(events).contains { $0.hasPrefix("trip_end") })
        #expect(tracker.state.trip != nil)
        // The fixes stop there (the receiver off): the word ends the trip `stop_after` after
        // the stop the last fix began, dated there.
        #expect(tracker.nextDeadline == Self.at(1200))
        #expect(Self.summary(tracker.deadlineReached(now: Self.at(1200))) == ["trip_end@900"])
    }

    /// Coarse fixes ±1.5 km, 900 m apart (a drive at 3 m/s seen every 5 min): no stand
    /// evidence, as there is none of movement; GNSS-grade fixes as close do show a stand.
    @Test func coarseFixesCannotShowAStand() {
        var tracker = MovementTracker(settings: Self.settings(), profileName: "p")
        var events: [GeoEvent] = []
        for k in 0..<6 { events += tracker.fixTaken(Self.fix(Double(k) * 300, Double(k) * 900, speed: nil, acc: 1500)) }
        #expect(events.isEmpty)
        #expect(tracker.state.motion == nil)
        var fine = MovementTracker(settings: Self.settings(), profileName: "p")
        var standing: [GeoEvent] = []
        for k in 0..<6 { standing += fine.fixTaken(Self.fix(Double(k) * 10, Double(k % 2) * 3, speed: nil, acc: 5)) }
        #expect(Self.summary(standing) == ["still@10"])
    }

    @Test func aRestartFromTheStateContinuesAsAnUninterruptedRun() {
        let fixes = Self.drive() + Self.cafe().map { f in
            var f = f
            f.time = f.time + .seconds(1300)
            f.coordinate = Geodesy.destination(from: f.coordinate, bearingDegrees: 0, distanceMeters: 5000)
            return f
        }
        let settings = Self.settings(visits: true)
        var whole = MovementTracker(settings: settings, profileName: "p")
        let reference = Self.run(&whole, fixes)
        #expect(reference.count >= 9)
        for cut in [5, 20, 40, 75, 130, 200] {
            var first = MovementTracker(settings: settings, profileName: "p")
            var events = Self.run(&first, Array(fixes[..<cut]))
            var second = MovementTracker(settings: settings, profileName: "p", state: first.state)
            events += Self.run(&second, Array(fixes[cut...]))
            #expect(events == reference, "cut at \(cut)")
        }
    }

    @Test func theMachineNamesAVisitAfterTheFenceItIsIn() throws {
        var profile = MonitorTests.profile(.continuous)
        profile.movement.visits = VisitSettings(radiusMeters: 50, minDuration: .seconds(60))
        var m = MonitorTests.machine(profile)
        var events: [GeoEvent] = []
        // Inside home (a 100 m circle) from 0 s, standing; out 300 m east at 200 s.
        for t in stride(from: 0.0, through: 210, by: 10) {
            events += MonitorTests.events(m.fixReceived(MonitorTests.fix(t, t < 200 ? 0 : 300), now: MonitorTests.at(t)))
        }
        let arrival = try #require(events.first { $0.kind == .arrival })
        let departure = try #require(events.first { $0.kind == .departure })
        #expect(arrival.fenceID == "home" && departure.fenceID == "home")
        #expect(arrival.id == EventID.make(profile: "m", fenceID: "home", kind: .arrival, time: MonitorTests.at(0)))
        #expect(departure.figures?.durationSeconds == 200)
    }

    @Test func aCoarseFixThatCannotTellLeavesAVisitArrivingByDeadline() {
        // At the café from 0 s (fixes at 0 and 10 s), the source says still at 15 s and the
        // receiver sleeps: the arrival is due at 300 s. A coarse fix (500 m) 30 m away cannot
        // show the device beyond 100 m: the deadline stands. One 5 km away can: it goes.
        func atCafe() -> MovementTracker {
            var tracker = MovementTracker(settings: Self.settings(motion: false, trips: false, visits: true), profileName: "p")
            _ = Self.run(&tracker, [Self.fix(0, 0, speed: 0), Self.fix(10, 0, speed: 0)])
            _ = tracker.motionReported(.still, now: Self.at(15))
            return tracker
        }
        var tracker = atCafe()
        #expect(tracker.fixTaken(Self.fix(60, 30, speed: nil, acc: 500)).isEmpty)
        #expect(tracker.nextDeadline == Self.at(300))
        #expect(Self.summary(tracker.deadlineReached(now: Self.at(300))) == ["arrival@0"])
        var away = atCafe()
        _ = away.fixTaken(Self.fix(60, 5_000, speed: nil, acc: 500))
        #expect(away.nextDeadline == nil)
        #expect(away.deadlineReached(now: Self.at(300)).isEmpty)
        // Kept across a restart.
        let restored = MovementTracker(settings: tracker.settings, profileName: "p", state: atCafe().state)
        #expect(restored.state.visitSeen == Self.at(10))
    }

    @Test func aTripEndedByTheFirstFixBeyondItsStopLeavesThatFixToTheNextTrip() throws {
        // Standing until 120 s, 12 m/s north 130–300 s (2160 m), stopped there 310–400 s, no
        // fix until 700 s, then 12 m/s on (2280 m at 700 s, 4680 m at 900 s) and parked. The
        // 700 s fix ends the first trip (its stop lasted 390 s ≥ 300 s by it) and is the
        // second's departure: it starts there, and its distance runs from there (2400 m).
        var fixes = Self.drive().filter { $0.time <= Self.at(400) }
        for t in stride(from: 700.0, through: 900, by: 10) { fixes.append(Self.fix(t, 2160 + (t - 690) * 12, speed: 12)) }
        for t in stride(from: 910.0, through: 1300, by: 10) { fixes.append(Self.fix(t, 4680, speed: 0)) }
        var tracker = MovementTracker(settings: Self.settings(), profileName: "p")
        let events = Self.run(&tracker, fixes)
        #expect(Self.summary(events) == ["still@0", "trip_start@130", "moving@130", "still@310", "trip_end@300",
                                         "trip_start@700", "moving@700", "still@910", "trip_end@900"])
        let second = try #require(events.last?.figures)
        let distance = try #require(second.distanceMeters)
        #expect(abs(distance - 2400) < 0.01, "\(distance)")
        #expect(second.durationSeconds == 200)
    }

    /// The source's word before any fix has no position to be reported at: the first fix
    /// reports it, dated when it was said and placed there; only once.
    @Test func aWordBeforeTheFirstFixIsReportedWithIt() throws {
        var tracker = MovementTracker(settings: Self.settings(trips: false), profileName: "p")
        #expect(tracker.motionReported(.moving, now: Self.at(0)).isEmpty)
        let first = tracker.fixTaken(Self.fix(8, 50, speed: 3))
        #expect(Self.summary(first) == ["moving@0"])
        #expect(first.first?.coordinate == Self.north(50) && first.first?.figures?.source == "motion")
        #expect(Self.run(&tracker, [Self.fix(9, 53, speed: 3), Self.fix(10, 56, speed: 3)]).isEmpty)
        #expect(Self.summary(tracker.motionReported(.still, now: Self.at(11))) == ["still@11"])
        // A word an earlier process heard (forgotten with the sensor at the start) is not
        // reported by this process's first fix.
        var earlier = MovementTracker(settings: Self.settings(trips: false), profileName: "p")
        _ = earlier.motionReported(.moving, now: Self.at(0))
        var restarted = MovementTracker(settings: Self.settings(trips: false), profileName: "p", state: earlier.state)
        restarted.forgetSensor()
        #expect(restarted.fixTaken(Self.fix(8, 50, speed: 3)).isEmpty)
    }

    /// A reload that drops `trips:` or `visits:` while one is under way ends it at the reload,
    /// where the rules last saw the device; the rule added back later starts afresh.
    @Test func aReloadThatRemovesTheRuleEndsTheTripOrVisitUnderWay() throws {
        // The drive until 450 s (2760 m, the trip announced at 130 s), reloaded without trips at
        // 455 s: trip_end there, 2760 m − 120 m in straight segments. Trips back from 460 s:
        // the car stands nowhere yet, so the 460 s fix is where it stood and the trip departed
        // (moving), the 470 s fix is beyond 100 m of it and the 480 s one leaves the stop
        // window (trip_start dated 460 s); parked from 610 s, it ends 300 s into the stay.
        let drive = Self.drive()
        var before = MovementTracker(settings: Self.settings(motion: false), profileName: "p")
        _ = Self.run(&before, drive.filter { $0.time <= Self.at(450) })
        var without = MovementTracker(settings: Self.settings(motion: false, trips: false), profileName: "p", state: before.state)
        let ended = without.start(at: Self.at(455))
        #expect(Self.summary(ended) == ["trip_end@455"])
        let end = try #require(ended.first)
        #expect(end.coordinate == Self.north(2760))
        #expect(abs(try #require(end.figures?.distanceMeters) - 2640) < 0.01)
        #expect(end.figures?.since == Self.at(130))
        #expect(without.takeState()?.trip == nil)
        var back = MovementTracker(settings: Self.settings(motion: false), profileName: "p", state: without.state)
        #expect(back.start(at: Self.at(460)).isEmpty)
        let later = Self.run(&back, drive.filter { $0.time >= Self.at(460) })
        #expect(Self.summary(later) == ["trip_start@460", "trip_end@600"])

        // The café visit (arrived at 200 s), reloaded without visits at 605 s: departure there,
        // named after the café, 405 s long. Visits back from 610 s: a new stay there, arriving
        // 300 s later, departing at the first fix beyond 100 m (1050 s).
        let cafe = Self.cafe()
        var visiting = MovementTracker(settings: Self.settings(motion: false, trips: false, visits: true), profileName: "p")
        #expect(Self.summary(cafe.filter { $0.time <= Self.at(600) }.flatMap { Self.atCafe(&visiting, $0) }) == ["arrival@200"])
        var gone = MovementTracker(settings: Self.settings(motion: false, trips: false), profileName: "p", state: visiting.state)
        let departed = gone.start(at: Self.at(605))
        #expect(Self.summary(departed) == ["departure@605"])
        #expect(departed.first?.fenceID == "cafe" && departed.first?.fenceName == "Café")
        #expect(departed.first?.figures?.durationSeconds == 405 && departed.first?.figures?.since == Self.at(200))
        var again = MovementTracker(settings: Self.settings(motion: false, trips: false, visits: true), profileName: "p", state: gone.state)
        #expect(again.start(at: Self.at(610)).isEmpty)
        #expect(Self.summary(cafe.filter { $0.time >= Self.at(610) }.flatMap { Self.atCafe(&again, $0) }) == ["arrival@610", "departure@1050"])

        // The machine's start ends it in its first commit, as a removed fence's stay is closed.
        var profile = MonitorTests.profile(.continuous)
        profile.movement = Self.settings(motion: false, trips: false)
        var snapshot = EngineSnapshot()
        snapshot.movement = before.state
        var machine = Monitor(profile: profile, snapshot: snapshot)
        #expect(MonitorTests.events(machine.start(now: Self.at(455))).map(\.kind) == [.tripEnd])
    }

    /// A receiver that reports a speed it cannot know (NaN, negative) reports none: the trip's
    /// fastest is its segments' own, as without a speed.
    @Test(arguments: [-1.0, .nan])
    func aSpeedThatIsNoSpeedLeavesTheSegmentsOwn(_ reported: Double) throws {
        var tracker = MovementTracker(settings: Self.settings(), profileName: "p")
        let fixes = Self.drive().map { fix in
            var f = fix
            if let speed = f.speedMetersPerSecond, speed > 0 { f.speedMetersPerSecond = reported }
            return f
        }
        let end = try #require(Self.run(&tracker, fixes).last { $0.kind == .tripEnd }?.figures)
        // 120 m in 10 s between fixes on the move: 12 m/s.
        #expect(abs(try #require(end.maxSpeedMetersPerSecond) - 12) < 1e-9, "\(String(describing: end.maxSpeedMetersPerSecond))")
    }

    @Test func theSourcesWordDropsGNSSEvidenceGatheredBeforeIt() {
        // Still; one fix at 2 m/s (a candidate for moving); the source says still, and an
        // hour later falls silent. One more fix at 1.2 m/s is a new candidate, not a change
        // confirmed at once and dated an hour back.
        var tracker = MovementTracker(settings: Self.settings(trips: false), profileName: "p")
        _ = Self.run(&tracker, [Self.fix(0, 0, speed: 0), Self.fix(40, 0, speed: 0), Self.fix(50, 20, speed: 2)])
        #expect(tracker.state.candidate == .moving)
        _ = tracker.motionReported(.still, now: Self.at(55))
        #expect(tracker.state.candidate == nil)
        _ = tracker.motionReported(nil, now: Self.at(3_655))
        #expect(tracker.fixTaken(Self.fix(3_660, 40, speed: 1.2)).isEmpty)
        #expect(tracker.state.candidateSince?.time == Self.at(3_660))
        // The word itself is not carried into a new process, nor left in the store for a
        // machine a reload builds on it before the source speaks again.
        var state = tracker.state
        state.sensor = .still
        state.sensorSince = Self.at(3_700)
        var profile = MonitorTests.profile(.continuous)
        profile.movement = Self.settings(trips: false)
        var snapshot = EngineSnapshot()
        snapshot.movement = state
        var restarted = Monitor(profile: profile, snapshot: snapshot)
        restarted.forgetMotionSourceWord()
        let stored = restarted.start(now: Self.at(4_000)).compactMap { if case let .commit(c) = $0 { c.movement } else { nil } }
        #expect(stored.count == 1 && stored.first?.sensor == nil && stored.first?.sensorSince == nil, "\(stored)")
    }

    @Test func anArrivalWithItsDepartureOnOneFixIsNamedAfterTheFenceTheDeviceWasIn() throws {
        var profile = MonitorTests.profile(.continuous)
        profile.movement.visits = VisitSettings(radiusMeters: 50, minDuration: .seconds(60))
        var m = MonitorTests.machine(profile)
        var events: [GeoEvent] = []
        // In home at 0 and 10 s, no fix until 100 s, 300 m east then (outside every fence)
        // and standing there: the home stay lasted 100 s by the first fix beyond it, so that
        // fix reports its arrival and its departure; the stay it begins arrives unnamed.
        for t in [0.0, 10] + Array(stride(from: 100.0, through: 200, by: 10)) {
            events += MonitorTests.events(m.fixReceived(MonitorTests.fix(t, t < 100 ? 0 : 300), now: MonitorTests.at(t)))
        }
        let visits = events.filter { $0.kind == .arrival || $0.kind == .departure }
        #expect(visits.map { "\($0.kind.rawValue)@\(Int(($0.time - MonitorTests.t0).secondsValue)):\($0.fenceID ?? "-")" }
                == ["arrival@0:home", "departure@100:home", "arrival@100:-"])
        #expect(visits[1].id == EventID.make(profile: "m", fenceID: "home", kind: .departure, time: MonitorTests.at(100)))
    }

    /// A sensor that says still on a smooth road: a fix shows the car 144 m on, GNSS wins in
    /// the policy, and the movement rules stop going by the word too. However long no fix
    /// comes after it, nothing has shown a stop: no trip ends. (The receiver reports no speed:
    /// one that reported 12 m/s refutes the word at once,
    /// `aStillWordTheLastFixRefutesEndsNoTrip`.)
    @Test func aStillWordThatGNSSOverrulesEndsNoTrip() {
        var profile = MonitorTests.profile(.continuous)
        profile.movement = Self.settings()
        var m = MonitorTests.machine(profile)
        var events: [GeoEvent] = []
        func moving(_ t: Double) -> Fix { MonitorTests.fix(t, 5_000 + 12 * t) }
        for t in stride(from: 0.0, through: 200, by: 10) {
            events += MonitorTests.events(m.fixReceived(moving(t), now: MonitorTests.at(t)))
        }
        #expect(m.movement.state.trip != nil)
        events += MonitorTests.events(m.motionReported(.still, now: MonitorTests.at(205)))
        #expect(!m.policy.isGNSSOn)
        _ = m.wakeRequested(now: MonitorTests.at(210))
        events += MonitorTests.events(m.fixReceived(moving(212), now: MonitorTests.at(212)))
        #expect(m.policy.motion == nil)
        while let due = m.nextDeadline, due <= MonitorTests.at(1_100) { events += MonitorTests.events(m.deadlineReached(now: due)) }
        #expect(!events.contains { $0.kind == .tripEnd })
        #expect(m.movement.state.trip != nil)
        // The sensor's next still, after it said moving, is believed again: the verdict lifted
        // is stored with the word's own commit (a restart right after believes the sensor).
        let word = m.motionReported(.moving, now: MonitorTests.at(1_110))
        events += MonitorTests.events(word)
        #expect(word.contains { if case let .commit(c) = $0 { c.assumptions?.stillDistrusted == false } else { false } })
        events += MonitorTests.events(m.motionReported(.still, now: MonitorTests.at(1_120)))
        while let due = m.nextDeadline, due <= MonitorTests.at(1_500) { events += MonitorTests.events(m.deadlineReached(now: due)) }
        #expect(events.filter { $0.kind == .tripEnd }.map(\.time) == [MonitorTests.at(1_120)])
    }

    /// The same drive with a receiver that reports 12 m/s: the word 5 s after such a fix is
    /// refuted at the word (the sensor claims a minute without movement), so the receiver stays
    /// on and the movement rules do not go by it either: no trip ends.
    @Test func aStillWordTheLastFixRefutesEndsNoTrip() {
        var profile = MonitorTests.profile(.continuous)
        profile.movement = Self.settings()
        var m = MonitorTests.machine(profile)
        var events: [GeoEvent] = []
        for t in stride(from: 0.0, through: 200, by: 10) {
            var f = MonitorTests.fix(t, 5_000 + 12 * t)
            f.speedMetersPerSecond = 12
            events += MonitorTests.events(m.fixReceived(f, now: MonitorTests.at(t)))
        }
        #expect(m.movement.state.trip != nil)
        events += MonitorTests.events(m.motionReported(.still, now: MonitorTests.at(205)))
        #expect(m.policy.isGNSSOn && m.policy.stillDistrusted && m.policy.motion == nil)
        while let due = m.nextDeadline, due <= MonitorTests.at(1_100) { events += MonitorTests.events(m.deadlineReached(now: due)) }
        #expect(!events.contains { $0.kind == .tripEnd })
        #expect(m.movement.state.trip != nil)
    }

    @Test func anExitCarriesTheTimeInsideAndMovementEventsComeInTheMachinesCommits() throws {
        var profile = MonitorTests.profile(.continuous)
        profile.movement = Self.settings(motion: true, trips: false)
        var m = MonitorTests.machine(profile)
        var events: [GeoEvent] = []
        // Outside (200 m east), inside from 20 s, outside again from 70 s; fixes every 10 s.
        for (t, x) in [(0.0, 200.0), (10, 190), (20, 0), (30, 0), (40, 0), (50, 0), (60, 0), (70, 250), (80, 260), (90, 270)] {
            var f = MonitorTests.fix(t, x)
            f.speedMetersPerSecond = 0
            events += MonitorTests.events(m.fixReceived(f, now: MonitorTests.at(t)))
        }
        #expect(events.map { "\($0.kind.rawValue)@\(Int(($0.time - MonitorTests.t0).secondsValue))" } == ["enter@20", "still@0", "exit@70"])
        #expect(events.last?.figures?.insideSeconds == 50)
        #expect(m.movement.state.last?.time == MonitorTests.at(90))
    }
}

/// The cooldown (docs/engine.md, "Cooldown"): a device parked on a fence's edge flaps in and
/// out; consumers get the first pair, then pairs or nothing, never an enter without its exit.
@Suite struct CooldownTests {
    typealias M = MonitorTests

    @Test func flappingWithinTheCooldownIsStoredNotDeliveredAndAStayThatOutlastsItIsDeliveredThen() throws {
        var profile = M.profile(.continuous)
        profile.fences[0].cooldown = .seconds(600)
        var m = M.machine(profile)
        // Fixes every 10 s, two to confirm a side: out (0 s), in (20 s), out (40 s), in
        // (60 s), out (80 s), in from 100 s until 690 s, out from 700 s.
        var events: [GeoEvent] = []
        var insideAfter: [Int: [String]] = [:]
        for t in stride(from: 0.0, through: 720, by: 10) {
            let x: Double = switch t {
            case ..<20, 40..<60, 80..<100, 700...: 250
            default: 0
            }
            while let due = m.nextDeadline, due <= M.at(t) {
                for case let .commit(c) in m.deadlineReached(now: due) {
                    events += c.events
                    insideAfter[Int((due - M.t0).secondsValue)] = c.inside
                }
            }
            for case let .commit(c) in m.fixReceived(M.fix(t, x), now: M.at(t)) {
                events += c.events
                insideAfter[Int(t)] = c.inside
            }
        }
        func line(_ e: GeoEvent) -> String { "\(e.kind.rawValue)@\(Int((e.time - M.t0).secondsValue))\(e.suppressed ? " suppressed" : "")" }
        // The first pair is delivered; the enter at 60 s is within 600 s of the exit at 40 s,
        // so it and its exit are held back; so is the enter at 100 s, whose stay outlasts the
        // cooldown: it is delivered at 640 s (40 s + 600 s), and its exit at 700 s with it.
        #expect(events.map(line) == ["enter@20", "exit@40", "enter@60 suppressed", "exit@80 suppressed", "enter@100 suppressed", "enter@640", "exit@700"])
        // What consumers see inside alternates, and matches the deliveries.
        #expect(insideAfter[70] == [] && insideAfter[110] == [] && insideAfter[640] == ["home"] && insideAfter[710] == [])
        if case let .cooledDown(since, cooldown)? = events.first(where: { $0.time == M.at(640) })?.rule {
            #expect(since == M.at(100) && cooldown == .seconds(600))
        } else {
            Issue.record("the enter at 640 s is not the cooldown's")
        }
        // A restart from the records held back continues alike.
        var resumed = Monitor(profile: profile, snapshot: { var s = m.engine.snapshot; s.cooldowns = Array(m.cooldown.records.values); return s }())
        _ = resumed.start(now: M.at(720))
        #expect(resumed.cooldown.records == m.cooldown.records)
    }

    /// Drives `m` with fixes every 10 s at `x(t)` metres east, deadlines first; the events as
    /// `kind@seconds`, with " suppressed" for those held back.
    static func drive(_ m: inout Monitor, through end: Double, _ x: (Double) -> Double) -> [String] {
        var events: [GeoEvent] = []
        for t in stride(from: 0.0, through: end, by: 10) {
            while let due = m.nextDeadline, due <= M.at(t) { events += M.events(m.deadlineReached(now: due)) }
            events += M.events(m.fixReceived(M.fix(t, x(t)), now: M.at(t)))
        }
        return events.map { "\($0.kind.rawValue)@\(Int(($0.time - M.t0).secondsValue))\($0.suppressed ? " suppressed" : "")\($0.unlisted ? " unlisted" : "")" }
    }

    /// A fence that reports enters only: a held-back stay that ends before the cooldown does
    /// is not delivered when the cooldown ends. With MQTT its stays end for consumers with
    /// unlisted exits (the first delivered, so the cooldown runs from it; the held stay's held
    /// back with it).
    @Test(arguments: [false, true])
    func aStayThatEndsWithoutAnExitBeforeItsCooldownIsNotDeliveredLater(mqtt: Bool) {
        var profile = M.profile(.continuous)
        profile.fences[0].cooldown = .seconds(600)
        profile.fences[0].events = [.enter]
        if mqtt {
            var settings = MQTTSettings(host: "broker", topic: "owntracks/u/d")
            settings.locations = MQTTSettings.Locations.none
            profile.publish.mqtt = settings
        }
        var m = M.machine(profile)
        // In at 20 s, out at 40 s, in at 60 s (held back), out for good from 80 s.
        let events = Self.drive(&m, through: 900) { t in
            switch t {
            case 20..<40, 60..<80: 0
            default: 250
            }
        }
        #expect(events == (mqtt ? ["enter@20", "exit@40 unlisted", "enter@60 suppressed", "exit@80 suppressed unlisted"]
                                : ["enter@20", "enter@60 suppressed"]))
        #expect(m.cooldown.suppressedFences.isEmpty)
    }

    /// A fence with `cooldown` whose `active:` window closes at 23:23:00 UTC, 4180 s after t0
    /// (22:13:20).
    static func closingAt4180(cooldown: Duration) -> Profile {
        var profile = ReportedInsideTests.closingAt4180()
        profile.fences[0].cooldown = cooldown
        return profile
    }

    /// An exit decided at the very instant the cooldown ends (an `active:` window closing then)
    /// ends the held-back stay before the cooldown could deliver it: consumers are not left
    /// inside a fence whose window has closed.
    @Test func anExitAtTheInstantTheCooldownEndsEndsTheHeldStayFirst() {
        // The window closes as the cooldown of the exit at 3600 s ends.
        var m = M.machine(Self.closingAt4180(cooldown: .seconds(580)))
        // In at 3580 s, out at 3600 s, in again at 3620 s (held back) until after the close.
        let events = Self.drive(&m, through: 4400) { t in
            switch t {
            case 3580..<3600, 3620..<4300: 0
            default: 250
            }
        }
        #expect(events == ["enter@3580", "exit@3600", "enter@3620 suppressed", "exit@4180 suppressed"])
        #expect(m.cooldown.suppressedFences.isEmpty)
    }

    /// `profile` with a 600 s cooldown, driven to 100 s: in at 20 s, out at 40 s, in again from
    /// 60 s on, that stay held back (the cooldown runs to 640 s).
    static func stayHeldBack(_ profile: Profile) -> Monitor {
        var profile = profile
        profile.fences[0].cooldown = .seconds(600)
        var m = M.machine(profile)
        let events = Self.drive(&m, through: 100) { t in
            switch t {
            case 20..<40, 60...: 0
            default: 250
            }
        }
        #expect(events == ["enter@20", "exit@40", "enter@60 suppressed"])
        return m
    }

    /// A fix taken before the deadlines that passed meanwhile (queued while the host was
    /// suspended across the cooldown's end at 640 s) is decided after them, as replay decides
    /// it: the stay is delivered at 640 s, and the exit the fix confirms at 700 s is its exit.
    @Test func aFixAfterAnOverdueCooldownsEndIsDecidedAfterIt() {
        var m = Self.stayHeldBack(M.profile(.continuous))
        var events: [GeoEvent] = []
        for t in [700.0, 710] { events += M.events(m.fixReceived(M.fix(t, 250), now: M.at(t))) }
        #expect(events.map { "\($0.kind.rawValue)@\(Int(($0.time - M.t0).secondsValue))\($0.suppressed ? " suppressed" : "")" } == ["enter@640", "exit@700"])
        #expect(m.cooldown.suppressedFences.isEmpty)
    }

    /// Speed in the zone is no wobble of the boundary: in a held-back stay it is told as in
    /// any other, `overspeed` and its `overspeed_end` as a pair, also when the device leaves
    /// the fence speeding (the speeding ends with the fix that confirms the exit).
    @Test func speedInAHeldBackStayIsToldAsAPair() {
        var profile = M.profile(.continuous)
        profile.fences[0].speedLimit = SpeedLimit(limitMetersPerSecond: 5, duration: .zero)
        profile.fences[0].cooldown = .seconds(600)
        var m = M.machine(profile)
        var events: [GeoEvent] = []
        // In at 20 s, out at 40 s, in again from 60 s (held back), 9 m/s from 80 s to 100 s;
        // again at 9 m/s from 130 s, out of the fence at 150 s still speeding.
        for t in stride(from: 0.0, through: 170, by: 10) {
            var fix = M.fix(t, (20..<40).contains(t) || (60..<150).contains(t) ? 0 : 250)
            fix.speedMetersPerSecond = (80..<110).contains(t) || t >= 130 ? 9 : 1
            events += M.events(m.fixReceived(fix, now: M.at(t)))
        }
        #expect(events.map { "\($0.kind.rawValue)@\(Int(($0.time - M.t0).secondsValue))\($0.suppressed ? " suppressed" : "")" }
            == ["enter@20", "exit@40", "enter@60 suppressed", "overspeed@80", "overspeed_end@110", "overspeed@130", "exit@150 suppressed", "overspeed_end@160"])
    }

    /// A late tick (the first after a restart, a suspend) that covers the cooldown's end and a
    /// dwell after it delivers them in time order: the stay at the cooldown's end, then its dwell.
    @Test func aLateTickDeliversTheStayThenItsDwellInTimeOrder() {
        var m = Self.stayHeldBack(M.profile(.continuous, dwell: .seconds(900)))
        // Nothing until 2000 s: the cooldown ended at 640 s, the dwell was due at 960 s.
        let events = M.events(m.deadlineReached(now: M.at(2000))).map { "\($0.kind.rawValue)@\(Int(($0.time - M.t0).secondsValue))\($0.suppressed ? " suppressed" : "")" }
        #expect(events == ["enter@640", "dwell@960"])
    }

    /// A late tick that covers the cooldown's end (4100 s) and a window closing after it
    /// (4180 s): the held stay is delivered at its end, as the device was inside and the fence
    /// active then, and the window's leave closes it: a pair, as a timely tick would give.
    @Test func aLateTickAcrossTheCooldownsEndAndAWindowsCloseGivesAPair() {
        var m = M.machine(Self.closingAt4180(cooldown: .seconds(500)))
        let before = Self.drive(&m, through: 3700) { t in
            switch t {
            case 3580..<3600, 3620...: 0
            default: 250
            }
        }
        #expect(before.suffix(3) == ["enter@3580", "exit@3600", "enter@3620 suppressed"])
        let late = M.events(m.deadlineReached(now: M.at(4300))).map { "\($0.kind.rawValue)@\(Int(($0.time - M.t0).secondsValue))\($0.suppressed ? " suppressed" : "")" }
        #expect(late == ["enter@4100", "exit@4180"])
    }

    /// A reload that removes a fence whose stay is held back holds back the stay's exit too; one
    /// that removes only its `cooldown:` delivers the stay at once.
    @Test func aReloadThatRemovesTheFenceOrItsCooldownKeepsPairs() {
        let m = Self.stayHeldBack(M.profile(.continuous))
        var snapshot = m.engine.snapshot
        snapshot.cooldowns = Array(m.cooldown.records.values)

        var without = M.profile(.continuous)
        without.fences = [Fence(id: "other", shape: .circle(center: M.east(5000), radiusMeters: 100))]
        var removed = Monitor(profile: without, snapshot: snapshot)
        let closing = M.events(removed.start(now: M.at(110)))
        #expect(closing.map { "\($0.kind.rawValue) \($0.fenceID ?? "-") \($0.suppressed)" } == ["exit home true"])
        #expect(removed.cooldown.records.isEmpty && !removed.cooldown.isEnabled)

        var uncooled = Monitor(profile: M.profile(.continuous), snapshot: snapshot)
        #expect(M.events(uncooled.start(now: M.at(110))).isEmpty)
        let due = uncooled.nextDeadline
        #expect(due != nil && due! <= M.at(110))
        let released = M.events(uncooled.deadlineReached(now: M.at(110)))
        #expect(released.map { "\($0.kind.rawValue)@\(Int(($0.time - M.t0).secondsValue)) \($0.suppressed)" } == ["enter@110 false"])
        if case let .cooledDown(since, cooldown)? = released.first?.rule {
            #expect(since == M.at(60) && cooldown == .zero)
        } else {
            Issue.record("the enter is not the cooldown's")
        }
        #expect(uncooled.cooldown.records.isEmpty)
    }
}

/// Speed in a zone across a reload: a reported speeding whose fence, or whose limit, is gone
/// ends then, so consumers told it began are told it ended.
@Suite struct SpeedWatchReloadTests {
    typealias M = MonitorTests

    @Test func aReloadThatRemovesTheLimitEndsAReportedSpeeding() {
        var profile = M.profile(.continuous)
        profile.fences[0].speedLimit = SpeedLimit(limitMetersPerSecond: 5, duration: .zero)
        var m = M.machine(profile)
        var events: [GeoEvent] = []
        for t in stride(from: 0.0, through: 60, by: 10) {
            var fix = M.fix(t, t < 20 ? 250 : 0)
            fix.speedMetersPerSecond = t < 30 ? 2 : 9
            events += M.events(m.fixReceived(fix, now: M.at(t)))
        }
        #expect(events.map { "\($0.kind.rawValue)@\(Int(($0.time - M.t0).secondsValue))" } == ["enter@20", "overspeed@30"])
        var snapshot = m.engine.snapshot
        snapshot.speeding = Array(m.speedWatch.records.values)
        for edit in ["limit", "fence"] {
            var edited = M.profile(.continuous)
            if edit == "fence" { edited.fences = [Fence(id: "other", shape: .circle(center: M.east(5000), radiusMeters: 100))] }
            var reloaded = Monitor(profile: edited, snapshot: snapshot)
            let ended = M.events(reloaded.start(now: M.at(70))).filter { $0.kind == .overspeedEnd }
            #expect(ended.map { "\($0.fenceID ?? "-")@\(Int(($0.time - M.t0).secondsValue))" } == ["home@70"], "\(edit)")
            #expect(ended.first?.figures?.maxSpeedMetersPerSecond == 9 && ended.first?.figures?.durationSeconds == 40, "\(edit)")
            #expect(reloaded.speedWatch.records.isEmpty && !reloaded.speedWatch.isEnabled, "\(edit)")
        }
    }
}

/// What consumers are told the device is inside (`inregions`, `fences --inside`): the stays
/// under way, not one an `active:` window closed.
@Suite struct ReportedInsideTests {
    typealias M = MonitorTests

    /// The home fence in continuous mode with a window that closes at 23:23:00 UTC, 4180 s
    /// after t0 (22:13:20).
    static func closingAt4180() -> Profile {
        var profile = M.profile(.continuous)
        profile.fences[0].active = FenceSchedule(windows: [FenceSchedule.Window(days: Set(0..<7), start: 22 * 60, end: 23 * 60 + 23)])
        return profile
    }

    /// A fix every 10 s from `start` through `end`, `x(t)` metres off, the deadlines between:
    /// each commit's `inside`, at its time (s after t0).
    static func inside(_ m: inout Monitor, from start: Double, through end: Double, _ x: (Double) -> Double) -> [(Int, [String])] {
        var inside: [(Int, [String])] = []
        for t in stride(from: start, through: end, by: 10) {
            while let due = m.nextDeadline, due <= M.at(t) {
                for case let .commit(c) in m.deadlineReached(now: due) { inside.append((Int((due - M.t0).secondsValue), c.inside)) }
            }
            for case let .commit(c) in m.fixReceived(M.fix(t, x(t)), now: M.at(t)) { inside.append((Int(t), c.inside)) }
        }
        return inside
    }

    @Test func aStayClosedByItsWindowIsNoLongerInside() {
        var m = M.machine(Self.closingAt4180())
        let inside = Self.inside(&m, from: 3500, through: 4300) { $0 < 3580 ? 250 : 0 }
        #expect(inside.first { $0.0 == 3600 }?.1 == ["home"])
        // The window closed at 4180 s: the leave, and no region from then on, though the
        // device stands inside the circle.
        #expect(inside.filter { $0.0 >= 4180 }.allSatisfy { $0.1.isEmpty }, "\(inside.filter { $0.0 >= 4170 })")
        #expect(m.engine.state(of: "home") == .inside)
    }

    /// A silent stay (no enter, so no leave either) in a fence whose window closes: the
    /// window's edge changes no record, and still the locations after it leave the fence out.
    @Test func aSilentStayLeavesTheListWhenItsWindowCloses() {
        var profile = Self.closingAt4180()
        profile.transitions.initial = .silent
        var m = M.machine(profile)
        let inside = Self.inside(&m, from: 4000, through: 4300) { _ in 0 }
        #expect(inside.first { $0.0 == 4100 }?.1 == ["home"])
        #expect(inside.filter { $0.0 >= 4190 }.allSatisfy { $0.1.isEmpty } && inside.contains { $0.0 >= 4190 }, "\(inside.filter { $0.0 >= 4170 })")
    }

    /// `initial: silent` (the default) reports no enter for a stay under way at start, but the
    /// device is inside and the stay ends with a leave: `inregions` lists it.
    @Test func aStayBegunSilentlyIsListed() {
        var profile = M.profile(.continuous)
        profile.transitions.initial = .silent
        var m = M.machine(profile)
        var last: [String]?
        for t in stride(from: 0.0, through: 60, by: 10) {
            for case let .commit(c) in m.fixReceived(M.fix(t, 0), now: M.at(t)) { last = c.inside }
        }
        #expect(m.engine.state(of: "home") == .inside)
        #expect(last == ["home"])
    }
}
