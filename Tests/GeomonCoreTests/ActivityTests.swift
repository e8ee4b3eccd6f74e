import GeomonCore
import GeomonFormat
import Testing

/// Activities name the planning's bounds; a fix that breaks them is reported once, counted, and
/// widens them for the rest of the trip; a sensed activity wins over the declared one and is
/// covered for its latency. Figures are computed by hand in the comments.
@Suite struct ActivityTests {
    static func profile(_ activity: Activity, _ edit: (inout Profile) -> Void = { _ in }) -> Profile {
        var p = Profile(name: "t", mode: .regions)
        p.sources.gnss = GNSSSourceSettings()
        p.policy.activity = activity
        p.policy.wakeMarginMeters = 20
        p.policy.minSleep = .seconds(10)
        p.policy.maxSleep = .seconds(600)
        p.policy.receiver.ttffHot = .seconds(2)
        p.policy.maxLatency = .zero
        edit(&p)
        return p
    }

    static func started(_ profile: Profile) -> PowerPolicy {
        var p = PowerPolicy(configuration: PowerConfiguration(profile: profile))
        _ = p.start(now: PowerPolicyTests.t0)
        return p
    }

    // MARK: bounds

    @Test(arguments: [
        (Activity.foot, 4.0, 1.0), (.bicycle, 20, 1), (.vehicle, 45, 1), (.boat, 13, 0.5), (.air, 350, 10), (.any, 30, 1),
    ])
    func eachActivityNamesItsBounds(_ activity: Activity, _ speed: Double, _ acceleration: Double) {
        let c = PowerConfiguration(profile: Self.profile(activity))
        #expect(c.maxSpeedMetersPerSecond == speed)
        #expect(c.maxAccelerationMetersPerSecondSquared == acceleration)
        #expect(c.declaredActivity == activity)
    }

    @Test func maxSpeedAndMaxAccelerationOverrideTheActivity() {
        let p = Self.profile(.vehicle) {
            $0.policy.maxSpeedMetersPerSecond = 36.1
            $0.policy.maxSpeedSet = true
        }
        #expect(p.policy.plannedBounds == MotionBounds(maxSpeedMetersPerSecond: 36.1, maxAccelerationMetersPerSecondSquared: 1))
        #expect(p.policy.plannedBoundsText == "planned for vehicle (policy.activity; max_speed set): max_speed 36.1 m/s, max_acceleration 1 m/s²")
        // The override is the declared activity's; a sensed one keeps its own figures.
        let c = PowerConfiguration(profile: p)
        #expect(c.bounds(for: .vehicle).maxSpeedMetersPerSecond == 36.1)
        #expect(c.bounds(for: .foot).maxSpeedMetersPerSecond == 4)
        #expect(c.bounds(for: .any).maxSpeedMetersPerSecond == 36.1)
    }

    @Test func aWalkerSleepsLongerThanAVehicleAtTheSameDistance() {
        // 600 m from a boundary at 1.4 m/s, accuracy 5 m, margin 20 m: a budget of 575 m.
        // Vehicle (45 m/s, 1 m/s²) from 2.4 m/s: 45 m/s is reached after 42.6 s and 1009 m, so
        // t = −2.4 + √(5.76 + 1150) = 31.5965 s; foot (4 m/s) from 2.4 m/s: 4 m/s after 1.6 s and
        // 5.12 m, then 569.88 m at 4 m/s: t = 144.07 s. Wakes ttff_hot (2 s) earlier.
        let f = PowerPolicyTests.fix(0, speed: 1.4)
        let context = FixContext(nearestBoundaryMeters: 600, searchRadiusMeters: 30_000)
        var walker = Self.started(Self.profile(.foot))
        var driver = Self.started(Self.profile(.vehicle))
        let walk = PowerPolicyTests.wake(walker.fixReceived(f, context: context, now: f.time))
        let drive = PowerPolicyTests.wake(driver.fixReceived(f, context: context, now: f.time))
        #expect(walk == PowerPolicyTests.at(142_070))
        #expect(drive == PowerPolicyTests.at(29_596))
    }

    @Test func aFixFasterThanItsBoundIsPlannedAtItsOwnSpeed() {
        // Foot (4 m/s), a fix reporting 6 m/s 600 m from a boundary (575 m to cover): the bound
        // cannot hold for this fix, so the sleep is planned at 6 + 1 m/s: 575 / 7 = 82.142 s,
        // wake 2 s before; at foot's 4 m/s it would have been 143.75 s.
        var p = Self.started(Self.profile(.foot))
        let f = PowerPolicyTests.fix(0, speed: 6)
        let wake = PowerPolicyTests.wake(p.fixReceived(f, context: FixContext(nearestBoundaryMeters: 600, searchRadiusMeters: 30_000), now: f.time))
        #expect(wake == PowerPolicyTests.at(80_142))
    }

    @Test func aSpeedTheFixBeforeContradictsIsNotPlannedWith() {
        // A vehicle tracked at 30 m/s; one second later, 30 m on, the receiver reports 0 m/s (a
        // glitch of its velocity, or of a recording's). No braking short of a collision takes
        // off more than 1 g in that second: the device still moves at least 30 − 1 − 9.81 =
        // 19.19 m/s (its positions show (30 − 5 − 5)/1 − 9.81/2 = 15.1), more than the report
        // and its error allow. The plan drops the report and rests on the max-speed bound: 575 m
        // at 45 m/s is 12.777 s; the wake 2 s before, at 11.777 s. The report alone (1 m/s with
        // its error, then 1 m/s²) would have given 32.926 s.
        // The wake a vehicle plans on `second`, after `first` near a boundary kept it on.
        func wake(after first: Fix, _ second: Fix, boundary: Double) -> UTCTime? {
            var policy = Self.started(Self.profile(.vehicle))
            _ = policy.fixReceived(first, context: FixContext(nearestBoundaryMeters: 30, searchRadiusMeters: 30_000), now: first.time)
            return PowerPolicyTests.wake(policy.fixReceived(second, context: FixContext(nearestBoundaryMeters: boundary, searchRadiusMeters: 30_000), now: second.time))
        }
        let moving = PowerPolicyTests.fix(0, east: 0, speed: 30)
        #expect(wake(after: moving, PowerPolicyTests.fix(1000, east: 30, speed: 0), boundary: 600) == PowerPolicyTests.at(11_777))
        // A minute later the same report stands on its own: 32.926 s after the fix, less 2 s.
        #expect(wake(after: moving, PowerPolicyTests.fix(60_000, east: 30, speed: 0), boundary: 600) == PowerPolicyTests.at(90_926))
        // A fix that reports no speed is planned at the max-speed bound whatever the fix before
        // showed: a speed the positions show is a least, never a most.
        #expect(wake(after: moving, PowerPolicyTests.fix(1000, east: 30), boundary: 600) == PowerPolicyTests.at(11_777))
        // Known to move faster than max_speed: planned at what it is known to move. 100 m/s,
        // then 60 m/s a second later: at least 100 − 1 − 9.81 = 89.19 m/s; 1975 m (2000 m less
        // accuracy and margin) at 89.19 m/s is 22.143 s, the wake at 21.143 s. The report
        // would have given 1975 / 61 = 32.377 s.
        let flying = PowerPolicyTests.fix(0, east: 0, speed: 100)
        #expect(wake(after: flying, PowerPolicyTests.fix(1000, east: 40, speed: 60), boundary: 2000) == PowerPolicyTests.at(21_143))
    }

