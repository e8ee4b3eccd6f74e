import GeomonCore
import Testing

/// The decision machine: fixes and deadlines in, effects out (jump screen, engine, policy and
/// one index lookup per fix, combined).
@Suite struct MonitorTests {
    static let t0 = UTCTime(millisecondsSince1970: 1_700_000_000_000)
    static func at(_ s: Double) -> UTCTime { t0 + .milliseconds(Int64(s * 1000)) }
    /// A point `m` metres east of (0, 0).
    static func east(_ m: Double) -> Coordinate { Coordinate(latitude: 0, longitude: m / 111_195.08) }
    static func fix(_ s: Double, _ m: Double, acc: Double = 5, source: FixSource = .gnss) -> Fix {
        Fix(time: at(s), coordinate: east(m), horizontalAccuracyMeters: acc, source: source)
    }

    /// A 100 m circle at the origin; hysteresis 10 m, two confirming fixes (the defaults).
    static func profile(_ mode: MonitoringMode = .regions, dwell: Duration? = nil) -> Profile {
        var p = Profile(name: "m", mode: mode)
        p.sources.gnss = GNSSSourceSettings()
        p.policy.maxSpeedMetersPerSecond = 45
        p.policy.wakeMarginMeters = 20
        p.policy.minSleep = .seconds(10)
        p.policy.maxSleep = .seconds(600)
        var home = Fence(id: "home", shape: .circle(center: east(0), radiusMeters: 100))
        if let dwell {
            home.dwell = dwell
            home.events = [.enter, .exit, .dwell]
        }
        p.fences = [home]
        return p
    }

    static func machine(_ profile: Profile, _ edit: (inout PowerConfiguration) -> Void = { _ in }) -> Monitor {
        var configuration = PowerConfiguration(profile: profile)
        edit(&configuration)
        var m = Monitor(profile: profile, configuration: configuration)
        _ = m.start(now: t0)
        return m
    }

    static func events(_ effects: [Monitor.Effect]) -> [GeoEvent] {
        effects.flatMap { effect -> [GeoEvent] in
            if case let .commit(c) = effect { return c.events }
            return []
        }
    }

    static func decision(_ effects: [Monitor.Effect]) -> PowerReason.Kind? {
        for case let .took(_, decision) in effects { return decision?.kind }
        return nil
    }

    @Test func certainFixesConfirmAnEnterDatedAtTheFirstAndTheFirstSideIsSilent() {
        // `stay-on` keeps the receiver on near the boundary, so every fix reaches the machine.
        var m = Self.machine(Self.profile()) { $0.shortSleep = .stayOn }
        // 200 m out (s = 100 ≥ a + h = 15): certainly outside. Until two usable fixes have
        // been seen the engine is starting up, so the policy is not certain yet.
        #expect(Self.decision(m.fixReceived(Self.fix(0, 200), now: Self.at(0))) == .uncertain)
        let second = m.fixReceived(Self.fix(10, 190), now: Self.at(10))
        #expect(Self.events(second).isEmpty)
        #expect(Self.decision(second) == .boundaryNear)
        // s = −5, within ±15: uncertain, nothing changes.
        let unsure = m.fixReceived(Self.fix(20, 95), now: Self.at(20))
        #expect(Self.events(unsure).isEmpty)
        #expect(Self.decision(unsure) == .uncertain)
        // Certainly inside: pending, then confirmed by the second; the enter carries the first's time.
        let pending = m.fixReceived(Self.fix(30, 50), now: Self.at(30))
        #expect(Self.decision(pending) == .confirming)
        let confirmed = m.fixReceived(Self.fix(40, 40), now: Self.at(40))
        #expect(Self.events(confirmed).map(\.kind) == [.enter])
        #expect(Self.events(confirmed).first?.time == Self.at(30))
        #expect(Self.decision(confirmed) != .confirming)
        // Each fix was looked up in the index once.
        #expect(m.lookups.fixes == 5 && m.lookups.probes == 5)
    }

