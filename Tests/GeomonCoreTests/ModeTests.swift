import GeomonCore
import Testing

/// Modes (docs/engine.md, "Modes"): the first entry of `modes:` whose conditions hold runs the
/// profile with its changes; battery and power are inputs like fixes.
@Suite struct ModeTests {
    static let t0 = MonitorTests.t0
    static func at(_ s: Double) -> UTCTime { MonitorTests.at(s) }
    static func fix(_ s: Double, _ m: Double) -> Fix { MonitorTests.fix(s, m) }

    /// The camper van: continuous while the engine runs, regions on the leisure battery,
    /// coarse significant changes only below 20 %. Its regions fallback watches a 100 m circle.
    static func van() -> Profile {
        var p = MonitorTests.profile(.regions)
        var coarse = CoarseSourceSettings()
        coarse.exec = ["/bin/true"]
        p.sources.coarse = coarse
        var low = ModeRule(name: "low", when: ModeCondition(batteryBelow: 20), mode: .significantChange)
        low.mqttLocations = MQTTSettings.Locations.none
        var parked = ModeRule(name: "parked", when: ModeCondition(externalPower: false), mode: .regions)
        var policy = p.policy
        policy.maxSleep = .seconds(1800)
        parked.policy = policy
        p.modes = [ModeRule(name: "driving", when: ModeCondition(externalPower: true), mode: .continuous), low, parked]
        return p
    }

    static func machine(_ profile: Profile = van(), snapshot: EngineSnapshot = EngineSnapshot()) -> (Monitor, [Monitor.Effect]) {
        var m = Monitor(profile: profile, snapshot: snapshot)
        let effects = m.start(now: t0)
        return (m, effects)
    }

    static func modeEvents(_ effects: [Monitor.Effect]) -> [GeoEvent] {
        MonitorTests.events(effects).filter { $0.kind == .mode }
    }

    static func actions(_ effects: [Monitor.Effect]) -> [PowerAction] {
        effects.compactMap { if case let .power(a) = $0 { return a } else { return nil } }
    }

    static func supply(_ capacity: Int?, _ online: Bool?) -> PowerSupplyReading {
        PowerSupplyReading(capacity: capacity, online: online)
    }

    @Test func theFirstEntryThatHoldsAppliesAndEachSwitchIsOneEventSayingWhy() throws {
        var (m, start) = Self.machine()
        // No reading yet: no entry's condition holds, the profile's own settings apply.
        #expect(Self.modeEvents(start).isEmpty && m.mode == nil && m.configuration.mode == .regions)
        let plugged = m.supplyReported(Self.supply(80, true), now: Self.at(5))
        let event = try #require(Self.modeEvents(plugged).first)
        #expect(Self.modeEvents(plugged).count == 1)
        #expect(event.figures?.modeFrom == "default" && event.figures?.mode == "driving")
        #expect(event.figures?.modeCause == .externalPower && event.figures?.batteryPercent == 80 && event.figures?.externalPower == true)
        #expect(event.time == Self.at(5) && event.fenceID == nil)
        // Before any fix there is no position.
        #expect(!event.hasPosition)
        #expect(m.mode?.name == "driving" && m.configuration.mode == .continuous)
        // The same reading again changes nothing.
        #expect(m.supplyReported(Self.supply(80, true), now: Self.at(6)).isEmpty)

        _ = m.fixReceived(Self.fix(10, 5000), now: Self.at(10))
        let unplugged = m.supplyReported(Self.supply(79, false), now: Self.at(20))
        let parked = try #require(Self.modeEvents(unplugged).first)
        #expect(parked.figures?.mode == "parked" && parked.figures?.modeCause == .externalPower)
        // At the last fix's position.
        #expect(parked.hasPosition && parked.coordinate == Self.fix(10, 5000).coordinate)
        #expect(m.configuration.mode == .regions && m.configuration.maxSleep == .seconds(1800))
        // The battery falls below 20 %: `low` comes before `parked` in the list.
        let low = m.supplyReported(Self.supply(19, false), now: Self.at(30))
        #expect(Self.modeEvents(low).map { $0.figures?.mode } == ["low"])
        #expect(Self.modeEvents(low).first?.figures?.modeCause == .battery)
        #expect(m.configuration.mode == .significantChange)
    }