    // MARK: widening

    @Test(arguments: [
        // observed → 1.5 × observed, up to the next activity on the ground; faster than a
        // vehicle's 45 m/s: air's bounds at once.
        (5.0, 20.0),      // a walker's 4 m/s broken at 5 m/s (7.5): a bicycle's bound
        (14, 45),         // 21 m/s: a vehicle's
        (30.66, 45.99),   // a car on the motorway, planned at the default 30 m/s
        (49, 350),        // a glider: flying
        (300, 450),       // an airliner in a jet stream faster than air's 350 m/s: 1.5 × it
        (2528, 3792),     // two fixes that bear each other out, whatever they are: never outrun
    ])
    func aViolationWidensTheSpeedToHalfAgainWhatWasSeenAtLeast(_ observed: Double, _ speed: Double) {
        let widened = Activity.foot.bounds!.widened(observedMetersPerSecond: observed)
        #expect(abs(widened.maxSpeedMetersPerSecond - speed) < 1e-9)
        // On the ground the acceleration bound stays; flying takes air's turns too.
        #expect(widened.maxAccelerationMetersPerSecondSquared == (observed > 45 ? 10 : 1))
        // Never narrower than before.
        #expect(Activity.air.bounds!.widened(observedMetersPerSecond: observed).maxSpeedMetersPerSecond == max(350, speed))
    }

    @Test func aViolationFoundWhileTheScreenStillHoldsTheFixIsReportedAndStored() throws {
        // Foot, the receiver on throughout; 400 m east after 1 s, then 750 m more: 390 and
        // 740 m/s less both 5 m accuracies. They bear each other out (a factor under 2, moving
        // on): a violation at 390 m/s, widened to 1.5 × 390 = 585 m/s, which the second jump
        // still breaks: held, and the violation is reported and stored with it.
        var profile = MonitorTests.profile(.regions)
        profile.policy.activity = .foot
        var m = MonitorTests.machine(profile) { $0.alwaysOn = true }
        _ = m.start(now: MonitorTests.at(0))
        var effects: [Monitor.Effect] = []
        for (t, x) in [(0.0, 0.0), (1, 400), (2, 1150)] { effects = m.fixReceived(MonitorTests.fix(t, x), now: MonitorTests.at(t)) }
        let violations = effects.compactMap { if case let .violated(v) = $0 { v } else { nil } }
        #expect(violations.count == 1)
        #expect(abs((violations.first?.observedMetersPerSecond ?? 0) - 390) < 0.01)
        #expect(effects.contains { if case let .commit(c) = $0 { c.assumptions?.violations == 1 } else { false } })
        #expect(effects.last.map { if case .held = $0 { true } else { false } } == true)
    }

    @Test(arguments: [0.0, -1.0])
    func aReceiverWhoseSpeedsShowNothingIsJudgedByItsPositions(_ reported: Double) {
        // Foot (4 m/s); a receiver that reports 0 (or −1) while its fixes race north 20 m a
        // second (less 2 × 2 m accuracy: 16 m/s). The screen holds the second fix; the third
        // bears it out by the positions alone: one violation at 16 m/s, widened to 45 m/s,
        // and every fix reaches the engine instead of being held for ever.
        var p = Self.started(Self.profile(.foot))
        let context = FixContext(nearestBoundaryMeters: 5, searchRadiusMeters: 30_000, allCertain: false)
        var violations: [AssumptionViolation] = []
        var taken = 0
        for k in 0..<6 {
            let f = PowerPolicyTests.fix(Int64(k) * 1000, east: Double(k) * 20, acc: 2, speed: reported)
            guard case let .pass(passed) = p.screen(f) else { continue }
            for x in passed { _ = p.fixReceived(x, context: context, now: x.time) }
            taken += passed.count
            violations += p.takeViolations()
        }
        #expect(taken == 6)
        #expect(violations.map(\.kind) == [.speed])
        #expect(abs((violations.first?.observedMetersPerSecond ?? 0) - 16) < 0.01)
        #expect(p.bounds.maxSpeedMetersPerSecond == 45)
    }

    @Test func twoFastFixesThatMoveFastBreakTheSpeedBoundOnce() {
        // Foot (4 m/s): fixes 1 s apart at 9 m/s, 9 m apart (less 2 × 2 m accuracy: 5 m > 4 m),
        // the receiver kept on by an undecided side (no sleep: no reach check).
        var p = Self.started(Self.profile(.foot))
        let context = FixContext(nearestBoundaryMeters: 5, searchRadiusMeters: 30_000, allCertain: false)
        var violations: [AssumptionViolation] = []
        var taken = 0
        for k in 0..<4 {
            let f = PowerPolicyTests.fix(Int64(k) * 1000, east: Double(k) * 9, acc: 2, speed: 9)
            guard case let .pass(passed) = p.screen(f) else { continue }
            for x in passed { _ = p.fixReceived(x, context: context, now: x.time) }
            taken += passed.count
            violations += p.takeViolations()
        }
        // Not held for ever: every fix reaches the engine.
        #expect(taken == 4)
        // The screen holds the second fix (5 m/s > 4 m/s) until the third confirms it; the
        // speed check fires on that pair and widens foot: 1.5 × 9 = 13.5 m/s, a bicycle's
        // 20 m/s. The fourth fix is within the widened bound.
        #expect(violations.count == 1)
        #expect(violations.first?.kind == .speed)
        #expect(violations.first?.planned.maxSpeedMetersPerSecond == 4)
        #expect(p.bounds.maxSpeedMetersPerSecond == 20)
        #expect(p.assumptions.violations == 1)
        #expect(p.takeAssumptions() == AssumptionState(widened: MotionBounds(maxSpeedMetersPerSecond: 20, maxAccelerationMetersPerSecondSquared: 1), violations: 1))
        #expect(p.takeAssumptions() == nil)
    }