    @Test func aChangeWaitingForOneMoreFixIsSettledByStayingOnThoughAnotherFenceIsInDoubt() {
        // `home` (30 m) and `shop` (45 m, centred 40 m west) overlap; shop's east edge is 5 m
        // east of the origin. A slow fix 20 m inside home starts its enter but lies 5 m from
        // shop's edge, in shop's band: the fix is not certain for every fence. The confirming
        // fix comes at the tracking rate (1 s) before a wake's first fix could (2 s), so the
        // receiver stays on for it rather than taking a band sleep that samples past it.
        var p = Self.profile()
        p.fences = [
            Fence(id: "home", shape: .circle(center: Self.east(0), radiusMeters: 30)),
            Fence(id: "shop", shape: .circle(center: Self.east(-40), radiusMeters: 45)),
        ]
        var m = Self.machine(p)
        _ = m.fixReceived(Self.fix(0, 60), now: Self.at(0))
        _ = m.fixReceived(Self.fix(1, 59), now: Self.at(1))
        // 10 m outside home, in its band: uncertain; without a speed nothing may sleep.
        _ = m.fixReceived(Self.fix(2, 40), now: Self.at(2))
        #expect(m.isReceiverOn)
        let slow = Fix(time: Self.at(12), coordinate: Self.east(10), horizontalAccuracyMeters: 5, speedMetersPerSecond: 0.5)
        let pending = m.fixReceived(slow, now: slow.time)
        #expect(Self.events(pending).isEmpty)
        #expect(Self.decision(pending) == .confirming)
        let stillOn = m.isReceiverOn
        #expect(stillOn)
        let next = Fix(time: Self.at(13), coordinate: Self.east(9.5), horizontalAccuracyMeters: 5, speedMetersPerSecond: 0.5)
        let confirmed = m.fixReceived(next, now: next.time)
        #expect(Self.events(confirmed).map { "\($0.kind.rawValue) \($0.fenceID ?? "-")" } == ["enter home"])
        #expect(Self.events(confirmed).first?.time == Self.at(12))
    }

    @Test func aChangeThatWaitsForItsConfirmTimeIsNotSettledByStayingOn() {
        // With `transitions.confirm.time: 30s` the change waits for time, not for fixes the
        // tracking rate brings: the budget's band sleep stands, as it does for any change that
        // is confirmed later than a wake's first fix.
        var p = Self.profile()
        p.fences = [Fence(id: "home", shape: .circle(center: Self.east(0), radiusMeters: 30))]
        p.transitions.confirmTime = .seconds(30)
        var m = Self.machine(p)
        _ = m.fixReceived(Self.fix(0, 60), now: Self.at(0))
        _ = m.fixReceived(Self.fix(1, 59), now: Self.at(1))
        _ = m.fixReceived(Self.fix(2, 40), now: Self.at(2))
        let slow = Fix(time: Self.at(12), coordinate: Self.east(10), horizontalAccuracyMeters: 5, speedMetersPerSecond: 0.5)
        let pending = m.fixReceived(slow, now: slow.time)
        #expect(Self.decision(pending) == .bandSleep)
        let off = !m.isReceiverOn
        #expect(off)
    }

    /// A reload that raises `transitions.confirm` keeps what the fixes before it established:
    /// the device known outside every fence stays so, and entering one is reported (under
    /// `initial: silent`, confirming `inside` from `unknown` would not be).
    @Test func aReloadThatRaisesConfirmKeepsTheDeviceKnownOutside() {
        var once = Self.profile(.continuous)
        once.transitions.confirm = 1
        var m = Self.machine(once)
        _ = m.fixReceived(Self.fix(0, 300), now: Self.at(0))
        #expect(m.engine.implicitState == .outside)
        var thrice = Self.profile(.continuous)
        thrice.transitions.confirm = 3
        var reloaded = Monitor(profile: thrice, snapshot: m.engine.snapshot)
        _ = reloaded.start(now: Self.at(1))
        #expect(reloaded.engine.implicitState == .outside)
        var events: [GeoEvent] = []
        for t in [10.0, 20, 30] { events += Self.events(reloaded.fixReceived(Self.fix(t, 0), now: Self.at(t))) }
        #expect(events.map { "\($0.kind.rawValue)@\(Int(($0.time - Self.t0).secondsValue))" } == ["enter@10"])
    }