    @Test func aBatteryThresholdHoldsUntilPassedByTwoPointsTheOtherWay() {
        var (m, _) = Self.machine()
        _ = m.supplyReported(Self.supply(25, false), now: Self.at(1))
        #expect(m.mode?.name == "parked")
        _ = m.supplyReported(Self.supply(19, false), now: Self.at(2))
        #expect(m.mode?.name == "low")
        // 20 and 21 % are load steps of a gauge at the threshold: still low.
        for (k, capacity) in [20, 21, 20, 19, 21].enumerated() {
            #expect(Self.modeEvents(m.supplyReported(Self.supply(capacity, false), now: Self.at(3 + Double(k)))).isEmpty)
            #expect(m.mode?.name == "low")
        }
        // 22 % = 20 + 2: the threshold no longer holds.
        let back = m.supplyReported(Self.supply(22, false), now: Self.at(10))
        #expect(Self.modeEvents(back).map { $0.figures?.mode } == ["parked"])
        // And it holds again only below 20, not at 21.
        #expect(Self.modeEvents(m.supplyReported(Self.supply(21, false), now: Self.at(11))).isEmpty)
        #expect(Self.modeEvents(m.supplyReported(Self.supply(20, false), now: Self.at(12))).isEmpty)
        #expect(m.mode?.name == "parked")
    }

    /// A threshold within two points of 0 or 100 % is released there: charging until full
    /// (`battery_below: 100%`) ends at 100 %, a flat battery's `battery_above: 1%` at 0 %.
    @Test func aThresholdNearFullOrEmptyIsReleasedAtFullOrEmpty() {
        var profile = Self.van()
        profile.modes = [ModeRule(name: "charging", when: ModeCondition(externalPower: true, batteryBelow: 100), mode: .continuous),
                         ModeRule(name: "alive", when: ModeCondition(batteryAbove: 1), mode: .regions)]
        var (m, _) = Self.machine(profile)
        _ = m.supplyReported(Self.supply(99, true), now: Self.at(1))
        #expect(m.mode?.name == "charging")
        _ = m.supplyReported(Self.supply(100, true), now: Self.at(2))
        #expect(m.mode?.name == "alive")
        _ = m.supplyReported(Self.supply(2, false), now: Self.at(3))
        #expect(m.mode?.name == "alive")
        _ = m.supplyReported(Self.supply(0, false), now: Self.at(4))
        #expect(m.mode == nil || m.mode?.name == "default", "\(String(describing: m.mode))")
    }

    @Test func aSwitchMovesTheReceiverAndTheCoarseSourceAsTheNewModeNeeds() {
        var (m, start) = Self.machine()
        // Regions starts the receiver and the coarse source.
        #expect(Self.actions(start).map(\.reason.kind) == [.start, .start])
        _ = m.supplyReported(Self.supply(80, true), now: Self.at(1))
        // Continuous: the coarse source goes off (the receiver is on already).
        #expect(!m.isCoarseOn && m.isReceiverOn)
        let low = m.supplyReported(Self.supply(10, false), now: Self.at(2))
        let lowActions = Self.actions(low)
        #expect(lowActions.contains { if case .gnssOff(let r) = $0 { r.kind == .mode } else { false } })
        #expect(lowActions.contains { if case .coarseOn(let r) = $0 { r.kind == .mode } else { false } })
        #expect(!m.isReceiverOn && m.isCoarseOn)
        // Back on the charger: continuous wakes the receiver at once.
        let plugged = m.supplyReported(Self.supply(11, true), now: Self.at(3))
        #expect(Self.actions(plugged).contains { if case .gnssOn(let r) = $0 { r.kind == .mode } else { false } })
        #expect(m.isReceiverOn && !m.isCoarseOn)
        // The commit with the event comes before the switches.
        if case .commit = plugged.first {} else { Issue.record("the commit is not first: \(plugged)") }
    }

    @Test func fenceStatesCarryOverASwitch() {
        var (m, _) = Self.machine()
        _ = m.supplyReported(Self.supply(80, true), now: Self.at(0))
        var all: [GeoEvent] = []
        // Outside, then inside the 100 m circle, confirmed (continuous keeps the receiver on).
        for (k, d) in [300.0, 290, 40, 30, 20].enumerated() {
            all += MonitorTests.events(m.fixReceived(Self.fix(Double(10 + k), d), now: Self.at(Double(10 + k))))
        }
        #expect(all.map(\.kind) == [.enter])
        // Unplugged, low, plugged again: only mode events; the device is still inside.
        var switches: [GeoEvent] = []
        switches += MonitorTests.events(m.supplyReported(Self.supply(50, false), now: Self.at(20)))
        switches += MonitorTests.events(m.supplyReported(Self.supply(10, false), now: Self.at(21)))
        switches += MonitorTests.events(m.supplyReported(Self.supply(10, true), now: Self.at(22)))
        #expect(switches.map(\.kind) == [.mode, .mode, .mode])
        #expect(switches.map { $0.figures?.mode } == ["parked", "low", "driving"])
        let next = m.fixReceived(Self.fix(30, 25), now: Self.at(30))
        #expect(MonitorTests.events(next).isEmpty)
        #expect(m.engine.insideFenceIDs == ["home"])
    }