    @Test func aReportedSpeedThatThePositionsDoNotBearOutIsNoViolation() {
        // Speeds of 30 m/s reported by fixes that stand still: a glitch of the report.
        var p = Self.started(Self.profile(.foot))
        let context = FixContext(nearestBoundaryMeters: 5_000, searchRadiusMeters: 30_000)
        for k in 0..<5 {
            let f = PowerPolicyTests.fix(Int64(k) * 1000, acc: 2, speed: 30)
            _ = p.screen(f)
            _ = p.fixReceived(f, context: context, now: f.time)
        }
        #expect(p.takeViolations().isEmpty)
        #expect(p.bounds.maxSpeedMetersPerSecond == 4)
    }

    /// At rest 2 km from a boundary, the policy sleeps as the kinematic bound allows (speed error
    /// 1 m/s, the 1975 m to cover: 2000 m less the accuracy and the 20 m margin), and wakes
    /// `wake` ms later; `east` is where the wake's first fix lies, 2 s after the wake.
    private static func acrossASleep(_ activity: Activity, wake: Int64, east: Double) -> (PowerPolicy, Fix, PowerPolicy.Screening) {
        var p = Self.started(Self.profile(activity))
        let far = FixContext(nearestBoundaryMeters: 2_000, searchRadiusMeters: 30_000)
        let f0 = PowerPolicyTests.fix(0, acc: 5, speed: 0)
        _ = p.screen(f0)
        #expect(PowerPolicyTests.wake(p.fixReceived(f0, context: far, now: f0.time)) == PowerPolicyTests.at(wake))
        _ = p.deadlineReached(now: PowerPolicyTests.at(wake))
        let f1 = PowerPolicyTests.fix(wake + 2_000, east: east, acc: 5, speed: 13)
        let screened = p.screen(f1)
        return (p, f1, screened)
    }

    /// A boat (13 m/s, 0.5 m/s²) reaches 168 m in the 24 s it takes from 1 m/s to 13 m/s,
    /// then 13 m/s: 1975 m take 163 s, the wake 2 s before.
    private static func boatAcrossASleep(east: Double) -> (PowerPolicy, Fix, PowerPolicy.Screening) {
        acrossASleep(.boat, wake: 161_000, east: east)
    }

    @Test func aDisplacementBeyondTheKinematicBoundAcrossASleepIsAnAccelerationViolation() {
        // 2070 m east after 163 s: 2060 m less both accuracies, 12.64 m/s on average (within
        // the 13 m/s bound) but 85 m beyond the 1975 m the kinematic bound reached, more than
        // the 20 m margin: held until a second fix bears it out, 13 m on.
        var (p, f1, screened) = Self.boatAcrossASleep(east: 2070)
        #expect(screened == .held)
        #expect(p.takeViolations().isEmpty)
        let f2 = PowerPolicyTests.fix(164_000, east: 2083, acc: 5, speed: 13)
        #expect(p.screen(f2) == .pass([f1, f2]))
        let v = p.takeViolations()
        #expect(v.count == 1)
        #expect(v.first?.kind == .acceleration)
        #expect(v.first.map { abs($0.observedMetersPerSecond - 2060.0 / 163) < 1e-6 } == true)
        #expect(v.first?.distanceMeters.map { abs($0 - 2060) < 0.5 } == true)
        // The least acceleration that covers 2060 m in 163 s from 1 m/s under the 13 m/s cap:
        // (13 − 1)² / (2 · (13 · 163 − 2060)) = 144 / 118 = 1.2203 m/s²; widened to 1.5 × that.
        #expect(v.first?.observedAcceleration.map { abs($0 - 144.0 / 118) < 0.01 } == true)
        #expect(abs(p.bounds.maxAccelerationMetersPerSecondSquared - 1.5 * 144.0 / 118) < 0.02)
        #expect(p.bounds.maxSpeedMetersPerSecond == 13)
        #expect(p.assumptions.violations == 1)
    }

    @Test func aFixWithinTheKinematicBoundAndTheMarginPassesAndAGlitchBeyondItIsDropped() {
        // 2004 m east: 1994 m less both accuracies, within 1975 m and the 20 m margin.
        var (p, f1, screened) = Self.boatAcrossASleep(east: 2004)
        #expect(screened == .pass([f1]))
        #expect(p.takeViolations().isEmpty)
        // 2070 m east, then back at 1960 m a second later: the second fix lies within the
        // bound from the fix before the sleep, so the first was a position glitch: dropped.
        var (q, _, held) = Self.boatAcrossASleep(east: 2070)
        #expect(held == .held)
        let back = PowerPolicyTests.fix(164_000, east: 1960, acc: 5, speed: 12)
        #expect(q.screen(back) == .pass([back]))
        #expect(q.takeViolations().isEmpty)
        #expect(q.bounds.maxAccelerationMetersPerSecondSquared == 0.5)
        // A vehicle (45 m/s, 1 m/s²) reaches 1012 m in the 44 s to 45 m/s: 1975 m take 65.4 s.
        // 2050 m east is 65 m beyond them: held. A second later 2000 m east, 50 m back (40 m/s
        // less both accuracies, within 45 m/s of the held fix) but within what was reachable
        // from the fix before the sleep by the held fix's time (1990 m against 1975 m and the
        // 20 m margin): not borne out, a glitch.
        var (r, _, jumped) = Self.acrossASleep(.vehicle, wake: 63_400, east: 2050)
        #expect(jumped == .held)
        let near = PowerPolicyTests.fix(66_400, east: 2000, acc: 5, speed: 13)
        #expect(r.screen(near) == .pass([near]))
        #expect(r.takeViolations().isEmpty)
        #expect(r.bounds.maxAccelerationMetersPerSecondSquared == 1)
    }

    @Test func anOverrunIsBorneOutByTheNextFixAgainstTheReachAtTheHeldFixsTime() {
        // The vehicle's wake fix 2030 m east (2020 m less both accuracies, 25 m beyond the
        // 1975 m reach and the 20 m margin) is held. The next, a second later 15 m on (2035 m),
        // lies within the reach at its own time (2020 m and the margin: at the cap the reach
        // grows 45 m a second, the car 15) but beyond the reach at the held fix's time: it
        // bears the overrun out.
        var (p, f1, held) = Self.acrossASleep(.vehicle, wake: 63_400, east: 2030)
        #expect(held == .held)
        let on = PowerPolicyTests.fix(66_400, east: 2045, acc: 5, speed: 15)
        #expect(p.screen(on) == .pass([f1, on]))
        #expect(p.takeViolations().first?.kind == .acceleration)
    }

    @Test func aCoarseFixWhileAFixIsHeldForTheKinematicBoundLetsItPass() {
        var (p, f1, held) = Self.boatAcrossASleep(east: 2070)
        #expect(held == .held)
        let coarse = PowerPolicyTests.fix(163_500, east: 2000, acc: 500, source: .coarse)
        #expect(p.screen(coarse) == .pass([f1, coarse]))
        #expect(p.takeViolations().isEmpty)
    }

