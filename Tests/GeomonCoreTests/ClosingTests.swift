import Foundation
import GeomonCore
import GeomonFormat
import Testing

/// Closing a stay (docs/engine.md): whatever stops a fence being watched while the device is
/// inside — a window closing, the fence removed, renamed, moved — reports the exit consumers
/// need, once; and a consumer that follows the events never stays "inside" a fence the engine
/// does not hold the device in and watch.
struct ClosingTests {
    typealias T = TransitionEngineTests

    /// Inside "home" (enter reported at 10 s), as a snapshot.
    static func insideHome(initial: InitialReport = .silent) -> (EngineSnapshot, [GeoEvent]) {
        var engine = TransitionEngine(profile: T.profile(initial: initial))
        let events = T.run(&engine, [T.fix(1, 300), T.fix(2, 300), T.fix(10, 0), T.fix(11, 0)])
        return (engine.snapshot, events)
    }

    static func closure(_ event: GeoEvent?) -> EventRule.Closure? {
        guard case let .closed(closure)? = event?.rule else { return nil }
        return closure
    }

    @Test func aRemovedFenceTheDeviceIsInReportsExitOnceWithItsName() throws {
        let (snapshot, entered) = Self.insideHome()
        #expect(T.summary(entered) == ["enter@10"])
        var profile = T.profile()
        profile.fences[0].id = "work"
        var engine = TransitionEngine(profile: profile, snapshot: snapshot)
        let events = engine.start(at: T.time(100))
        #expect(T.summary(events) == ["exit@100"])
        #expect(events.first?.fenceID == "home" && events.first?.fenceName == "Home")
        #expect(Self.closure(events.first) == EventRule.Closure(reason: .removed, insideSince: T.time(10)))
        #expect(events.first?.rule.text == "exit: the fence was removed while inside; inside since 1970-01-01T00:00:10Z")
        #expect(engine.takeChanges().removals == ["home"])
        // Once: the record is gone with the commit that carries the exit.
        #expect(engine.start(at: T.time(101)).isEmpty)
        var again = TransitionEngine(profile: profile, snapshot: engine.snapshot)
        #expect(again.start(at: T.time(102)).isEmpty)
    }

    @Test func aRenamedOrMovedFenceIsReplaced() throws {
        let (snapshot, _) = Self.insideHome()
        var renamed = T.profile()
        renamed.fences[0].name = "House"
        var moved = T.profile()
        moved.fences[0].shape = .circle(center: T.at(10), radiusMeters: 100)
        for profile in [renamed, moved] {
            var engine = TransitionEngine(profile: profile, snapshot: snapshot)
            let events = engine.start(at: T.time(100))
            #expect(T.summary(events) == ["exit@100"])
            // The exit carries the name consumers entered; the fence is new to them.
            #expect(events.first?.fenceName == "Home")
            #expect(Self.closure(events.first)?.reason == .replaced)
            #expect(engine.state(of: "home") == .outside)
            let next = T.run(&engine, [T.fix(110, 0), T.fix(111, 0)])
            #expect(T.summary(next) == ["enter@110"])
            #expect(next.first?.fenceName == profile.fences[0].name)
        }
    }

    @Test func otherSettingsOfAFenceDoNotCloseItsStay() {
        let (snapshot, _) = Self.insideHome()
        var profile = T.profile(events: [.enter, .exit], dwell: .seconds(600))
        profile.hooks.exit = [HookSpec(exec: ["/bin/true"])]
        var engine = TransitionEngine(profile: profile, snapshot: snapshot)
        #expect(engine.start(at: T.time(100)).isEmpty)
        #expect(engine.state(of: "home") == .inside)
    }

    /// `T.profile(events:)` publishing to MQTT (transitions, no location stream).
    static func published(events: Set<EventKind>) -> Profile {
        var p = T.profile(events: events)
        var mqtt = MQTTSettings(host: "broker", topic: "owntracks/u/d")
        mqtt.locations = MQTTSettings.Locations.none
        p.publish.mqtt = mqtt
        return p
    }

