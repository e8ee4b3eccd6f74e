import GeomonCore
import Testing

/// Wake on motion (`sources.motion`): a sensor that says still keeps the receiver off with no
/// check-back; moving wakes it at once; GNSS wins over a sensor that lies; a silent sensor
/// counts as absent. Scripted fixes and contexts (PowerPolicyTests' configuration: regions,
/// max_speed 45 m/s, min_sleep 10 s, ttff_hot 2 s, stationary radius 50 m).
@Suite struct PowerMotionTests {
    static func at(_ ms: Int64) -> UTCTime { PowerPolicyTests.at(ms) }
    static func fix(_ ms: Int64, east: Double = 0) -> Fix { PowerPolicyTests.fix(ms, east: east) }
    static let far = FixContext(nearestBoundaryMeters: 2_000, searchRadiusMeters: 30_000)
    static let near = FixContext(nearestBoundaryMeters: 20, searchRadiusMeters: 30_000)
    /// A change pending since 0 with one of its two confirming fixes.
    static var pending: FixContext {
        var c = FixContext(nearestBoundaryMeters: 40, searchRadiusMeters: 30_000, allCertain: false, transitionPending: true)
        c.pendingSince = at(0)
        c.pendingCount = 1
        return c
    }

    /// A policy that took one fix near a boundary (the receiver stays on: `boundary-near`).
    static func onNearABoundary(_ mode: MonitoringMode = .regions) -> PowerPolicy {
        var p = PowerPolicyTests.started(PowerPolicyTests.config(mode))
        _ = p.screen(Self.fix(0))
        _ = p.fixReceived(Self.fix(0), context: near, now: Self.at(0))
        return p
    }

    @Test func stillSwitchesTheReceiverOffWithNoWakeAndMovingWakesItAtOnce() {
        var p = Self.onNearABoundary()
        #expect(p.isGNSSOn)
        let off = p.motionReported(.still, now: Self.at(1_000))
        #expect(off == [.gnssOff(PowerReason(.motionStill))])
        #expect(!p.isGNSSOn)
        // No stationary check, no scheduled wake: nothing is due however long it stands.
        #expect(p.nextDeadline == nil)
        #expect(p.deadlineReached(now: Self.at(7 * 86_400_000)) == [])
        let on = p.motionReported(.moving, now: Self.at(3_600_000))
        #expect(on == [.gnssOn(PowerReason(.motion, ttff: .seconds(2)))])
        #expect(p.isGNSSOn)
        #expect(p.motion == .moving)
    }

    /// `reportLocation` without a fresh fix: whatever keeps the receiver off (a sleep, the
    /// motion sensor), it is woken once (`requested`); when on already, nothing.
    @Test func aRequestedFixWakesTheReceiverWhateverKeptItOff() {
        var p = PowerPolicyTests.started(PowerPolicyTests.config())
        _ = p.screen(Self.fix(0))
        _ = p.fixReceived(Self.fix(0), context: Self.far, now: Self.at(0))
        #expect(!p.isGNSSOn)
        let asleep = p.wakeRequested(now: Self.at(5_000))
        #expect(asleep == [.gnssOn(PowerReason(.requested, ttff: .seconds(2)))])
        #expect(p.isGNSSOn)
        #expect(p.wakeRequested(now: Self.at(5_500)) == [])
        var still = Self.onNearABoundary()
        _ = still.motionReported(.still, now: Self.at(1_000))
        #expect(!still.isGNSSOn)
        #expect(still.wakeRequested(now: Self.at(60_000)).first?.reason.kind == .requested)
        #expect(still.isGNSSOn)
    }

    @Test func stillWaitsForAPendingChangeToBeConfirmed() {
        var p = PowerPolicyTests.started(PowerPolicyTests.config())
        let pending = Self.pending
        _ = p.screen(Self.fix(0))
        _ = p.fixReceived(Self.fix(0), context: pending, now: Self.at(0))
        // The change still needs its confirming fix: the receiver stays on for it.
        #expect(p.motionReported(.still, now: Self.at(500)) == [])
        #expect(p.isGNSSOn)
        // The fix that confirms it settles the engine: off, with no wake.
        _ = p.screen(Self.fix(1_000))
        let actions = p.fixReceived(Self.fix(1_000), context: Self.near, now: Self.at(1_000))
        #expect(actions.first?.reason.kind == .motionStill)
        #expect(!p.isGNSSOn && p.nextDeadline == nil)
    }