    @Test func aCoarseFixDuringASleepLeavesTheNextGNSSFixJudgedAgainstTheGNSSFixBeforeIt() {
        // The boat's sleep from rest 2 km from a boundary (wake at 161 s). At 100 s a coarse fix
        // ±500 m, 1000 m east and 1000 m from the nearest boundary: its circle and the margin
        // reach no boundary (GNSS is not woken), and a coarse fix never brings a wake forward,
        // so the plan stands. The wake's first fix, 2070 m east, lies 85 m beyond what the boat
        // reached from the GNSS fix before the sleep; judged against the coarse fix it would
        // look plausible (565 m less both accuracies in 63 s) and the sleep's bounds would go
        // unchecked.
        var p = Self.started(Self.profile(.boat))
        let far = FixContext(nearestBoundaryMeters: 2_000, searchRadiusMeters: 30_000)
        let f0 = PowerPolicyTests.fix(0, acc: 5, speed: 0)
        _ = p.screen(f0)
        #expect(PowerPolicyTests.wake(p.fixReceived(f0, context: far, now: f0.time)) == PowerPolicyTests.at(161_000))
        let coarse = PowerPolicyTests.fix(100_000, east: 1_000, acc: 500, source: .coarse)
        #expect(p.screen(coarse) == .pass([coarse]))
        #expect(p.fixReceived(coarse, context: FixContext(nearestBoundaryMeters: 1_000, searchRadiusMeters: 30_000), now: coarse.time).isEmpty)
        _ = p.deadlineReached(now: PowerPolicyTests.at(161_000))
        let f1 = PowerPolicyTests.fix(163_000, east: 2070, acc: 5, speed: 13)
        #expect(p.screen(f1) == .held)
        let f2 = PowerPolicyTests.fix(164_000, east: 2083, acc: 5, speed: 13)
        #expect(p.screen(f2) == .pass([f1, f2]))
        let v = p.takeViolations()
        #expect(v.count == 1)
        #expect(v.first?.kind == .acceleration)
        #expect(v.first?.distanceMeters.map { abs($0 - 2060) < 0.5 } == true)
    }

    @Test func aReportThePlanDroppedIsNotWhatTheWatchJudgesBy() {
        // A vehicle at 30 m/s, on near a boundary; a second later its fix reports 5 m/s, which
        // 1 g of braking cannot reach from 30 m/s (30 − 1 − 9.81 = 19.19 m/s at least): the plan
        // drops the report and sleeps on `max_speed` alone, 1975 m at 45 m/s. From 5 m/s the
        // kinematic bound would have reached 1214 m by the wake's fix (6 m/s, 1 m/s², 43.9 s);
        // the fix 1600 m on is beyond that but within what the plan relied on: no violation.
        var p = Self.started(Self.profile(.vehicle))
        let f0 = PowerPolicyTests.fix(0, acc: 5, speed: 30)
        _ = p.screen(f0)
        _ = p.fixReceived(f0, context: FixContext(nearestBoundaryMeters: 20, searchRadiusMeters: 30_000), now: f0.time)
        let f1 = PowerPolicyTests.fix(1_000, east: 30, acc: 5, speed: 5)
        #expect(p.screen(f1) == .pass([f1]))
        let wake = PowerPolicyTests.wake(p.fixReceived(f1, context: FixContext(nearestBoundaryMeters: 2_000, searchRadiusMeters: 30_000), now: f1.time))
        // (2000 − 5 − 20) / 45 = 43.89 s, the wake 2 s before.
        #expect(wake.map { abs(($0 - PowerPolicyTests.at(42_889)).secondsValue) < 0.01 } == true)
        _ = p.deadlineReached(now: PowerPolicyTests.at(42_889))
        let f2 = PowerPolicyTests.fix(44_889, east: 1_630, acc: 5, speed: 40)
        #expect(p.screen(f2) == .pass([f2]))
        #expect(p.takeViolations().isEmpty)
        #expect(p.bounds.maxAccelerationMetersPerSecondSquared == 1)
    }

    @Test(arguments: [0.0, 1, 4, 12.5, 30])
    func theLeastAccelerationIsTheInverseOfTheKinematicReach(_ speed: Double) {
        for acceleration in [0.05, 0.5, 1, 3, 10] {
            let bound = ReachabilityBound(maxSpeedMetersPerSecond: 45, maxAccelerationMetersPerSecondSquared: acceleration,
                                          speedErrorMetersPerSecond: 1, courseErrorDegrees: 20)
            for t in [0.5, 3, 20, 100] {
                let reach = bound.reachMeters(seconds: t, speedMetersPerSecond: speed)
                // Where the acceleration decides the reach (more than the speed alone and less
                // than the cap all along), it is found again from the reach.
                guard reach > (speed + 1) * t + 1e-6, reach < 45 * t - 1e-6 else { continue }
                let least = bound.leastAcceleration(covering: reach, seconds: t, speedMetersPerSecond: speed)
                #expect(least.map { abs($0 - acceleration) < 1e-6 * max(1, acceleration) } == true, "v \(speed), A \(acceleration), t \(t)")
            }
            #expect(bound.leastAcceleration(covering: 10, seconds: 20, speedMetersPerSecond: speed) == 0)
            #expect(bound.leastAcceleration(covering: 45 * 20 + 1, seconds: 20, speedMetersPerSecond: speed) == nil)
        }
    }

    @Test func anAccelerationViolationWidensTheAccelerationToHalfAgainWhatWasNeeded() {
        let foot = Activity.foot.bounds!
        #expect(foot.widened(observedAcceleration: 2) == MotionBounds(maxSpeedMetersPerSecond: 4, maxAccelerationMetersPerSecondSquared: 3))
        // Never narrower than before.
        #expect(foot.widened(observedAcceleration: 0.4) == foot)
    }