    @Test func anInputThatChangesNoModeIsCommittedAtOnce() throws {
        var (m, _) = Self.machine()
        _ = m.supplyReported(Self.supply(80, true), now: Self.at(1))
        // Still plugged in, the battery falls below 20 %: `driving` stays, `low` now holds.
        let effects = m.supplyReported(Self.supply(15, true), now: Self.at(2))
        #expect(Self.modeEvents(effects).isEmpty && m.mode?.name == "driving")
        let state = try #require(effects.compactMap { if case let .commit(c) = $0 { return c.mode } else { return nil } }.first)
        #expect(state.batteryHeld == ["low"] && state.supply == Self.supply(15, true))
        // Killed now, restarted from what was committed: unplugged at 21 %, the hysteresis
        // keeps `low` as it does in the process that was not killed.
        var snapshot = EngineSnapshot()
        snapshot.mode = state
        let (resumed, _) = Self.machine(snapshot: snapshot)
        for var machine in [m, resumed] {
            let unplugged = machine.supplyReported(Self.supply(21, false), now: Self.at(3))
            #expect(Self.modeEvents(unplugged).map { $0.figures?.mode } == ["low"])
        }
    }

    @Test func aRestartResumesInTheStoredModeWithoutAnEvent() throws {
        var (m, _) = Self.machine()
        let effects = m.supplyReported(Self.supply(15, false), now: Self.at(1))
        let state = try #require(effects.compactMap { if case let .commit(c) = $0 { return c.mode } else { return nil } }.first)
        #expect(state.name == "low" && state.batteryHeld == ["low"] && state.supply == Self.supply(15, false))
        var snapshot = EngineSnapshot()
        snapshot.mode = state
        let (resumed, start) = Self.machine(snapshot: snapshot)
        #expect(resumed.mode?.name == "low" && resumed.configuration.mode == .significantChange)
        #expect(Self.modeEvents(start).isEmpty)
        // Significant-change starts with the coarse source only.
        #expect(Self.actions(start).map { if case .coarseOn = $0 { true } else { false } } == [true])
        // The hysteresis' memory came back too: 21 % keeps it low.
        var r = resumed
        #expect(Self.modeEvents(r.supplyReported(Self.supply(21, false), now: Self.at(2))).isEmpty)
        // Restarted on a profile without `modes:`: the stored mode and its inputs are forgotten
        // (stored so), not shown as in effect nor chosen on if modes come back.
        var plain = Monitor(profile: MonitorTests.profile(), snapshot: snapshot)
        let forgotten = plain.start(now: Self.at(3)).compactMap { if case let .commit(c) = $0 { c.mode } else { nil } }
        #expect(forgotten == [ModeState()] && plain.mode == nil)
        var again = Monitor(profile: MonitorTests.profile(), snapshot: EngineSnapshot())
        #expect(again.start(now: Self.at(3)).allSatisfy { if case let .commit(c) = $0 { c.mode == nil } else { true } })
    }

    @Test func aProfileWhoseStoredModeIsGoneChangesAtStart() throws {
        var snapshot = EngineSnapshot()
        snapshot.mode = ModeState(name: "removed", since: Self.at(-100), supply: Self.supply(50, false))
        let (m, start) = Self.machine(snapshot: snapshot)
        let event = try #require(Self.modeEvents(start).first)
        #expect(event.figures?.modeFrom == "removed" && event.figures?.mode == "parked" && event.figures?.modeCause == .start)
        #expect(m.configuration.mode == .regions)
    }

    @Test func windowsSwitchAtTheirEdgesOnTheMachinesDeadline() throws {
        // t0 = 2023-11-14T22:13:20Z (a Tuesday). A night mode 23:00–06:00 UTC, every day.
        var p = Self.van()
        let night = FenceSchedule(windows: [FenceSchedule.Window(days: Set(0...6), start: 23 * 60, end: 6 * 60)])
        p.modes = [ModeRule(name: "night", when: ModeCondition(active: night), mode: .significantChange)]
        var (m, _) = Self.machine(p)
        let opens = UTCTime(millisecondsSince1970: 1_700_002_800_000)  // 23:00:00Z
        #expect(m.nextDeadline.map { $0 <= opens } == true)
        // Step through the deadlines up to the window's opening.
        var events: [GeoEvent] = []
        var guardCount = 0
        while let due = m.nextDeadline, due <= opens, guardCount < 10_000 {
            events += Self.modeEvents(m.deadlineReached(now: due))
            guardCount += 1
        }
        let event = try #require(events.first)
        #expect(event.time == opens && event.figures?.mode == "night" && event.figures?.modeCause == .time)
        #expect(m.configuration.mode == .significantChange)
    }

