import GeomonCore
import Testing

/// Wake on motion (`sources.motion`): a sensor that says still keeps the receiver off until a
/// boundary could have been reached at `creep_speed` (with `creep_speed: 0`, for good); moving
/// wakes it at once; GNSS wins over a sensor that lies; a silent sensor counts as absent.
/// Scripted fixes and contexts (PowerPolicyTests' configuration: regions, max_speed 45 m/s,
/// min_sleep 10 s, ttff_hot 2 s, stationary radius 50 m; `trusting`: creep_speed 0).
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

    /// PowerPolicyTests' configuration with `creep_speed: 0`: still is trusted for good.
    static func trusting(_ mode: MonitoringMode = .regions) -> PowerConfiguration {
        PowerPolicyTests.config(mode) { $0.stillCreepMetersPerSecond = 0 }
    }

    /// A policy that took one fix near a boundary (the receiver stays on: `boundary-near`).
    static func onNearABoundary(_ mode: MonitoringMode = .regions, _ configuration: PowerConfiguration? = nil) -> PowerPolicy {
        var p = PowerPolicyTests.started(configuration ?? PowerPolicyTests.config(mode))
        _ = p.screen(Self.fix(0))
        _ = p.fixReceived(Self.fix(0), context: near, now: Self.at(0))
        return p
    }

    @Test func stillTrustedSwitchesTheReceiverOffWithNoWakeAndMovingWakesItAtOnce() {
        var p = Self.onNearABoundary(.regions, Self.trusting())
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
        var p = PowerPolicyTests.started(Self.trusting())
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
        var p = PowerPolicyTests.started(Self.trusting())
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
    /// the horizon the sleep was planned to (`creep_speed: 0`: no drift to allow for).
    @Test func aSleepResumedAfterAStopLongerThanTheHotWindowWakesForAWarmStart() {
        let farther = FixContext(nearestBoundaryMeters: 20_000, searchRadiusMeters: 30_000)
        var p = PowerPolicyTests.started(Self.trusting())
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
        var q = PowerPolicyTests.started(Self.trusting())
        _ = q.screen(Self.fix(0))
        _ = q.fixReceived(Self.fix(0), context: farther, now: Self.at(0))
        _ = q.motionReported(.still, now: Self.at(2_000))
        #expect(PowerPolicyTests.wake(q.motionReported(.moving, now: Self.at(60_000))) == Self.at(60_000) + left)
    }

    /// The still sensor took over at a fix whose planned sleep already woke for a warm start
    /// (longer than `hot_window`): on `moving` the sleep goes on for all it had left, not
    /// shortened for a warm start a second time.
    @Test func aSleepPlannedWarmAndKeptByTheStillSensorIsNotShortenedTwice() {
        let configuration = PowerPolicyTests.config {
            $0.hotWindow = .seconds(300)
            $0.stillCreepMetersPerSecond = 0
        }
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
        // The sensor says still 3 s into a stop (`still_after: 3s`): a word 5 s after a fix at
        // speed, with the usual minute, would contradict that fix and not be believed
        // (`aStillWordWhileTheLastFixReportsSpeedIsNotBelieved`).
        let quick = PowerPolicyTests.config { $0.stillAfter = .seconds(3) }
        var p = PowerPolicyTests.started(quick)
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
        var k = PowerPolicyTests.started(quick)
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

    /// A policy in a still check-back's listen: a fix 2,000 m from the nearest boundary at 0,
    /// still from 1 s, woken at `checkAt`; its listen times out at `timeout`.
    static func checkingBack() -> (PowerPolicy, checkAt: UTCTime, timeout: UTCTime) {
        var p = PowerPolicyTests.started(PowerPolicyTests.config())
        _ = p.screen(Self.fix(0))
        _ = p.fixReceived(Self.fix(0), context: Self.far, now: Self.at(0))
        _ = p.motionReported(.still, now: Self.at(0))
        let checkAt = p.nextDeadline!
        _ = p.deadlineReached(now: checkAt)
        return (p, checkAt, p.nextDeadline!)
    }

    /// An accelerometer feels changes of velocity, not a steady drift: a boat dragging its
    /// anchor says still all along. With `creep_speed` 0.5 m/s, 2,000 m from the nearest
    /// boundary (accuracy 5 m, wake margin 20 m) a boundary is within reach after
    /// 1,975 / 0.5 = 3,950 s (the sensor says still as the fix comes); the check-back wakes a
    /// hot start (within `hot_window`) before.
    /// A check-back fix within the stationary radius keeps still, with the next check from it;
    /// one that drifted beyond it is GNSS winning (the policy without a sensor); a check-back
    /// that gets no fix waits as long again as has passed since the last fix.
    @Test func stillChecksBackWhenABoundaryCouldHaveBeenReachedAtTheCreepSpeed() {
        var p = PowerPolicyTests.started(PowerPolicyTests.config())
        let c = p.configuration
        #expect(c.stillCreepMetersPerSecond == 0.5)
        _ = p.screen(Self.fix(0))
        _ = p.fixReceived(Self.fix(0), context: Self.far, now: Self.at(0))
        let off = p.motionReported(.still, now: Self.at(0))
        let horizon = Self.at(3_950_000)
        #expect(c.hotWindow > .seconds(3_950))
        #expect(PowerPolicyTests.wake(off) == horizon - c.ttffHot)
        #expect(off.first == .gnssOff(PowerReason(.motionStill, sleep: horizon - c.ttffHot - Self.at(0))))
        let on = p.deadlineReached(now: horizon - c.ttffHot)
        #expect(on == [.gnssOn(PowerReason(.stillCheck, ttff: c.ttffHot))])
        // 10 m from where it stood, 500 m nearer a boundary: still holds, the next check-back
        // from this fix (1,475 m at 0.5 m/s).
        let check = Self.fix(3_950_000, east: 10)
        _ = p.screen(check)
        let near = FixContext(nearestBoundaryMeters: 1_500, searchRadiusMeters: 30_000)
        let again = p.fixReceived(check, context: near, now: check.time)
        #expect(again.first?.reason.kind == .motionStill)
        #expect(PowerPolicyTests.wake(again) == check.time + .seconds(2_950) - c.ttffHot)
        #expect(p.motion == .still)
        // The next one finds it 300 m off: it drifts, and GNSS decides (a sleep on the bounds).
        _ = p.deadlineReached(now: PowerPolicyTests.wake(again)!)
        let drifted = Self.fix(6_900_000, east: 300)
        _ = p.screen(drifted)
        let moved = p.fixReceived(drifted, context: near, now: drifted.time)
        #expect(p.motion != .still)
        #expect(moved.allSatisfy { $0.reason.kind != .motionStill })
        // In a garage: the check-back gets no fix; the next waits as long again.
        let (garage, _, timeout) = Self.checkingBack()
        var q = garage
        let waited = q.deadlineReached(now: timeout)
        #expect(waited.first == .gnssOff(PowerReason(.motionStill, sleep: timeout - Self.at(0))))
        #expect(q.nextDeadline == timeout + (timeout - Self.at(0)))
        // No fences (nothing within any drift): no check-back at all.
        var r = PowerPolicyTests.started(PowerPolicyTests.config())
        var none = FixContext(nearestBoundaryMeters: nil, searchRadiusMeters: 30_000)
        none.boundaryBeyondSearchMeters = .infinity
        _ = r.screen(Self.fix(0))
        _ = r.fixReceived(Self.fix(0), context: none, now: Self.at(0))
        _ = r.motionReported(.still, now: Self.at(1_000))
        #expect(r.nextDeadline == nil)
    }

    /// A still word while the receiver sleeps comes after the device may have gone on at
    /// `max_speed` from the last fix until `still_after` (60 s) before the word: 20 km from a
    /// boundary at 0, the word at 430 s leaves 19,975 − 45 × 370 = 3,325 m, 6,650 s of drift
    /// from 370 s. The check-back's fix shows where it stands, 16.65 km on and 3,400 m from a
    /// boundary: still holds (no anchor before it), and the next check-back counts from it.
    @Test func aStillWordDuringASleepCountsTheWayTheDeviceMayHaveGoneSince() {
        var p = PowerPolicyTests.started(PowerPolicyTests.config())
        let ttff = p.configuration.ttffHot
        _ = p.screen(Self.fix(0))
        let planned = PowerPolicyTests.wake(p.fixReceived(Self.fix(0), context: FixContext(nearestBoundaryMeters: 20_000, searchRadiusMeters: 30_000), now: Self.at(0)))
        #expect(planned.map { $0 > Self.at(430_000) } == true)
        let off = p.motionReported(.still, now: Self.at(430_000))
        #expect(p.configuration.stillAfter == .seconds(60))
        #expect(PowerPolicyTests.wake(off) == Self.at(7_020_000) - ttff)
        _ = p.deadlineReached(now: Self.at(7_020_000) - ttff)
        let there = Self.fix(7_020_000, east: 16_650)
        _ = p.screen(there)
        let next = p.fixReceived(there, context: FixContext(nearestBoundaryMeters: 3_400, searchRadiusMeters: 30_000), now: there.time)
        #expect(p.motion == .still)
        #expect(PowerPolicyTests.wake(next) == there.time + .seconds(6_750) - ttff)
    }

    /// A bump in a garage (moving, a listen without a fix, still again a minute later) is no
    /// reason to check back every `min_sleep` again: the check-back after it that gets no fix
    /// waits as long as has passed since the last usable fix.
    @Test func aBumpInAGarageKeepsTheCheckBacksBackedOff() throws {
        let (garage, _, timeout) = Self.checkingBack()
        var p = garage
        _ = p.deadlineReached(now: timeout)
        let bump = timeout + .seconds(100)
        #expect(p.motionReported(.moving, now: bump).first?.reason.kind == .motion)
        _ = p.deadlineReached(now: try #require(p.nextDeadline))
        #expect(!p.isGNSSOn)
        let still = bump + .seconds(60)
        _ = p.motionReported(.still, now: still)
        let check = try #require(p.nextDeadline)
        _ = p.deadlineReached(now: check)
        #expect(p.isGNSSOn)
        let listenEnd = try #require(p.nextDeadline)
        let off = p.deadlineReached(now: listenEnd)
        #expect(off.first?.reason.kind == .motionStill)
        #expect(try #require(p.nextDeadline) - listenEnd >= listenEnd - Self.at(0))
    }

    /// Continuous tracking in a tunnel (`outage: wait`: on, no fix for 15 minutes), then still:
    /// the fix at the tunnel's entrance is no anchor, and the drive since it leaves no
    /// clearance: the receiver checks back after `min_sleep`.
    @Test func aFixBeforeTheDeviceStoppedIsNoAnchorEvenWithTheReceiverOn() {
        var p = PowerPolicyTests.started(PowerPolicyTests.config(.continuous))
        _ = p.screen(Self.fix(0))
        _ = p.fixReceived(Self.fix(0), context: Self.far, now: Self.at(0))
        #expect(p.isGNSSOn)
        let off = p.motionReported(.still, now: Self.at(900_000))
        #expect(PowerPolicyTests.wake(off) == Self.at(910_000))
    }

    /// Before any usable fix the sensor's still changes nothing: nothing bounds the drift and
    /// the fence states may be unknown. A fix too poor to use is no anchor either: the first
    /// usable fix, 150 m from a poor one, is where the device stands.
    @Test func stillPlansFromTheFirstUsableFix() {
        var p = PowerPolicyTests.started(PowerPolicyTests.config())
        let poor = PowerPolicyTests.fix(0, east: 150, acc: 80)
        _ = p.screen(poor)
        _ = p.fixReceived(poor, context: Self.far, now: poor.time)
        #expect(p.isGNSSOn)
        #expect(p.motionReported(.still, now: Self.at(1_000)) == [])
        #expect(p.isGNSSOn && p.nextDeadline != nil)
        let again = PowerPolicyTests.fix(2_000, east: 150, acc: 80)
        _ = p.screen(again)
        _ = p.fixReceived(again, context: Self.far, now: again.time)
        #expect(p.isGNSSOn && p.nextDeadline != nil)
        let good = Self.fix(3_000)
        _ = p.screen(good)
        let off = p.fixReceived(good, context: Self.far, now: good.time)
        #expect(p.motion == .still)
        #expect(off.first?.reason.kind == .motionStill)
        #expect(PowerPolicyTests.wake(off) == good.time + .seconds(3_950) - p.configuration.ttffHot)
    }

    /// A check-back in a car park: its fixes are worse than `min_accuracy` (50 m). They do not
    /// prolong the listen nor end the check-back at once: at the listen's timeout from the
    /// switch-on it is a check-back without a fix (the next as long again after the last
    /// usable fix), not a new check-back `min_sleep` later over and over. Its first fix alone
    /// times the hot start (`measuredTTFF`): the ones after it are no starts.
    @Test func aCheckBackWithFixesTooPoorToTellEndsAtItsTimeout() {
        let (parked, checkAt, timeout) = Self.checkingBack()
        var p = parked
        #expect(timeout > checkAt)
        // The machine finds no side certain from a fix too poor to use.
        var unsure = Self.far
        unsure.allCertain = false
        for k in 1...5 {
            let poor = PowerPolicyTests.fix(checkAt.millisecondsSince1970 - Self.at(0).millisecondsSince1970 + Int64(k) * 1_000, acc: 80)
            _ = p.screen(poor)
            #expect(p.fixReceived(poor, context: unsure, now: poor.time).isEmpty)
            #expect(p.isGNSSOn && p.nextDeadline == timeout)
        }
        #expect(p.ttffSampleCount == 1 && p.measuredTTFF == .seconds(1))
        let off = p.deadlineReached(now: timeout)
        #expect(off.first == .gnssOff(PowerReason(.motionStill, sleep: timeout - Self.at(0))))
    }

    /// A fence outside its `active:` windows counts as at least as far as the drift goes until
    /// it opens (`FixContext.creepDistanceMeters`), not as far as `max_speed` goes: 100 m off,
    /// opening in an hour, the check-back is due after (100 − 5 − 20) / 0.5 = 150 s.
    @Test func aFenceAboutToOpenIsCheckedFromTheDriftNotTheMaxSpeed() {
        var p = PowerPolicyTests.started(PowerPolicyTests.config())
        var context = FixContext(nearestBoundaryMeters: nil, searchRadiusMeters: 30_000)
        context.creepDistanceMeters = 100
        _ = p.screen(Self.fix(0))
        _ = p.fixReceived(Self.fix(0), context: context, now: Self.at(0))
        let off = p.motionReported(.still, now: Self.at(0))
        #expect(PowerPolicyTests.wake(off) == Self.at(150_000) - p.configuration.ttffHot)
    }

    /// A bounded sleep kept by the still sensor resumes on `moving` shorter by the time
    /// `max_speed` (45 m/s) takes to cover the drift since the last fix: 0.5 m/s for 900 s is
    /// 450 m, 10 s.
    @Test func aResumedSleepAllowsForTheDriftWhileStill() {
        var p = PowerPolicyTests.started(PowerPolicyTests.config())
        _ = p.screen(Self.fix(0))
        let planned = PowerPolicyTests.wake(p.fixReceived(Self.fix(0), context: Self.far, now: Self.at(0)))!
        _ = p.motionReported(.still, now: Self.at(0))
        let left = planned - Self.at(0)
        let resumed = p.motionReported(.moving, now: Self.at(900_000))
        #expect(PowerPolicyTests.wake(resumed) == Self.at(900_000) + left - .seconds(10))
    }

    /// Within reach of a boundary already, with `max_latency` 30 s: the first fix must come
    /// within what the budget gives a change starting now (30 s less the confirming fix's 1 s),
    /// and before an excursion of 2 × 10 m hysteresis fits at 0.5 m/s (40 s): 29 s, the wake a
    /// hot start before.
    @Test func stillWithinReachOfABoundaryIsCheckedWithinTheLatencyBudget() {
        var p = PowerPolicyTests.started(PowerPolicyTests.config { $0.maxLatency = .seconds(30) })
        _ = p.screen(Self.fix(0))
        _ = p.fixReceived(Self.fix(0), context: Self.near, now: Self.at(0))
        let off = p.motionReported(.still, now: Self.at(1_000))
        #expect(PowerPolicyTests.wake(off) == Self.at(29_000) - .seconds(2))
        // Without a budget the floor is `min_sleep` from now.
        var q = Self.onNearABoundary()
        #expect(PowerPolicyTests.wake(q.motionReported(.still, now: Self.at(1_000))) == Self.at(11_000))
    }

    /// An accelerometer feels changes of velocity, not velocity: a train running smoothly says
    /// still. A still word that comes while the receiver's last usable fix, within `still_after`
    /// before it, reports more than `creep_speed` plus the speed error is not believed (GNSS
    /// wins at the word), until the sensor has said moving again.
    @Test func aStillWordWhileTheLastFixReportsSpeedIsNotBelieved() {
        var p = PowerPolicyTests.started(PowerPolicyTests.config())
        // A train at 30 m/s past a boundary 20 m off: the receiver stays on, a fix a second.
        for s in Int64(0)...60 {
            let fix = PowerPolicyTests.fix(s * 1_000, east: Double(s) * 30, speed: 30)
            _ = p.screen(fix)
            _ = p.fixReceived(fix, context: Self.near, now: Self.at(s * 1_000))
        }
        #expect(p.isGNSSOn)
        // 60 s without a felt change of velocity: the word, a second after a fix at 30 m/s.
        #expect(p.motionReported(.still, now: Self.at(61_000)) == [])
        #expect(p.isGNSSOn && p.motion != .still && p.stillDistrusted)
        // Only a word of moving makes the next still believable; at the next station the
        // last fix reports 0.3 m/s (under 0.5 + 1 m/s): that still is believed.
        _ = p.motionReported(.moving, now: Self.at(200_000))
        #expect(!p.stillDistrusted)
        let stop = PowerPolicyTests.fix(300_000, east: 9_000, speed: 0.3)
        _ = p.screen(stop)
        _ = p.fixReceived(stop, context: Self.far, now: Self.at(300_000))
        #expect(p.motionReported(.still, now: Self.at(301_000)).contains { $0.reason.kind == .motionStill })
        #expect(p.motion == .still)
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
        // A reload that keeps the sensor keeps the verdict.
        var reloaded = PowerPolicyTests.started(PowerPolicyTests.config())
        reloaded.keepLearned(from: p, sameReceiver: false, sameSensor: true)
        _ = reloaded.screen(Self.fix(0))
        _ = reloaded.fixReceived(Self.fix(0), context: Self.near, now: Self.at(0))
        #expect(reloaded.motionReported(.still, now: Self.at(1_000)) == [] && reloaded.motion == nil && reloaded.isGNSSOn)
        _ = reloaded.motionReported(.moving, now: Self.at(2_000))
        _ = reloaded.motionReported(.still, now: Self.at(3_000))
        #expect(reloaded.motion == .still)
        // Another sensor starts believed, whatever the store said of the old one.
        var replaced = PowerPolicy(configuration: PowerPolicyTests.config(), assumptions: p.assumptions)
        #expect(replaced.stillDistrusted)
        replaced.keepLearned(from: p, sameReceiver: false, sameSensor: false)
        #expect(!replaced.stillDistrusted)
        // A restart: the verdict is part of the watch's state, stored with the next commit.
        var stored = p
        #expect(stored.takeAssumptions()?.stillDistrusted == true)
        // It names the sensor it is on: a restart on another one (an edited profile) believes
        // that one; a verdict stored without it (an older database) holds for any.
        let sensor = { (name: String) in PowerPolicyTests.config { $0.motionSensor = "command\t\t\(name)" } }
        var shown = PowerPolicyTests.started(sensor("a"))
        _ = shown.screen(Self.fix(0))
        _ = shown.fixReceived(Self.fix(0), context: pending, now: Self.at(0))
        _ = shown.motionReported(.still, now: Self.at(100))
        _ = shown.screen(Self.fix(1_000, east: 70))
        _ = shown.fixReceived(Self.fix(1_000, east: 70), context: Self.near, now: Self.at(1_000))
        #expect(shown.assumptions.stillDistrusted && shown.assumptions.stillDistrustedSensor == "command\t\ta")
        #expect(PowerPolicy(configuration: sensor("a"), assumptions: shown.assumptions).stillDistrusted)
        var other = PowerPolicy(configuration: sensor("b"), assumptions: shown.assumptions)
        #expect(!other.stillDistrusted && other.takeAssumptions()?.stillDistrustedSensor == nil)
        #expect(PowerPolicy(configuration: sensor("b"), assumptions: AssumptionState(stillDistrusted: true)).stillDistrusted)
        var restarted = PowerPolicyTests.started(PowerPolicyTests.config(), assumptions: p.assumptions)
        _ = restarted.screen(Self.fix(0))
        _ = restarted.fixReceived(Self.fix(0), context: Self.near, now: Self.at(0))
        #expect(restarted.motionReported(.still, now: Self.at(1_000)) == [] && restarted.motion == nil && restarted.isGNSSOn)
        // Its next "still" is not believed until it has said "moving" again: silence (the
        // sensor stale, a restart's command not heard from) is not that word.
        #expect(p.motionReported(.still, now: Self.at(2_000)) == [])
        #expect(p.isGNSSOn)
        _ = p.motionReported(nil, now: Self.at(2_200))
        #expect(p.motionReported(.still, now: Self.at(2_400)) == [] && p.stillDistrusted)
        #expect(p.isGNSSOn && p.motion == nil)
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