    @Test func aJumpAcrossASleepBeyondTheBoundIsAReachViolationAndTheTripEndResetsIt() {
        // Foot, 2 km from a boundary at rest: the policy sleeps. The next fixes, 100 s later, are
        // 1500 m away (15 m/s less accuracies): held, then confirmed by a second one.
        var p = Self.started(Self.profile(.foot))
        let far = FixContext(nearestBoundaryMeters: 2_000, searchRadiusMeters: 30_000)
        let f0 = PowerPolicyTests.fix(0, acc: 5, speed: 0)
        _ = p.screen(f0)
        #expect(PowerPolicyTests.wake(p.fixReceived(f0, context: far, now: f0.time)) != nil)
        let f1 = PowerPolicyTests.fix(100_000, east: 1_500, acc: 5, speed: 0)
        let f2 = PowerPolicyTests.fix(101_000, east: 1_500, acc: 5, speed: 0)
        _ = p.deadlineReached(now: f1.time)
        #expect(p.screen(f1) == .held)
        #expect(p.screen(f2) == .pass([f1, f2]))
        let v = p.takeViolations()
        // (1500 − 10) m in 100 s = 14.9 m/s; 1.5 × 14.9 = 22.35 m/s: a vehicle's 45 m/s.
        #expect(v.count == 1)
        #expect(v.first?.kind == .reach)
        #expect(v.first.map { abs($0.observedMetersPerSecond - 14.9) < 0.01 } == true)
        #expect(v.first?.distanceMeters.map { abs($0 - 1490) < 0.5 } == true)
        #expect(p.bounds.maxSpeedMetersPerSecond == 45)
        // Standing within stationary.radius (50 m) for stationary.timeout (300 s) ends the trip.
        for s in stride(from: 101, through: 402, by: 10) {
            let f = PowerPolicyTests.fix(Int64(s) * 1000, east: 1_500, acc: 5, speed: 0)
            _ = p.screen(f)
            _ = p.fixReceived(f, context: far, now: f.time)
        }
        #expect(p.bounds.maxSpeedMetersPerSecond == 4)
        #expect(p.assumptions == AssumptionState(widened: nil, violations: 1))
    }

    /// Setting off from a long stop breaks foot's bound while the device is still within the
    /// stop's radius: one violation, and the widened bound holds (the stop before it is no end
    /// of the trip that follows).
    @Test func aViolationSettingOffFromALongStopIsNotUndoneByThatStop() {
        var p = Self.started(Self.profile(.foot) { $0.policy.stationary.radiusMeters = 50; $0.policy.stationary.timeout = .seconds(300) })
        let far = FixContext(nearestBoundaryMeters: 20_000, searchRadiusMeters: 30_000)
        // 400 s at rest, then 3 m/s² up to 15 m/s, a fix every second.
        var position = 0.0, speed = 0.0
        var ms: Int64 = 0
        while ms <= 430_000 {
            if ms > 400_000 {
                speed = min(15, speed + 3)
                position += speed
            }
            let f = PowerPolicyTests.fix(ms, east: position, speed: speed)
            _ = p.fixReceived(f, context: far, now: f.time)
            ms += ms < 400_000 ? 10_000 : 1_000
        }
        #expect(p.takeViolations().map(\.widened.maxSpeedMetersPerSecond) == [20])
        #expect(p.bounds.maxSpeedMetersPerSecond == 20)
        #expect(p.assumptions.violations == 1)
    }

    /// A sleep planned on a vehicle's bounds, with foot sensed during it: the first fix after
    /// it is judged by the bound the sleep relied on, not taken for a broken foot bound.
    @Test func aBoundNarrowedDuringASleepIsNoViolationOfIt() throws {
        var p = Self.started(Self.profile(.foot))
        _ = p.activitySensed(.vehicle, now: PowerPolicyTests.t0)
        let far = FixContext(nearestBoundaryMeters: 20_000, searchRadiusMeters: 30_000)
        let first = PowerPolicyTests.fix(0, east: 0, speed: 20)
        #expect(p.screen(first) == .pass([first]))
        let wake = try #require(PowerPolicyTests.wake(p.fixReceived(first, context: far, now: first.time)))
        #expect(wake > PowerPolicyTests.at(300_000))
        _ = p.activitySensed(.foot, now: PowerPolicyTests.at(300_000))
        #expect(p.bounds.maxSpeedMetersPerSecond == 4)
        _ = p.deadlineReached(now: wake)
        // Driven on at 20 m/s all along: within the 45 m/s the sleep relied on.
        let seconds = (wake - PowerPolicyTests.t0).secondsValue + 2
        let next = PowerPolicyTests.fix(Int64(seconds * 1000), east: 20 * seconds, speed: 20)
        #expect(p.screen(next) == .pass([next]))
        _ = p.fixReceived(next, context: far, now: next.time)
        #expect(p.takeViolations().isEmpty)
        #expect(p.assumptions.violations == 0)
    }

    /// A walker 2.3 km from the nearest boundary sleeps about 547 s on foot's bounds; a vehicle
    /// sensed at 300 s wakes the receiver, and in the outage that follows (an underground car
    /// park) the retries no longer back off towards the walker's horizon: every 10 s
    /// (`retry_max_interval` without a budget), not 10, 20, 40, 80 s.
    @Test func aFasterActivitySensedBeforeAnOutageKeepsTheRetriesShort() throws {
        var p = Self.started(Self.profile(.foot))
        _ = p.activitySensed(.foot, now: PowerPolicyTests.t0)
        let far = FixContext(nearestBoundaryMeters: 2_300, searchRadiusMeters: 30_000)
        let first = PowerPolicyTests.fix(0, speed: 0)
        let wake = try #require(PowerPolicyTests.wake(p.fixReceived(first, context: far, now: first.time)))
        #expect(wake > PowerPolicyTests.at(500_000))
        #expect(p.activitySensed(.vehicle, now: PowerPolicyTests.at(300_000)) == [.gnssOn(PowerReason(.activity, ttff: .seconds(2)))])
        for _ in 0..<4 {
            let timeout = try #require(p.nextDeadline)
            _ = p.deadlineReached(now: timeout)
            #expect(!p.isGNSSOn)
            let retry = try #require(p.nextDeadline)
            #expect(retry - timeout <= .seconds(10))
            _ = p.deadlineReached(now: retry)
        }
    }

    @Test func widenedBoundsAreRestoredFromTheStoredState() {
        let stored = AssumptionState(widened: MotionBounds(maxSpeedMetersPerSecond: 45, maxAccelerationMetersPerSecondSquared: 1), violations: 3)
        let p = PowerPolicy(configuration: PowerConfiguration(profile: Self.profile(.foot)), assumptions: stored)
        #expect(p.bounds.maxSpeedMetersPerSecond == 45)
        #expect(p.assumptions.violations == 3)
    }

    // MARK: the time to first fix, measured