    /// With MQTT, a fence whose `events` leave out `exit` still ends a stay whose enter was
    /// reported: its exit is `unlisted` (MQTT consumers get their leave; no hook runs for it).
    /// The same after a reload that took `exit` out while inside, and for a window closing. A
    /// stay consumers were never told of ends silently, a fence without `enter` reports no
    /// enter, and without MQTT no exit is decided for such a fence.
    @Test func anExitTheFenceDoesNotListStillEndsAReportedStay() {
        var engine = TransitionEngine(profile: Self.published(events: [.enter]))
        let events = T.run(&engine, [T.fix(1, 300), T.fix(2, 300), T.fix(10, 0), T.fix(11, 0),
                                     T.fix(20, 300), T.fix(21, 300), T.fix(30, 0), T.fix(31, 0)])
        #expect(T.summary(events) == ["enter@10", "exit@20", "enter@30"])
        #expect(events.map(\.unlisted) == [false, true, false])
        #expect(EventEncoding.json(events[1]).hasSuffix(",\"unlisted\":true}"))
        #expect(EventEncoding.text(events[1]).hasSuffix("(unlisted: ends the stay for MQTT consumers; no hooks)"))
        // `events: [enter, exit]` when the stay was entered, `[enter]` since a reload.
        let (snapshot, _) = Self.insideHome()
        var reloaded = TransitionEngine(profile: Self.published(events: [.enter]), snapshot: snapshot)
        #expect(reloaded.start(at: T.time(100)).isEmpty)
        let out = T.run(&reloaded, [T.fix(110, 300), T.fix(111, 300)])
        #expect(T.summary(out) == ["exit@110"])
        #expect(out.first?.unlisted == true)
        // A window closing while inside.
        var windowed = Self.published(events: [.enter])
        windowed.fences[0].active = FenceSchedule(windows: [FenceSchedule.Window(days: Set(0..<7), start: 0, end: 1)])
        var closing = TransitionEngine(profile: windowed)
        let closed = T.run(&closing, [T.fix(1, 300), T.fix(2, 300), T.fix(10, 0), T.fix(11, 0), T.fix(70, 0)])
        #expect(T.summary(closed) == ["enter@10", "exit@60"])
        #expect(closed.last?.unlisted == true && Self.closure(closed.last)?.reason == .windowClosed)
        // Without MQTT: the enter only, whatever ends the stay.
        var hooksOnly = TransitionEngine(profile: T.profile(events: [.enter]))
        #expect(T.summary(T.run(&hooksOnly, [T.fix(1, 300), T.fix(2, 300), T.fix(10, 0), T.fix(11, 0), T.fix(20, 300), T.fix(21, 300)])) == ["enter@10"])
        var windowedHooks = windowed
        windowedHooks.publish.mqtt = nil
        var quiet = TransitionEngine(profile: windowedHooks)
        #expect(T.summary(T.run(&quiet, [T.fix(1, 300), T.fix(2, 300), T.fix(10, 0), T.fix(11, 0), T.fix(70, 0)])) == ["enter@10"])
        // Inside from the start with `initial: silent`: never reported, so no exit either.
        var silent = TransitionEngine(profile: Self.published(events: [.enter]))
        #expect(T.run(&silent, [T.fix(1, 0), T.fix(2, 0), T.fix(10, 300), T.fix(11, 300)]).isEmpty)
        // Exits only: no enter, and each exit is listed.
        var exits = TransitionEngine(profile: T.profile(events: [.exit]))
        let only = T.run(&exits, [T.fix(1, 300), T.fix(2, 300), T.fix(10, 0), T.fix(11, 0), T.fix(20, 300), T.fix(21, 300)])
        #expect(T.summary(only) == ["exit@20"])
        #expect(only.first?.unlisted == false)
    }

    @Test func aStayConsumersWereNotToldOfClosesSilently() {
        // `initial: silent` and the device inside from the start: no enter, so no exit either.
        var engine = TransitionEngine(profile: T.profile(initial: .silent))
        #expect(T.run(&engine, [T.fix(1, 0), T.fix(2, 0)]).isEmpty)
        #expect(engine.state(of: "home") == .inside)
        var profile = T.profile()
        profile.fences = []
        var next = TransitionEngine(profile: profile, snapshot: engine.snapshot)
        #expect(next.start(at: T.time(100)).isEmpty)
        #expect(next.takeChanges().removals == ["home"])
    }

    @Test func aProfileEditThatPutsTheFenceOutsideItsWindowsClosesTheStay() {
        let (snapshot, _) = Self.insideHome()
        var profile = T.profile()
        // Active 00:10–00:20 UTC; the edit takes effect at 00:01:40.
        profile.fences[0].active = FenceSchedule(windows: [FenceSchedule.Window(days: Set(0..<7), start: 10, end: 20)])
        var engine = TransitionEngine(profile: profile, snapshot: snapshot)
        let events = engine.start(at: T.time(100))
        #expect(T.summary(events) == ["exit@100"])
        #expect(Self.closure(events.first)?.reason == .windowClosed)
        #expect(engine.state(of: "home") == .inside)
    }

    @Test func aRowFromBeforeTheColumnsIsTakenAsToldAndAdoptsTheFence() {
        var (snapshot, _) = Self.insideHome()
        snapshot.records[0].fingerprint = nil
        snapshot.records[0].name = nil
        var kept = TransitionEngine(profile: T.profile(), snapshot: snapshot)
        #expect(kept.start(at: T.time(100)).isEmpty)
        #expect(kept.snapshot.records.first?.fingerprint != nil)
        var profile = T.profile()
        profile.fences = []
        var removed = TransitionEngine(profile: profile, snapshot: snapshot)
        // No stored name: the exit names the fence by its id (OwnTracks' `desc` falls back to it).
        let events = removed.start(at: T.time(100))
        #expect(T.summary(events) == ["exit@100"] && events.first?.fenceName == nil)
    }