    @Test func theCommitCarriesTheFixesTheEngineTookAndItsScalars() {
        var m = Self.machine(Self.profile()) { $0.shortSleep = .stayOn }
        let effects = m.fixReceived(Self.fix(0, 300), now: Self.at(0))
        guard case let .commit(commit) = effects.first else {
            Issue.record("the first effect is not the commit: \(effects)")
            return
        }
        #expect(commit.fixes == [Self.fix(0, 300)])
        #expect(commit.lastFixTime == Self.at(0) && commit.usableFixCount == 1)
        // A fix not newer than the last is dropped, and the policy still sees it.
        let again = m.fixReceived(Self.fix(0, 301), now: Self.at(0.5))
        #expect(again.contains(.dropped(Self.fix(0, 301), .notNewer)))
        #expect(!again.contains { if case .commit = $0 { return true } else { return false } })
    }

    @Test func gnssFixesWhileTheReceiverIsOffAreDroppedAndCoarseOnesAreTaken() {
        // 5 km from the fence: once the engine is past start-up, the receiver goes to sleep.
        var m = Self.machine(Self.profile())
        _ = m.fixReceived(Self.fix(0, 5000), now: Self.at(0))
        let second = m.fixReceived(Self.fix(1, 5001), now: Self.at(1))
        #expect(second.contains { if case .power(.gnssOff) = $0 { return true } else { return false } })
        #expect(!m.isReceiverOn)
        #expect(m.fixReceived(Self.fix(2, 5002), now: Self.at(2)) == [.dropped(Self.fix(2, 5002), .receiverOff)])
        let coarse = m.fixReceived(Self.fix(3, 5000, acc: 300, source: .coarse), now: Self.at(3))
        #expect(coarse.contains { if case .commit = $0 { return true } else { return false } })
        // The policy wakes the receiver at the time it scheduled: the machine's next deadline.
        let wake = m.nextDeadline
        #expect(wake.map { $0 > Self.at(10) } ?? false)
    }

    @Test func anImplausibleJumpIsHeldUntilASecondFixConfirmsIt() {
        var m = Self.machine(Self.profile()) { $0.shortSleep = .stayOn }
        _ = m.fixReceived(Self.fix(0, 2000), now: Self.at(0))
        // 1 km in 1 s (45 m/s allowed, accuracies 5 m): held.
        let jump = Self.fix(1, 1000)
        #expect(m.fixReceived(jump, now: Self.at(1)) == [.held(jump)])
        // The next fix is plausible from the held one: both pass, in order.
        let next = m.fixReceived(Self.fix(2, 990), now: Self.at(2))
        guard case let .commit(commit) = next.first else {
            Issue.record("no commit: \(next)")
            return
        }
        #expect(commit.fixes.map(\.time) == [Self.at(1), Self.at(2)])
    }

    @Test func aDwellFiresAtItsDeadlineWithoutAFix() {
        var m = Self.machine(Self.profile(dwell: .seconds(30)), { $0.alwaysOn = true })
        _ = m.fixReceived(Self.fix(0, 300), now: Self.at(0))
        _ = m.fixReceived(Self.fix(10, 290), now: Self.at(10))
        _ = m.fixReceived(Self.fix(20, 20), now: Self.at(20))
        let entered = m.fixReceived(Self.fix(21, 10), now: Self.at(21))
        #expect(Self.events(entered).map(\.kind) == [.enter])
        // Inside since 20 s: the dwell is due at 50 s, the machine's only deadline (always-on).
        #expect(m.nextDeadline == Self.at(50))
        let dwell = Self.events(m.deadlineReached(now: Self.at(50)))
        #expect(dwell.map(\.kind) == [.dwell])
        #expect(dwell.first?.time == Self.at(50))
        #expect(dwell.first?.rule == .dwell(EventRule.Dwell(insideSince: Self.at(20), dwell: .seconds(30), byFix: false)))
        #expect(m.nextDeadline == nil)
    }

    @Test func alwaysOnReusesTheLastProbeWhereItProvesTheAnswerAndDecidesTheSameEvents() {
        // 1 Hz east at 10 m/s from −3 km through the circle and on to +3 km.
        let track = (0...600).map { Self.fix(Double($0), -3000 + Double($0) * 10) }
        var m = Self.machine(Self.profile()) { $0.alwaysOn = true }
        var engine = TransitionEngine(profile: Self.profile())
        var fromMachine: [GeoEvent] = []
        var fromEngine: [GeoEvent] = []
        for fix in track {
            fromMachine += Self.events(m.fixReceived(fix, now: fix.time))
            fromEngine += engine.fixReceived(fix).events
        }
        #expect(fromMachine.map(\.kind) == [.enter, .exit])
        #expect(fromMachine == fromEngine)
        // Far from the fence most fixes are within the clearance of an earlier probe.
        #expect(m.lookups.fixes == track.count)
        #expect(m.lookups.probes < track.count / 3)
    }