    @Test func aReceiverConsistentlyFasterThanPlannedReplacesTtffHotAfterTenWakes() {
        // 5 km from every boundary at rest: each fix sleeps, each wake is hot (off for less
        // than hot_window), and the receiver's first fix comes 1 s after the switch-on where
        // 2 s are planned.
        var p = Self.started(Self.profile(.vehicle))
        let far = FixContext(nearestBoundaryMeters: 5_000, searchRadiusMeters: 30_000)
        var now = PowerPolicyTests.t0
        var changes: [PowerPolicy.TTFFChange] = []
        var wakes: [UTCTime] = []
        for k in 0..<12 {
            let f = Fix(time: now + (k == 0 ? .zero : .seconds(1)), coordinate: PowerPolicyTests.point(0), horizontalAccuracyMeters: 5, speedMetersPerSecond: 0)
            let wake = PowerPolicyTests.wake(p.fixReceived(f, context: far, now: f.time))
            changes += p.takeTTFFChange().map { [$0] } ?? []
            guard let wake else { Issue.record("no sleep after fix \(k)"); return }
            wakes.append(wake)
            _ = p.deadlineReached(now: wake)
            now = wake
        }
        // The start's first fix is not a hot wake's; the ten that follow are: the tenth decides.
        #expect(p.ttffSampleCount == 11)
        #expect(changes == [PowerPolicy.TTFFChange(from: .seconds(2), to: .seconds(1), measured: .seconds(1), samples: 10)])
        #expect(p.configuration.ttffHot == .seconds(1))
        // Planned with the measured hot start: a wake 1 s, not 2 s, before the horizon.
        // 4975 m at rest: from 1 m/s up to 45 m/s in 44 s (1012 m), then 3963 m at 45 m/s:
        // 132.07 s.
        let last = wakes[wakes.count - 1], before = wakes[wakes.count - 2]
        #expect((last - before - .seconds(1)).wholeMilliseconds == 131_066)
        #expect(p.measuredTTFF == .seconds(1))
    }

    /// A policy at rest 5 km from every boundary after 12 fixes, each wake's first fix `ttff`
    /// after its switch-on (11 hot wakes measured).
    static func measured(_ ttff: Duration) -> PowerPolicy {
        measured(Array(repeating: ttff, count: 11))
    }

    /// As `measured(_:)`, the hot wakes' first fixes `ttffs` after their switch-ons; the
    /// receiver is on after the last wake, its fix not yet come.
    static func measured(_ ttffs: [Duration], _ edit: (inout Profile) -> Void = { _ in }) -> PowerPolicy {
        var p = Self.started(Self.profile(.vehicle, edit))
        let far = FixContext(nearestBoundaryMeters: 5_000, searchRadiusMeters: 30_000)
        var now = PowerPolicyTests.t0
        for k in 0...ttffs.count {
            let f = Fix(time: now + (k == 0 ? .zero : ttffs[k - 1]), coordinate: PowerPolicyTests.point(0), horizontalAccuracyMeters: 5, speedMetersPerSecond: 0)
            guard let wake = PowerPolicyTests.wake(p.fixReceived(f, context: far, now: f.time)) else { Issue.record("no sleep after fix \(k)"); return p }
            _ = p.deadlineReached(now: wake)
            now = wake
        }
        return p
    }

    /// Probes in an outage listen one tracking interval past the slowest measured hot start
    /// (docs/power.md, "Fix timeout and listens"), not `2 × ttff_hot + 1 s`, and the receiver
    /// wakes as much sooner after each: a receiver that met its planned 2 s in 11 wakes probes
    /// 3 s and sleeps 26 s (on 3 s in every 29 s, against 5 s in every 33 s); one slow start of
    /// 3.5 s among them makes it 4.5 s and 27.5 s; before 10 are measured, 5 s and 28 s. The
    /// short listens before the probes wait 15 s beyond the hot start learnt.
    @Test func outageProbesListenAsLongAsTheMeasuredHotStartsNeed() throws {
        /// The listens and the sleeps after them, in ms.
        func schedule(_ ttffs: [Duration], retryListen: Duration? = nil) throws -> (listens: [Int64], sleeps: [Int64]) {
            // The wake after the last measured one gets nothing: a short listen (17 s), a
            // retry's short listen, then probes.
            var p = Self.measured(ttffs) {
                $0.policy.maxLatency = .seconds(30)
                $0.policy.retryFixTimeout = retryListen
            }
            let on = try #require(p.onSince)
            var now = try #require(p.nextDeadline)
            var listens = [(now - on).wholeMilliseconds], sleeps: [Int64] = []
            for _ in 0..<4 {
                let wake = try #require(PowerPolicyTests.wake(p.deadlineReached(now: now)))
                sleeps.append((wake - now).wholeMilliseconds)
                _ = p.deadlineReached(now: wake)
                now = try #require(p.nextDeadline)
                listens.append((now - wake).wholeMilliseconds)
            }
            return (listens, sleeps)
        }
        let two = Array(repeating: Duration.seconds(2), count: 11)
        let measured = try schedule(two)
        #expect(measured.listens == [17_000, 17_000, 3_000, 3_000, 3_000])
        #expect(measured.sleeps == [10_000, 20_000, 26_000, 26_000])
        var slow = two
        slow[4] = .milliseconds(3_500)
        let withSlow = try schedule(slow)
        #expect(withSlow.listens == [17_000, 17_000, 4_500, 4_500, 4_500])
        #expect(withSlow.sleeps == [10_000, 20_000, 27_500, 27_500])
        let unmeasured = try schedule(Array(two.prefix(9)))
        #expect(unmeasured.listens == [17_000, 17_000, 5_000, 5_000, 5_000])
        #expect(unmeasured.sleeps == [10_000, 20_000, 28_000, 28_000])
        // A receiver learnt at 3 s: its probes listen 4 s (of the 7 s it would listen before
        // measuring), and the retry cap follows the learnt hot start, 30 − 3 = 27 s, so that
        // the sky's return is still seen within max_latency: 27 − 3 = 24 s after each probe.
        // Its short listens wait 15 s beyond the learnt hot start (18 s), as a 1 s receiver's
        // do (16 s); one the profile sets keeps its length.
        let slower = try schedule(Array(repeating: .seconds(3), count: 11))
        #expect(slower.listens == [18_000, 18_000, 4_000, 4_000, 4_000])
        #expect(slower.sleeps.suffix(2) == [24_000, 24_000])
        let faster = try schedule(Array(repeating: .seconds(1), count: 11))
        #expect(faster.listens == [16_000, 16_000, 2_000, 2_000, 2_000])
        let set = try schedule(Array(repeating: .seconds(3), count: 11), retryListen: .seconds(17))
        #expect(set.listens.prefix(2) == [17_000, 17_000])
        // A short listen of 4 s bounds the full probe too: the measured one saves 1 s, and
        // the sleep after it is 1 s shorter, not 2.
        let bounded = try schedule(two, retryListen: .seconds(4))
        #expect(bounded.listens == [4_000, 4_000, 3_000, 3_000, 3_000])
        #expect(bounded.sleeps == [10_000, 20_000, 27_000, 27_000])
    }