    /// A tick that comes half an hour after the window opened (a suspended machine): the
    /// change is decided at the edge and dated there, its id the one an on-time tick gives.
    @Test func aLateTickDatesTheChangeAtTheWindowsEdge() throws {
        var p = Self.van()
        let night = FenceSchedule(windows: [FenceSchedule.Window(days: Set(0...6), start: 23 * 60, end: 6 * 60)])
        p.modes = [ModeRule(name: "night", when: ModeCondition(active: night), mode: .significantChange)]
        let opens = UTCTime(millisecondsSince1970: 1_700_002_800_000)  // 23:00:00Z
        var onTime = Self.machine(p).0
        var late = Self.machine(p).0
        var expected: [GeoEvent] = []
        while let due = onTime.nextDeadline, due <= opens { expected += Self.modeEvents(onTime.deadlineReached(now: due)) }
        var events: [GeoEvent] = []
        let tick = opens + .seconds(1800)
        var calls = 0
        while let due = late.nextDeadline, due <= tick, calls < 100 {
            events += Self.modeEvents(late.deadlineReached(now: tick))
            calls += 1
        }
        let event = try #require(events.first)
        #expect(event.time == opens && event.figures?.mode == "night")
        #expect(event.id == expected.first?.id)
        #expect(late.mode?.name == "night" && late.modes.state.since == opens)
    }

    /// A motion word that comes after a window's edge the tick has not reached yet (the word
    /// was ready before the overdue tick, as after a suspend): the edge's change comes first,
    /// dated at the edge with the id an on-time tick gives it, as replay decides it; the word
    /// then decides from the mode the edge chose.
    @Test func anInputAfterAPassedEdgeComesAfterTheEdgesChange() throws {
        var p = Self.van()
        let night = FenceSchedule(windows: [FenceSchedule.Window(days: Set(0...6), start: 23 * 60, end: 6 * 60)])
        p.modes = [ModeRule(name: "night", when: ModeCondition(active: night), mode: .significantChange),
                   ModeRule(name: "parked", when: ModeCondition(moving: false), mode: .regions)]
        let opens = UTCTime(millisecondsSince1970: 1_700_002_800_000)  // 23:00:00Z
        var onTime = Self.machine(p).0
        var late = Self.machine(p).0
        let parkedAt = opens - .seconds(600)
        #expect(Self.modeEvents(onTime.motionReported(.still, now: parkedAt)).map { $0.figures?.mode } == ["parked"])
        #expect(Self.modeEvents(late.motionReported(.still, now: parkedAt)).map { $0.figures?.mode } == ["parked"])
        var expected: [GeoEvent] = []
        while let due = onTime.nextDeadline, due <= opens { expected += Self.modeEvents(onTime.deadlineReached(now: due)) }
        expected += Self.modeEvents(onTime.motionReported(.moving, now: opens + .seconds(30)))
        let events = Self.modeEvents(late.motionReported(.moving, now: opens + .seconds(30)))
        #expect(events.map(\.id) == expected.map(\.id) && !events.isEmpty)
        #expect(events.first?.time == opens && events.first?.figures?.mode == "night" && events.first?.figures?.modeCause == .time)
        #expect(late.mode?.name == "night" && late.modes.state.since == opens)
    }

    @Test func movingAndActivityConditionsFollowTheMotionSource() {
        var p = Self.van()
        p.modes = [ModeRule(name: "hiking", when: ModeCondition(activity: .foot, moving: true), mode: .continuous)]
        var (m, _) = Self.machine(p)
        #expect(Self.modeEvents(m.motionReported(.moving, now: Self.at(1))).isEmpty)
        let foot = m.activitySensed(.foot, now: Self.at(2))
        #expect(Self.modeEvents(foot).map { $0.figures?.mode } == ["hiking"])
        #expect(Self.modeEvents(foot).first?.figures?.modeCause == .activity)
        let still = m.motionReported(.still, now: Self.at(3))
        #expect(Self.modeEvents(still).map { $0.figures?.mode } == ["default"])
        #expect(Self.modeEvents(still).first?.figures?.modeCause == .moving)
    }