    @Test func startSwitchesOnTheReceiverOrTheCoarseSource() {
        var regions = Monitor(profile: Self.profile())
        #expect(regions.start(now: Self.t0) == [.power(.gnssOn(PowerReason(.start, ttff: .seconds(30))))])
        #expect(regions.isReceiverOn)
        var radar = Monitor(profile: Self.profile(.significantChange))
        #expect(radar.start(now: Self.t0) == [.power(.coarseOn(PowerReason(.start)))])
        #expect(!radar.isReceiverOn && radar.isCoarseOn)
    }
}

/// Fences and tracks across ±180°: a circle centred east of the antimeridian, an unsplit
/// polygon around it (edges the short way), the same polygon split the RFC 7946 way; a ship
/// crossing east to west and back inside them, then out.
@Suite struct AntimeridianMonitorTests {
    static let t0 = UTCTime(millisecondsSince1970: 1_700_000_000_000)

    static func profile() -> Profile {
        var p = Profile(name: "pacific", mode: .continuous)
        p.sources.gnss = GNSSSourceSettings()
        let box = [(179.8, -17.2), (-179.8, -17.2), (-179.8, -16.8), (179.8, -16.8)].map { Coordinate(latitude: $0.1, longitude: $0.0) }
        let east = [(179.8, -17.2), (180.0, -17.2), (180.0, -16.8), (179.8, -16.8)].map { Coordinate(latitude: $0.1, longitude: $0.0) }
        let west = [(-180.0, -17.2), (-179.8, -17.2), (-179.8, -16.8), (-180.0, -16.8)].map { Coordinate(latitude: $0.1, longitude: $0.0) }
        p.fences = [
            Fence(id: "circle", shape: .circle(center: Coordinate(latitude: -17, longitude: 179.99), radiusMeters: 5000)),
            Fence(id: "box", shape: .polygons([PolygonRings(shell: box)])),
            Fence(id: "split", shape: .polygons([PolygonRings(shell: east), PolygonRings(shell: west)])),
        ]
        return p
    }

    /// Fixes every 20 minutes at the given longitudes, at 17°S (a few knots, for a ship).
    static func fixes(_ longitudes: [Double]) -> [Fix] {
        longitudes.enumerated().map { k, lon in
            Fix(time: t0 + .seconds(Int64(1200 * k)), coordinate: Coordinate(latitude: -17, longitude: lon), horizontalAccuracyMeters: 5)
        }
    }

    static func run(_ fixes: [Fix]) -> [String] {
        let profile = Self.profile()
        var configuration = PowerConfiguration(profile: profile)
        configuration.alwaysOn = true
        var m = Monitor(profile: profile, configuration: configuration)
        _ = m.start(now: t0)
        var out: [String] = []
        for fix in fixes {
            let effects = m.fixReceived(fix, now: fix.time)
            #expect(!effects.contains { if case .held = $0 { return true } else { return false } }, "a fix held as a jump: \(fix)")
            for case let .commit(c) in effects {
                out += c.events.map { "\($0.kind.rawValue) \($0.fenceID ?? "-")" }
            }
        }
        return out
    }

    @Test func crossingTheAntimeridianInsideAFenceIsNoExit() {
        // 179.95°E → 179.95°W and back, about 1 km a step: inside all three throughout
        // (the circle reaches 179.94°E–179.96°W).
        let lons = [179.95, 179.96, 179.97, 179.98, 179.99, 180.0, -179.99, -179.98, -179.97, -179.98, -179.99, 179.99, 179.98, 179.97]
        let events = Self.run(Self.fixes(lons))
        #expect(events.isEmpty, "\(events)")
    }

    @Test func leavingAcrossTheAntimeridianIsOneExitPerFence() {
        // Starts inside all three, goes west across 180° and on, out of every fence.
        let lons = [179.99, -179.99, -179.97, -179.95, -179.9, -179.85, -179.79, -179.75, -179.7, -179.6, -179.5]
        let events = Self.run(Self.fixes(lons))
        #expect(events.sorted() == ["exit box", "exit circle", "exit split"], "\(events)")
    }
}