    /// The defaults follow a learnt hot start; a value set on the configuration is its own.
    @Test func aRetryListenOrCapSetDirectlyDoesNotFollowTheLearntHotStart() {
        let profile = Self.profile(.vehicle) { $0.policy.maxLatency = .seconds(30) }
        var following = PowerConfiguration(profile: profile)
        following.setTTFFHot(.seconds(3))
        #expect(following.retryFixTimeout == .seconds(18) && following.maxFixTimeoutRetry == .seconds(27))
        var set = PowerConfiguration(profile: profile)
        set.retryFixTimeout = .seconds(5)
        set.maxFixTimeoutRetry = .seconds(12)
        set.setTTFFHot(.seconds(3))
        #expect(set.ttffHot == .seconds(3))
        #expect(set.retryFixTimeout == .seconds(5) && set.maxFixTimeoutRetry == .seconds(12))
    }

    /// A median within the step (1.9 s against the 2 s planned) changes nothing, a mode switch
    /// included; a reload of the same receiver keeps the measurements and what they taught.
    @Test func aHotStartWithinTheStepIsKeptAndAReloadKeepsTheMeasurements() {
        var close = Self.measured(.milliseconds(1_900))
        #expect(close.measuredTTFF == .milliseconds(1_900) && close.configuration.ttffHot == .seconds(2))
        _ = close.switchMode(to: PowerConfiguration(profile: Self.profile(.vehicle)), now: PowerPolicyTests.t0 + .seconds(86_400))
        #expect(close.configuration.ttffHot == .seconds(2))
        let fast = Self.measured(.seconds(1))
        #expect(fast.configuration.ttffHot == .seconds(1))
        var reloaded = PowerPolicy(configuration: PowerConfiguration(profile: Self.profile(.vehicle)))
        reloaded.keepLearned(from: fast, sameReceiver: true, sameSensor: false)
        #expect(reloaded.configuration.ttffHot == .seconds(1) && reloaded.ttffSampleCount == 11)
    }

    /// Only a wake that restarts the receiver times its hot start: not a retry after a fix
    /// timeout (its first fix times the sky's return), and with `power: watch` not a wake
    /// within gpsd's 60 s release (the receiver was still tracking).
    @Test func onlyWakesThatRestartTheReceiverAreMeasured() throws {
        var p = Self.started(Self.profile(.vehicle) { $0.sources.gnss?.power = .ubx })
        let far = FixContext(nearestBoundaryMeters: 5_000, searchRadiusMeters: 30_000)
        let first = Fix(time: PowerPolicyTests.t0, coordinate: PowerPolicyTests.point(0), horizontalAccuracyMeters: 5, speedMetersPerSecond: 0)
        let wake = try #require(PowerPolicyTests.wake(p.fixReceived(first, context: far, now: first.time)))
        _ = p.deadlineReached(now: wake)
        // No fix within the listen: off, and a retry.
        let timeout = try #require(p.nextDeadline)
        _ = p.deadlineReached(now: timeout)
        #expect(!p.isGNSSOn)
        let retry = try #require(p.nextDeadline)
        _ = p.deadlineReached(now: retry)
        #expect(p.isGNSSOn)
        let back = Fix(time: retry + .seconds(5), coordinate: PowerPolicyTests.point(0), horizontalAccuracyMeters: 5, speedMetersPerSecond: 0)
        _ = p.fixReceived(back, context: far, now: back.time)
        #expect(p.ttffSampleCount == 0)

        // `watch`: a wake 30 s after the switch-off finds the receiver tracking.
        var watch = Self.started(Self.profile(.vehicle))
        let near = FixContext(nearestBoundaryMeters: 700, searchRadiusMeters: 30_000)
        let a = Fix(time: PowerPolicyTests.t0, coordinate: PowerPolicyTests.point(0), horizontalAccuracyMeters: 5, speedMetersPerSecond: 0)
        let soon = try #require(PowerPolicyTests.wake(watch.fixReceived(a, context: near, now: a.time)))
        #expect(soon - a.time < .seconds(60))
        _ = watch.deadlineReached(now: soon)
        let b = Fix(time: soon + .milliseconds(300), coordinate: PowerPolicyTests.point(0), horizontalAccuracyMeters: 5, speedMetersPerSecond: 0)
        _ = watch.fixReceived(b, context: far, now: b.time)
        #expect(watch.ttffSampleCount == 0)
        // The next wake, after more than 60 s off, is measured.
        let later = try #require(watch.nextDeadline)
        #expect(later - b.time > .seconds(60))
        _ = watch.deadlineReached(now: later)
        let c = Fix(time: later + .seconds(2), coordinate: PowerPolicyTests.point(0), horizontalAccuracyMeters: 5, speedMetersPerSecond: 0)
        _ = watch.fixReceived(c, context: far, now: c.time)
        #expect(watch.ttffSampleCount == 1)
    }

    @Test func aLearnedHotStartResizesTheSwitchReserve() {
        // Sensed foot with ttff_hot 2 s: 84 m of reserve (below). The receiver's hot starts
        // take 1 s: once learned, T = 10 + 1 s: 5·11 + 11²/2 − 4·11 = 71.5 m.
        var p = Self.started(Self.profile(.vehicle))
        _ = p.activitySensed(.foot, now: PowerPolicyTests.t0)
        #expect(p.configuration.wakeMarginMeters == 104)
        let far = FixContext(nearestBoundaryMeters: 5_000, searchRadiusMeters: 30_000)
        var now = PowerPolicyTests.t0
        for k in 0..<12 {
            let f = Fix(time: now + (k == 0 ? .zero : .seconds(1)), coordinate: PowerPolicyTests.point(0), horizontalAccuracyMeters: 5, speedMetersPerSecond: 0)
            guard let wake = PowerPolicyTests.wake(p.fixReceived(f, context: far, now: f.time)) else { Issue.record("no sleep after fix \(k)"); return }
            _ = p.deadlineReached(now: wake)
            now = wake
        }
        #expect(p.configuration.ttffHot == .seconds(1))
        #expect(p.configuration.wakeMarginMeters == 91.5)
    }

    // MARK: sensed activity and its latency

    @Test func theSwitchReserveCoversWhatTheSourceHasNotNoticedYet() {
        // Sensed foot, latency 10 s, ttff_hot 2 s: T = 12 s. From 4 + 1 m/s, speeding up at a
        // vehicle's 1 m/s²: 5·12 + 12²/2 = 132 m (under 45·12), of which foot allows 4·12 = 48 m:
        // 84 m more.
        let c = PowerConfiguration(profile: Self.profile(.any))
        #expect(abs(c.switchReserveMeters(sensed: Activity.foot.bounds!) - 84) < 1e-9)
        // A vehicle sensed needs none: nothing faster is planned for.
        #expect(c.switchReserveMeters(sensed: Activity.vehicle.bounds!) == 0)
        // A hot_window (5 min) shorter than max_sleep (10 min): the wake may start warm (30 s),
        // T = 40 s: 5·40 + 40²/2 = 1000 m (under 45·40), of which foot allows 160 m: 840 m.
        let warm = PowerConfiguration(profile: Self.profile(.any) { $0.policy.receiver.hotWindow = .seconds(300); $0.policy.receiver.ttffWarm = .seconds(30) })
        #expect(abs(warm.switchReserveMeters(sensed: Activity.foot.bounds!) - 840) < 1e-9)
    }