    @Test func fingerprintsAreStableAndSeeNameAndGeometry() {
        let circle = FenceShape.circle(center: Coordinate(latitude: 47, longitude: 8), radiusMeters: 100)
        let a = FenceFingerprint.of(name: "Home", shape: circle)
        // A constant: the same on every run and machine (FNV-1a, not the seeded Hasher).
        #expect(a == FenceFingerprint.of(name: "Home", shape: circle))
        #expect(a != FenceFingerprint.of(name: "home", shape: circle))
        #expect(a != FenceFingerprint.of(name: nil, shape: circle))
        #expect(a != FenceFingerprint.of(name: "Home", shape: .circle(center: Coordinate(latitude: 47, longitude: 8), radiusMeters: 100.5)))
        let ring = [Coordinate(latitude: 0, longitude: 0), Coordinate(latitude: 0, longitude: 1), Coordinate(latitude: 1, longitude: 1)]
        #expect(FenceFingerprint.of(name: nil, shape: .polygons([PolygonRings(shell: ring)]))
            != FenceFingerprint.of(name: nil, shape: .corridor(lines: [ring], widthMeters: 0)))
    }

    // MARK: - A consumer following the events

    /// Three fences on one meridian ("a" at 0 m, "c" at 200 m with windows, "b" at 400 m), a
    /// random walk past them, and at random steps a restart from the snapshot, a rename, a
    /// move, a removal and a return of a fence, or a schedule edit. A consumer applies every
    /// enter and exit; after every input it must hold no fence the engine does not hold the
    /// device inside and watch, and with `initial: report`, whenever no change is pending, every
    /// such fence.
    @Test(arguments: [(InitialReport.report, UInt64(1)), (.report, 2), (.report, 3), (.silent, 4), (.silent, 5)])
    func aConsumerFollowingTheEventsEndsWithTheTrueSet(_ initial: InitialReport, _ seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        func fence(_ id: String, _ name: String, _ d: Double, _ radius: Double) -> Fence {
            Fence(id: id, name: name, shape: .circle(center: T.at(d), radiusMeters: radius), events: [.enter, .exit])
        }
        let windows = FenceSchedule(windows: [FenceSchedule.Window(days: Set(0..<7), start: 10, end: 20),
                                              FenceSchedule.Window(days: Set(0..<7), start: 30, end: 45)])
        var base = T.profile(initial: initial, events: [.enter, .exit], dwell: nil)
        var scheduled = fence("c", "C", 200, 150)
        scheduled.active = windows
        base.fences = [fence("a", "A", 0, 100), scheduled, fence("b", "B", 400, 100)]
        var profile = base
        var engine = TransitionEngine(profile: profile)
        var consumer: Set<String> = []
        var d: Double
        var changes = 0
        var closings = 0
        func apply(_ events: [GeoEvent]) {
            for event in events {
                if Self.closure(event) != nil { closings += 1 }
                switch event.kind {
                case .enter: consumer.insert(event.fenceID ?? "")
                case .exit: consumer.remove(event.fenceID ?? "")
                default: break
                }
            }
        }
        for step in 1...600 {
            let t = Int64(step * 15)
            if rng.nextUnit() < 0.08 {
                // Change what is watched, as a reload, a pushed command or an edit and restart do.
                switch Int(rng.next() % 5) {
                case 0: break
                case 1: if let i = profile.fences.firstIndex(where: { $0.id == "b" }) { profile.fences[i].name = profile.fences[i].name == "B" ? "Bee" : "B" }
                case 2: if let i = profile.fences.firstIndex(where: { $0.id == "a" }) { profile.fences[i].shape = .circle(center: T.at(rng.nextUnit() * 40 - 20), radiusMeters: 100) }
                case 3: profile.fences = profile.fences.count == 3 ? profile.fences.filter { $0.id != "c" } : base.fences
                default: if let i = profile.fences.firstIndex(where: { $0.id == "c" }) { profile.fences[i].active = profile.fences[i].active == nil ? windows : nil }
                }
                engine = TransitionEngine(profile: profile, snapshot: engine.snapshot)
                apply(engine.start(at: T.time(t - 1)))
                changes += 1
            }
            // Back and forth past the three fences every 30 minutes, with some noise.
            d = 200 + 420 * sin(Double(t) * 2 * Double.pi / 1800) + (rng.nextUnit() - 0.5) * 40
            apply(T.run(&engine, [T.fix(t, d)]))
            let watched = Set(profile.fences.indices.filter { i in
                engine.state(of: profile.fences[i].id) == .inside && engine.isActive(fence: i, at: T.time(t))
            }.map { profile.fences[$0].id })
            #expect(consumer.isSubset(of: watched), "step \(step): consumer \(consumer.sorted()), engine \(watched.sorted())")
            if initial == .report, engine.earliestPending == nil {
                #expect(consumer == watched, "step \(step): consumer \(consumer.sorted()), engine \(watched.sorted())")
            }
        }
        #expect(changes > 10 && closings > 0, "\(changes) changes, \(closings) closings")
    }
}