    /// A mode in significant-change (which leaves the receiver alone on the sensor's word)
    /// still hears it: parked while still, and left when the sensor says moving.
    @Test func aSignificantChangeModeOnMotionIsLeftWhenTheSensorSaysMoving() {
        var p = Self.van()
        p.modes = [ModeRule(name: "parked", when: ModeCondition(moving: false), mode: .significantChange)]
        var (m, _) = Self.machine(p)
        #expect(Self.modeEvents(m.motionReported(.still, now: Self.at(1))).map { $0.figures?.mode } == ["parked"])
        #expect(m.configuration.mode == .significantChange)
        #expect(Self.modeEvents(m.motionReported(.moving, now: Self.at(60))).map { $0.figures?.mode } == ["default"])
        #expect(m.configuration.mode == .regions)
    }

    /// A restart while driving (`moving: true`): the stored mode stands until the sensor
    /// speaks again; the first fix is no word of the sensor.
    @Test func aRestartKeepsAMovingModeUntilTheSensorSpeaks() throws {
        var p = Self.van()
        p.modes = [ModeRule(name: "driving", when: ModeCondition(moving: true), mode: .continuous)]
        var (m, _) = Self.machine(p)
        let effects = m.motionReported(.moving, now: Self.at(1))
        #expect(Self.modeEvents(effects).map { $0.figures?.mode } == ["driving"])
        let state = try #require(effects.compactMap { if case let .commit(c) = $0 { return c.mode } else { return nil } }.first)
        var snapshot = EngineSnapshot()
        snapshot.mode = state
        var (resumed, start) = Self.machine(p, snapshot: snapshot)
        #expect(Self.modeEvents(start).isEmpty && resumed.mode?.name == "driving")
        #expect(Self.modeEvents(resumed.fixReceived(Self.fix(10, 500), now: Self.at(10))).isEmpty)
        #expect(resumed.mode?.name == "driving")
        #expect(Self.modeEvents(resumed.motionReported(.moving, now: Self.at(11))).isEmpty)
        #expect(Self.modeEvents(resumed.motionReported(.still, now: Self.at(70))).map { $0.figures?.mode } == ["default"])
    }

    /// One input, one commit: the motion word that the movement rules report and that switches
    /// the mode is stored in one transaction with the mode's event and state (two commits let a
    /// kill between them keep the word and lose the mode, which a resumed replay never decided
    /// again). A fix that does both is one commit too.
    @Test func anInputThatSwitchesTheModeIsOneCommit() {
        var p = Self.van()
        p.movement.motionEvents = true
        var driving = ModeRule(name: "driving", when: ModeCondition(moving: true), mode: .continuous)
        driving.mqttLocations = MQTTSettings.Locations.none
        p.modes = [driving]
        var (m, _) = Self.machine(p)
        _ = m.fixReceived(Self.fix(1, 500), now: Self.at(1))
        func commits(_ effects: [Monitor.Effect]) -> [Monitor.Commit] {
            effects.compactMap { if case let .commit(c) = $0 { c } else { nil } }
        }
        let word = commits(m.motionReported(.moving, now: Self.at(2)))
        #expect(word.count == 1)
        #expect(word.first?.events.map(\.kind) == [.moving, .mode])
        #expect(word.first?.mode?.name == "driving")
        // Its own messages follow the mode it came in (the profile's), not the one it chose.
        #expect(word.first?.locations == nil)
        #expect(commits(m.motionReported(.still, now: Self.at(90))).first?.locations == MQTTSettings.Locations.none)
    }

    @Test func aProfileWithoutModesDecidesAsBefore() {
        var (m, _) = Self.machine(MonitorTests.profile())
        #expect(m.supplyReported(Self.supply(5, false), now: Self.at(1)).isEmpty)
        #expect(m.mode == nil && !m.modes.isEnabled && m.modes.state == ModeState())
    }

    @Test func coverageAndContradictionOfConditions() {
        let plugged = ModeCondition(externalPower: true)
        #expect(ModeCondition(externalPower: true, batteryBelow: 20).isCovered(by: plugged))
        #expect(!plugged.isCovered(by: ModeCondition(externalPower: true, batteryBelow: 20)))
        #expect(ModeCondition(batteryBelow: 10).isCovered(by: ModeCondition(batteryBelow: 20)))
        #expect(!ModeCondition(batteryBelow: 30).isCovered(by: ModeCondition(batteryBelow: 20)))
        #expect(ModeCondition(batteryAbove: 90).isCovered(by: ModeCondition(batteryAbove: 80)))
        #expect(plugged.isCovered(by: ModeCondition()))
        #expect(ModeCondition(batteryBelow: 20, batteryAbove: 19).isContradictory)
        #expect(!ModeCondition(batteryBelow: 21, batteryAbove: 19).isContradictory)
    }
}