    /// The latency budget's sleeps on a sensed activity's bounds keep the switch reserve too:
    /// a walker (sensed foot, reserve 84 m) at 1.4 m/s, 300 m from a boundary. Without it the
    /// budget would wait for a 325 m excursion at foot's bounds (81.57 s), which a walker who
    /// boarded a bus unnoticed can complete sooner; with it, for 325 − 84 = 241 m: from 2.4 m/s
    /// to 4 m/s in 1.6 s (5.12 m), then 235.88 m at 4 m/s: 60.57 s, the wake 2 s before. On an
    /// uncertain side the 20 m an excursion needs is within the reserve: no band sleep on foot's
    /// bounds (declared air, whose own bounds allow none there either).
    @Test func theBudgetsSleepsOnASensedActivityKeepTheSwitchReserve() {
        var p = Self.started(Self.profile(.vehicle) { $0.policy.maxLatency = .seconds(30) })
        #expect(p.activitySensed(.foot, now: PowerPolicyTests.t0) == [])
        let f = PowerPolicyTests.fix(0, speed: 1.4)
        let actions = p.fixReceived(f, context: FixContext(nearestBoundaryMeters: 300, searchRadiusMeters: 30_000), now: f.time)
        let wake = try! #require(PowerPolicyTests.wake(actions))
        #expect(wake <= PowerPolicyTests.at(58_570))
        // Longer than the rules without a budget: (300 − 5 − 104) m take 48.07 s.
        #expect(wake > PowerPolicyTests.at(46_100))
        var q = Self.started(Self.profile(.air) { $0.policy.maxLatency = .seconds(30) })
        _ = q.activitySensed(.foot, now: PowerPolicyTests.t0)
        let uncertain = PowerPolicyTests.fix(0, speed: 1)
        #expect(q.fixReceived(uncertain, context: FixContext(nearestBoundaryMeters: 3, searchRadiusMeters: 30_000, allCertain: false), now: uncertain.time) == [])
        #expect(q.isGNSSOn)
    }

    /// The declared bounds hold whatever a sensed slower activity switches to, without a
    /// reserve: a sensed walker is never planned a shorter sleep than the declared vehicle.
    /// At rest 150 m from a boundary, without a budget: on foot with the 104 m margin, 41 m take
    /// 3 s to 4 m/s (7.5 m) and 8.4 s more, a safe sleep under `min_sleep`; as the declared
    /// vehicle, 125 m from 1 m/s at 1 m/s² take −1 + √251 = 14.843 s: a 12.84 s sleep. With the
    /// budget on an uncertain side at 1 m/s, the vehicle's band sleep (2.632 s, as
    /// `PowerLatencyBudgetTests.anUncertainSideLetsAWalkerSleepUntilAnExcursionCouldBeComplete`).
    @Test func aSensedWalkerSleepsAtLeastAsLongAsTheDeclaredVehicle() {
        var p = Self.started(Self.profile(.vehicle))
        _ = p.activitySensed(.foot, now: PowerPolicyTests.t0)
        let f = PowerPolicyTests.fix(0, speed: 0)
        let wake = try! #require(PowerPolicyTests.wake(p.fixReceived(f, context: FixContext(nearestBoundaryMeters: 150, searchRadiusMeters: 30_000), now: f.time)))
        #expect(wake >= PowerPolicyTests.at(12_800) && wake <= PowerPolicyTests.at(12_843), "\(wake)")
        var q = Self.started(Self.profile(.vehicle) { $0.policy.maxLatency = .seconds(30) })
        _ = q.activitySensed(.foot, now: PowerPolicyTests.t0)
        let uncertain = PowerPolicyTests.fix(0, speed: 1)
        let band = q.fixReceived(uncertain, context: FixContext(nearestBoundaryMeters: 3, searchRadiusMeters: 30_000, allCertain: false), now: uncertain.time)
        #expect(PowerPolicyTests.wake(band) == PowerPolicyTests.at(2_632))
        // Declared foot covers no bus: the reserve alone decides. At rest 110 m away, foot's
        // bounds leave 110 − 5 − 104 = 1 m, a safe sleep under `min_sleep` (clamped to it);
        // foot without the reserve would have slept 20.4 s.
        var r = Self.started(Self.profile(.foot))
        _ = r.activitySensed(.foot, now: PowerPolicyTests.t0)
        let resting = PowerPolicyTests.fix(0, speed: 0)
        #expect(PowerPolicyTests.wake(r.fixReceived(resting, context: FixContext(nearestBoundaryMeters: 110, searchRadiusMeters: 30_000), now: resting.time))
            == PowerPolicyTests.at(10_000))
    }

    @Test func aSensedActivityWinsAndAFasterOneWakesTheReceiver() {
        // Declared vehicle; the source senses foot: foot's bounds, the wake margin plus 84 m.
        var p = Self.started(Self.profile(.vehicle))
        #expect(p.activitySensed(.foot, now: PowerPolicyTests.t0) == [])
        #expect(p.bounds == Activity.foot.bounds)
        #expect(p.configuration.wakeMarginMeters == 104)
        // At rest 2 km away it sleeps on foot's bounds: budget 2000 − 5 − 104 = 1891 m; 4 m/s
        // from 1 m/s after 3 s and 7.5 m, then 1883.5 m at 4 m/s: 473.875 s, wake 2 s before.
        let f = PowerPolicyTests.fix(0, speed: 0)
        let wake = PowerPolicyTests.wake(p.fixReceived(f, context: FixContext(nearestBoundaryMeters: 2_000, searchRadiusMeters: 30_000), now: f.time))
        #expect(wake == PowerPolicyTests.at(471_875))
        // A vehicle sensed at 60 s: the sleep's bounds no longer hold; the receiver is woken.
        let actions = p.activitySensed(.vehicle, now: PowerPolicyTests.at(60_000))
        #expect(actions == [.gnssOn(PowerReason(.activity, ttff: .seconds(2)))])
        #expect(p.bounds.maxSpeedMetersPerSecond == 45)
        #expect(p.configuration.wakeMarginMeters == 20)
        // Nothing sensed any more: the declared activity's bounds.
        #expect(p.activitySensed(nil, now: PowerPolicyTests.at(61_000)) == [])
        #expect(p.sensedActivity == nil)
    }
}