    @Test func stillCancelsAPlannedWakeAndMovingLeavesABoundedSleepAlone() {
        var p = PowerPolicyTests.started(PowerPolicyTests.config())
        _ = p.screen(Self.fix(0))
        let sleep = p.fixReceived(Self.fix(0), context: Self.far, now: Self.at(0))
        let planned = PowerPolicyTests.wake(sleep)
        #expect(planned != nil && p.nextDeadline == planned)
        // Moving does not bring a wake forward that the reachability bounds planned: they
        // already assume the device may move.
        #expect(p.motionReported(.moving, now: Self.at(1_000)) == [])
        #expect(p.nextDeadline == planned)
        // Still drops it; the receiver, off already, stays off for the sensor.
        #expect(p.motionReported(.still, now: Self.at(2_000)) == [.gnssOff(PowerReason(.motionStill))])
        #expect(p.nextDeadline == nil)
        // Said again, it changes nothing.
        #expect(p.motionReported(.still, now: Self.at(2_500)) == [])
        // Moving resumes what the sleep had left (the device starts from where it stood, at
        // rest): the wake comes that long after the movement, with the reason `motion`.
        let resumed = p.motionReported(.moving, now: Self.at(60_000))
        #expect(resumed.first?.reason.kind == .motion)
        #expect(PowerPolicyTests.wake(resumed) == Self.at(60_000) + (planned! - Self.at(2_000)))
        #expect(!p.isGNSSOn)
    }

    /// A stop longer than `hot_window`: the resumed sleep's wake starts warm, so it comes
    /// earlier by the difference (`ttff_warm − ttff_hot`) and its first fix is still due by
    /// the horizon the sleep was planned to.
    @Test func aSleepResumedAfterAStopLongerThanTheHotWindowWakesForAWarmStart() {
        let farther = FixContext(nearestBoundaryMeters: 20_000, searchRadiusMeters: 30_000)
        var p = PowerPolicyTests.started(PowerPolicyTests.config())
        let hot = p.configuration.ttffHot, warm = p.configuration.ttffWarm
        #expect(warm > hot)
        _ = p.screen(Self.fix(0))
        let planned = PowerPolicyTests.wake(p.fixReceived(Self.fix(0), context: farther, now: Self.at(0)))!
        _ = p.motionReported(.still, now: Self.at(2_000))
        let left = planned - Self.at(2_000)
        let moving = Self.at(2_000) + p.configuration.hotWindow + .seconds(60)
        let resumed = p.motionReported(.moving, now: moving)
        #expect(left > warm + .seconds(60))
        #expect(PowerPolicyTests.wake(resumed) == moving + left - (warm - hot))
        // Within the hot window the sleep goes on for all it had left.
        var q = PowerPolicyTests.started(PowerPolicyTests.config())
        _ = q.screen(Self.fix(0))
        _ = q.fixReceived(Self.fix(0), context: farther, now: Self.at(0))
        _ = q.motionReported(.still, now: Self.at(2_000))
        #expect(PowerPolicyTests.wake(q.motionReported(.moving, now: Self.at(60_000))) == Self.at(60_000) + left)
    }

    /// The still sensor took over at a fix whose planned sleep already woke for a warm start
    /// (longer than `hot_window`): on `moving` the sleep goes on for all it had left, not
    /// shortened for a warm start a second time.
    @Test func aSleepPlannedWarmAndKeptByTheStillSensorIsNotShortenedTwice() {
        let configuration = PowerPolicyTests.config { $0.hotWindow = .seconds(300) }
        let farther = FixContext(nearestBoundaryMeters: 20_000, searchRadiusMeters: 30_000)
        // The same fix without a sensor: the sleep planned.
        var twin = PowerPolicyTests.started(configuration)
        _ = twin.screen(Self.fix(0))
        let planned = PowerPolicyTests.wake(twin.fixReceived(Self.fix(0), context: farther, now: Self.at(0)))!
        #expect(planned - Self.at(0) > .seconds(300))
        // Still before the first fix: the fix is decided while still (off, no wake).
        var p = PowerPolicyTests.started(configuration)
        _ = p.motionReported(.still, now: Self.at(0))
        _ = p.screen(Self.fix(0))
        #expect(p.fixReceived(Self.fix(0), context: farther, now: Self.at(0)).contains(.gnssOff(PowerReason(.motionStill, distanceMeters: 20_000, accuracyMeters: 5))))
        #expect(p.nextDeadline == nil)
        let moving = Self.at(2_000_000)
        #expect(PowerPolicyTests.wake(p.motionReported(.moving, now: moving)) == moving + (planned - Self.at(0)))
    }

    @Test func aStopUndoesASleepThatTheCourseBoundedAndAFasterActivityOneOnSlowerBounds() {
        // 20 m/s east, the nearest boundary 300 m away and the way ahead ever clearer: the
        // heading bound plans the sleep. A stop undoes the course it assumed (the device may
        // set off any way): on moving the receiver is woken at once, not the sleep resumed.
        var p = PowerPolicyTests.started(PowerPolicyTests.config())
        var ahead = FixContext(nearestBoundaryMeters: 300, searchRadiusMeters: 30_000)
        ahead.courseClearance = CourseClearance(stepMeters: 100, clearanceMeters: (0..<20).map { 300 + 100 * Double($0) })
        let f = PowerPolicyTests.fix(0, speed: 20, course: 90)
        _ = p.screen(f)
        let sleep = p.fixReceived(f, context: ahead, now: f.time)
        let bounds = sleep.compactMap { action -> PowerReason.SleepBound? in
            if case let .wakeAt(_, reason) = action { return reason.bound }
            return nil
        }
        #expect(bounds == [.heading])
        _ = p.motionReported(.still, now: Self.at(5_000))
        #expect(p.motionReported(.moving, now: Self.at(60_000)) == [.gnssOn(PowerReason(.motion, ttff: .seconds(2)))])
        // The same sleep on the kinematic bound (no course): resumed, as the test above.
        var k = PowerPolicyTests.started(PowerPolicyTests.config())
        let g = PowerPolicyTests.fix(0, speed: 5)
        _ = k.screen(g)
        _ = k.fixReceived(g, context: ahead, now: g.time)
        _ = k.motionReported(.still, now: Self.at(5_000))
        #expect(k.motionReported(.moving, now: Self.at(60_000)).first?.reason.kind == .motion)
        #expect(!k.isGNSSOn)
        // Planned on foot's bounds, kept by still; a vehicle sensed while still: on moving the
        // receiver is woken, not the foot-planned sleep resumed.
        var w = PowerPolicyTests.started(PowerPolicyTests.config())
        _ = w.activitySensed(.foot, now: Self.at(0))
        let h = PowerPolicyTests.fix(0, speed: 1)
        _ = w.screen(h)
        _ = w.fixReceived(h, context: ahead, now: h.time)
        _ = w.motionReported(.still, now: Self.at(5_000))
        _ = w.activitySensed(.vehicle, now: Self.at(30_000))
        #expect(w.motionReported(.moving, now: Self.at(60_000)) == [.gnssOn(PowerReason(.motion, ttff: .seconds(2)))])
    }

    @Test func gnssWinsOverASensorThatSaysStillWhileFixesMove() {
        var p = PowerPolicyTests.started(PowerPolicyTests.config())
        let pending = Self.pending
        _ = p.screen(Self.fix(0))
        _ = p.fixReceived(Self.fix(0), context: pending, now: Self.at(0))
        #expect(p.motionReported(.still, now: Self.at(100)) == [])
        #expect(p.motion == .still)
        // 70 m on within a second (farther than the 50 m radius and the 5 m accuracy): moving.
        _ = p.screen(Self.fix(1_000, east: 70))
        let actions = p.fixReceived(Self.fix(1_000, east: 70), context: Self.near, now: Self.at(1_000))
        #expect(actions.allSatisfy { $0.reason.kind != .motionStill })
        #expect(p.motion == nil)
        // Its next "still" is not believed until it has said "moving" again.
        #expect(p.motionReported(.still, now: Self.at(2_000)) == [])
        #expect(p.isGNSSOn)
        _ = p.motionReported(.moving, now: Self.at(3_000))
        _ = p.motionReported(.still, now: Self.at(4_000))
        #expect(p.motion == .still)
    }

    @Test func aSensorThatGoesSilentCountsAsAbsentAndTheReceiverWakes() {
        var p = Self.onNearABoundary()
        _ = p.motionReported(.still, now: Self.at(1_000))
        #expect(!p.isGNSSOn)
        let lost = p.motionReported(nil, now: Self.at(600_000))
        #expect(lost.first?.reason.kind == .motionLost)
        #expect(p.isGNSSOn && p.motion == nil)
        // Silence while moving changes nothing.
        var q = Self.onNearABoundary()
        _ = q.motionReported(.moving, now: Self.at(1_000))
        #expect(q.motionReported(nil, now: Self.at(2_000)) == [])
    }

    @Test func continuousTrackingStopsWhileStillAndAlwaysOnIgnoresTheSensor() {
        var p = Self.onNearABoundary(.continuous)
        #expect(p.motionReported(.still, now: Self.at(1_000)).first?.reason.kind == .motionStill)
        var forced = PowerPolicyTests.started(PowerPolicyTests.config { $0.alwaysOn = true })
        _ = forced.screen(Self.fix(0))
        _ = forced.fixReceived(Self.fix(0), context: Self.near, now: Self.at(0))
        #expect(forced.motionReported(.still, now: Self.at(1_000)) == [])
        #expect(forced.isGNSSOn)
    }
}
