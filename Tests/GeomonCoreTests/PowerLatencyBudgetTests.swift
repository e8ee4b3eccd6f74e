import GeomonCore
import Testing

/// `policy.max_latency` (30 s): sleeping where a boundary may be within reach, cheaper outages,
/// capped stationary checks and trusted courses. Scripted fixes and contexts; wake times
/// computed by hand in the comments (max_speed 45 m/s, wake_margin 20 m, min_sleep 10 s,
/// ttff_hot 2 s, A = 1 m/s², speed error 1 m/s, hysteresis h = 10 m, confirm 2, fixes 1 s apart
/// while tracking). Kinematic path time for a path P at speed v: `−b + √(b² + 2P)`, b = v + 1.
@Suite struct PowerLatencyBudgetTests {
    static let t0 = PowerPolicyTests.t0
    static func at(_ ms: Int64) -> UTCTime { PowerPolicyTests.at(ms) }
    static func fix(_ ms: Int64, east: Double = 0, acc: Double = 5, speed: Double? = nil, course: Double? = nil) -> Fix {
        PowerPolicyTests.fix(ms, east: east, acc: acc, speed: speed, course: course)
    }

    static func config(_ edit: (inout PowerConfiguration) -> Void = { _ in }) -> PowerConfiguration {
        PowerPolicyTests.config {
            $0.maxLatency = .seconds(30)
            $0.maxFixTimeoutRetry = .seconds(28)    // the profile default with max_latency 30 s
            edit(&$0)
        }
    }

    static func decide(_ f: Fix, _ context: FixContext, _ edit: (inout PowerConfiguration) -> Void = { _ in }) -> (PowerPolicy, [PowerAction]) {
        var p = PowerPolicyTests.started(config(edit))
        #expect(p.screen(f) == .pass([f]))
        let actions = p.fixReceived(f, context: context, now: f.time)
        return (p, actions)
    }

    static func sleepReason(_ actions: [PowerAction]) -> PowerReason? {
        guard case let .gnssOff(reason) = actions.first else { return nil }
        return reason
    }

    // MARK: sleeping within reach of a boundary

    @Test func anUncertainSideLetsAWalkerSleepUntilAnExcursionCouldBeComplete() {
        // Uncertain: an excursion needs 2h = 20 m between its two confirmations. At 1 m/s:
        // −2 + √(4 + 40) = 4.633 s → the next fix by 4.632 s, the wake 2 s before: 2.632 s.
        let (p, actions) = Self.decide(Self.fix(0, speed: 1), FixContext(nearestBoundaryMeters: 3, searchRadiusMeters: 30_000, allCertain: false))
        let reason = Self.sleepReason(actions)
        #expect(reason?.kind == .bandSleep)
        #expect(reason?.bound == .excursion)
        #expect(PowerPolicyTests.wake(actions) == Self.at(2_632))
        #expect(!p.isGNSSOn)
        // Without a budget it stays on.
        let (q, none) = Self.decide(Self.fix(0, speed: 1), FixContext(nearestBoundaryMeters: 3, searchRadiusMeters: 30_000, allCertain: false)) { $0.maxLatency = .zero }
        #expect(none == [])
        #expect(q.isGNSSOn)
    }

    /// A budget wake is hot only within `hot_window` of the fix it follows, however late the
    /// fix was decided. 27,070 m from a boundary at 44 m/s (45 with the speed error), decided
    /// 1 s after the fix, `hot_window` 600 s: the rules without a budget sleep 601 − 2 = 599 s
    /// (hot); the budget's 602.1 s excursion would wake at 600 s, when the fix is 600 s old and
    /// the start warm (its first fix 30 s later, far past the budget): the 599 s sleep stands.
    @Test func aBudgetWakeIsHotOnlyWithinTheHotWindowOfTheFix() {
        var p = PowerPolicyTests.started(Self.config {
            $0.hotWindow = .seconds(600)
            $0.ttffWarm = .seconds(30)
        })
        let f = Self.fix(0, speed: 44)
        #expect(p.screen(f) == .pass([f]))
        let actions = p.fixReceived(f, context: FixContext(nearestBoundaryMeters: 27_070, searchRadiusMeters: 30_000), now: f.time + .seconds(1))
        #expect(PowerPolicyTests.wake(actions) == Self.at(599_000))
        #expect(Self.sleepReason(actions)?.ttff == .seconds(2))
    }

    /// A side the engine has not established (its start-up, a fence whose record is `unknown`)
    /// gets no budget sleep: a crossing from it is confirmed silently under `initial: silent`,
    /// where always-on, establishing the side first, reports an enter (the demo's Aigle
    /// junction, entered 40 m from the first fix). The walker of
    /// `anUncertainSideLetsAWalkerSleepUntilAnExcursionCouldBeComplete` stays on.
    @Test func aSideNotYetEstablishedGetsNoBudgetSleep() {
        var context = FixContext(nearestBoundaryMeters: 3, searchRadiusMeters: 30_000, allCertain: false)
        context.sideUnknown = true
        let (p, actions) = Self.decide(Self.fix(0, speed: 1), context)
        #expect(actions == [])
        #expect(p.isGNSSOn)
    }

    @Test func aBudgetSleepShorterThanTheBreakEvenIsNotTaken() {
        // The walker's 2.632 s band sleep (above): with `min_off` 3 s it costs more than it
        // saves, so the receiver stays on; with 2.5 s it is taken.
        let context = FixContext(nearestBoundaryMeters: 3, searchRadiusMeters: 30_000, allCertain: false)
        let (p, none) = Self.decide(Self.fix(0, speed: 1), context) { $0.minOff = .seconds(3) }
        #expect(none == [])
        #expect(p.isGNSSOn)
        let (q, actions) = Self.decide(Self.fix(0, speed: 1), context) { $0.minOff = .milliseconds(2_500) }
        #expect(Self.sleepReason(actions)?.kind == .bandSleep)
        #expect(!q.isGNSSOn)
    }

    @Test func theBreakEvenFollowsTheEnergyFiguresUnlessSet() {
        // Off for T, then a hot start: saves T × 90 mW, costs 2 s × (120 − 90) mW → T = 0.667 s.
        var receiver = ReceiverSettings()
        #expect(receiver.effectiveMinOff == .milliseconds(667))
        receiver.powerAcquireMilliwatts = 60
        #expect(receiver.effectiveMinOff == .zero)
        // A tracking power near zero: switching off never pays, held at the longest duration
        // a profile takes (the product overflowed a duration and trapped `run`).
        receiver.powerAcquireMilliwatts = 100_000
        receiver.powerTrackMilliwatts = 1e-15
        #expect(receiver.effectiveMinOff == .seconds(3650 * 86_400))
        // No time to acquire costs nothing, even against a tracking power that makes the ratio
        // infinite (0 × ∞ is no number, and trapped too).
        receiver.ttffHot = .zero
        receiver.powerAcquireMilliwatts = 1e10
        receiver.powerTrackMilliwatts = 1e-300
        #expect(receiver.effectiveMinOff == .zero)
        receiver.minOff = .seconds(20)
        #expect(receiver.effectiveMinOff == .seconds(20))
        var profile = Profile(name: "t", mode: .regions)
        profile.policy.receiver.minOff = .seconds(5)
        #expect(PowerConfiguration(profile: profile).minOff == .seconds(5))
    }

    @Test func anUncertainSideAtCarSpeedKeepsTheReceiverOn() {
        // At 25 m/s the 20 m fit in −26 + √(676 + 40) = 0.758 s: shorter than a hot start.
        let (p, actions) = Self.decide(Self.fix(0, speed: 25), FixContext(nearestBoundaryMeters: 3, searchRadiusMeters: 30_000, allCertain: false))
        #expect(actions == [])
        #expect(p.isGNSSOn)
        #expect(p.lastDecision?.kind == .uncertain)
    }

    @Test func aFenceTooSmallToSleepAcrossKeepsTheReceiverOnALargeOneLetsItSleep() {
        // Certain, inside a fence whose boundary is 30 m away, at 15 m/s: an excursion (out and
        // back in) needs d − a + 3h = 55 m: −16 + √(256 + 110) = 3.131 s, a wake at 1.13 s:
        // shorter than a hot start. The rule without a budget would clamp the 0.31 s safe
        // sleep up to min_sleep (10 s), which the budget does not allow: it stays on.
        let (small, a) = Self.decide(Self.fix(0, speed: 15), FixContext(nearestBoundaryMeters: 30, searchRadiusMeters: 30_000))
        #expect(a == [])
        #expect(small.isGNSSOn)
        #expect(small.lastDecision?.kind == .boundaryNear)
        // 300 m: the path is 325 m: −16 + √(256 + 650) = 14.0998 s → the wake at 12.098 s, later
        // than the bound without a budget (reach 275 m: −16 + √(256 + 550) = 12.390 s → 10.390 s).
        let (large, b) = Self.decide(Self.fix(0, speed: 15), FixContext(nearestBoundaryMeters: 300, searchRadiusMeters: 30_000))
        #expect(Self.sleepReason(b)?.kind == .sleep)
        #expect(Self.sleepReason(b)?.bound == .excursion)
        #expect(PowerPolicyTests.wake(b) == Self.at(12_098))
        #expect(!large.isGNSSOn)
        let (_, c) = Self.decide(Self.fix(0, speed: 15), FixContext(nearestBoundaryMeters: 300, searchRadiusMeters: 30_000)) { $0.maxLatency = .zero }
        #expect(PowerPolicyTests.wake(c) == Self.at(10_390))
    }

    @Test func aPendingConfirmationKeepsTheReceiverOnUntilTheBudgetAllowsASleep() {
        func pending(since ms: Int64) -> FixContext {
            var c = FixContext(nearestBoundaryMeters: 20, searchRadiusMeters: 30_000, allCertain: false, transitionPending: true)
            c.pendingSince = Self.at(ms)
            c.pendingCount = 1
            return c
        }
        // The change started 28 s ago: its confirming fix is due within 30 − 28 = 2 s, no time
        // to sleep.
        let (p, a) = Self.decide(Self.fix(0, speed: 1), pending(since: -28_000))
        #expect(a == [])
        #expect(p.isGNSSOn)
        #expect(p.lastDecision?.kind == .confirming)
        // 26 s ago: due within 4 s, before the excursion bound (4.633 s): a 2 s sleep.
        let (_, b) = Self.decide(Self.fix(0, speed: 1), pending(since: -26_000))
        #expect(Self.sleepReason(b)?.kind == .bandSleep)
        #expect(Self.sleepReason(b)?.bound == .latency)
        #expect(PowerPolicyTests.wake(b) == Self.at(2_000))
        // Just started: the excursion bound decides (2.632 s).
        let (_, c) = Self.decide(Self.fix(0, speed: 1), pending(since: 0))
        #expect(Self.sleepReason(c)?.bound == .excursion)
        #expect(PowerPolicyTests.wake(c) == Self.at(2_632))
    }

    @Test func fixesThatSettleTheEngineSoonerThanAWakeKeepTheReceiverOn() {
        // The fix is certain for every fence, a change needs one more confirming fix: at the
        // tracking rate it comes 1 s later, before a wake's first fix (hot start 2 s) could.
        var last = FixContext(nearestBoundaryMeters: 400, searchRadiusMeters: 30_000, allCertain: false, transitionPending: true)
        last.pendingSince = Self.at(0)
        last.pendingCount = 1
        last.fixesToSettle = 1
        let (p, a) = Self.decide(Self.fix(0, speed: 1), last)
        #expect(a == [])
        #expect(p.isGNSSOn)
        #expect(p.lastDecision?.kind == .confirming)
        // Three fixes to go (confirm 4) take 3 s, longer than a hot start: the budget sleeps.
        last.fixesToSettle = 3
        let (r, c) = Self.decide(Self.fix(0, speed: 1), last)
        #expect(Self.sleepReason(c)?.kind == .bandSleep)
        #expect(!r.isGNSSOn)
    }

    @Test func theBudgetNeverWakesEarlierThanTheRulesWithoutIt() {
        // Across distances and speeds, the wake with the budget is never before the wake without.
        for d in [20.0, 40, 80, 150, 400, 1000, 5000] {
            for v in [nil, 0, 1, 5, 15, 30] as [Double?] {
                let f = Self.fix(0, speed: v)
                let context = FixContext(nearestBoundaryMeters: d, searchRadiusMeters: 30_000)
                let (with, a) = Self.decide(f, context)
                let (without, b) = Self.decide(f, context) { $0.maxLatency = .zero }
                let wa = with.isGNSSOn ? Self.t0 : PowerPolicyTests.wake(a) ?? Self.t0
                let wb = without.isGNSSOn ? Self.t0 : PowerPolicyTests.wake(b) ?? Self.t0
                // A clamp to min_sleep without the budget is not a safe sleep: it may go.
                if Self.sleepReason(b)?.bound == .minSleep { continue }
                #expect(wa >= wb, "d=\(d) v=\(String(describing: v))")
            }
        }
    }

    // MARK: outages

    @Test func outageRetriesProbeBrieflyAndBackOffToTheBudget() {
        // At rest 10 km away: from 1 m/s up to 45 m/s at 1 m/s² takes 44 s and 1012 m, then 45 m/s:
        // the budget's bound is max(path 44 + 9013/45, crossing 44 + 8983/45 + 30/45) = 244.289 s,
        // the wake 2 s before: 242.287 s. No fix: the hot start's 17 s listen ends at 259.287 s;
        // retries after 10 s (listening 17 s), then 20 s, then 28 s (max_latency − ttff_hot), each
        // listening 2·ttff_hot + 1 s = 5 s once a retry has failed:
        // 269.287, 269.287 + 17 + 20 = 306.287, 306.287 + 5 + 28 = 339.287, 372.287.
        var p = PowerPolicyTests.started(Self.config())
        let f = Self.fix(0, speed: 0)
        let sleep = p.fixReceived(f, context: FixContext(nearestBoundaryMeters: 10_000, searchRadiusMeters: 30_000), now: f.time)
        #expect(PowerPolicyTests.wake(sleep) == Self.at(242_287))
        _ = p.deadlineReached(now: Self.at(242_287))
        #expect(p.nextDeadline == Self.at(259_287))
        var wakes: [Int64] = [], listens: [Int64] = []
        var now = Self.at(259_287)
        for _ in 0..<4 {
            guard let wake = PowerPolicyTests.wake(p.deadlineReached(now: now)) else { break }
            wakes.append((wake - Self.t0).wholeMilliseconds)
            _ = p.deadlineReached(now: wake)
            guard let timeout = p.nextDeadline else { break }
            listens.append((timeout - wake).wholeMilliseconds)
            now = timeout
        }
        #expect(wakes == [269_287, 306_287, 339_287, 372_287])
        #expect(listens == [17_000, 5_000, 5_000, 5_000])
        // Over a long outage the receiver is on 5 s in every 33 s, where always-on is on 33 s.
        // A fix ends the outage; the next outage's first retry listens the full 17 s again.
        let back = Self.fix(374_000, east: 5_000)
        _ = p.screen(back)
        _ = p.fixReceived(back, context: FixContext(nearestBoundaryMeters: 10, searchRadiusMeters: 30_000, allCertain: false), now: back.time)
        #expect(p.isGNSSOn)
        let timeout = try! #require(p.nextDeadline)
        let retry = try! #require(PowerPolicyTests.wake(p.deadlineReached(now: timeout)))
        _ = p.deadlineReached(now: retry)
        #expect(p.nextDeadline.map { ($0 - retry).wholeMilliseconds } == 17_000)
    }

    @Test func aLongOutageListensShortAgainEveryMaxSleepForAReceiverSlowerThanTheProbe() {
        // As above: the last listen longer than a probe is the retry at 269.287 s. Probes follow
        // every 33 s (306.287, 339.287, …); the first retry max_sleep (600 s) after 269.287 s,
        // at 306.287 + 18·33 = 900.287 s, listens the short 17 s again, so a receiver whose hot
        // start takes longer than the 5 s probe (a degraded sky, a slower unit than planned) is
        // still found; then probes from 945.287 s, and the next short listen at
        // 945.287 + 17·33 = 1506.287 s, the first retry 600 s after 900.287 s.
        var p = PowerPolicyTests.started(Self.config())
        let f = Self.fix(0, speed: 0)
        _ = p.fixReceived(f, context: FixContext(nearestBoundaryMeters: 10_000, searchRadiusMeters: 30_000), now: f.time)
        _ = p.deadlineReached(now: Self.at(242_287))
        var now = Self.at(259_287)
        var long: [Int64] = []
        for _ in 0..<45 {
            guard let wake = PowerPolicyTests.wake(p.deadlineReached(now: now)) else { break }
            _ = p.deadlineReached(now: wake)
            guard let timeout = p.nextDeadline else { break }
            if timeout - wake > .seconds(5) { long.append((wake - Self.t0).wholeMilliseconds) }
            now = timeout
        }
        #expect(long == [269_287, 900_287, 1_506_287])
        // A receiver that takes 7 s: the probes get nothing, the short listen its fix.
        let late = Self.fix(907_287)
        var q = PowerPolicyTests.started(Self.config())
        _ = q.fixReceived(f, context: FixContext(nearestBoundaryMeters: 10_000, searchRadiusMeters: 30_000), now: f.time)
        _ = q.deadlineReached(now: Self.at(242_287))
        now = Self.at(259_287)
        while now < Self.at(900_287) {
            guard let wake = PowerPolicyTests.wake(q.deadlineReached(now: now)) else { break }
            _ = q.deadlineReached(now: wake)
            guard let timeout = q.nextDeadline else { break }
            now = timeout
        }
        #expect(q.isGNSSOn && q.onSince == Self.at(900_287))
        _ = q.screen(late)
        _ = q.fixReceived(late, context: FixContext(nearestBoundaryMeters: 10_000, searchRadiusMeters: 30_000), now: late.time)
        #expect(q.lastFix == late)
    }

    // MARK: stationary checks

    @Test func stationaryChecksWithinReachOfABoundaryStayWithinTheBudget() {
        // No speed (max-speed bound): an uncertain side keeps the receiver on; after
        // stationary.timeout (300 s) at one place it checks back after 10, 20, then 27 s
        // (30 − ttff_hot − one more fix) instead of doubling on.
        var p = PowerPolicyTests.started(Self.config())
        let context = FixContext(nearestBoundaryMeters: 5, searchRadiusMeters: 30_000, allCertain: false)
        var t: Int64 = 0
        while t < 300_000 {
            let f = Self.fix(t)
            _ = p.screen(f)
            #expect(p.fixReceived(f, context: context, now: f.time) == [])
            t += 1_000
        }
        var intervals: [Int64] = []
        for _ in 0..<5 {
            let f = Self.fix(t)
            _ = p.screen(f)
            let actions = p.fixReceived(f, context: context, now: f.time)
            guard let wake = PowerPolicyTests.wake(actions) else { break }
            intervals.append((wake - f.time).wholeMilliseconds)
            _ = p.deadlineReached(now: wake)
            t = (wake - Self.t0).wholeMilliseconds + 2_000
        }
        #expect(intervals == [10_000, 20_000, 27_000, 27_000, 27_000])
    }

    // MARK: trusted course

    @Test func aSteadyCourseOnAStraightRoadSleepsLongerThanOneFixAlone() {
        // 25 m/s due east, the nearest boundary 100 m behind, clearance growing ahead. The
        // previous fix 20 s earlier, 500 m back, same course and speed: the course is trusted
        // (5° instead of 20°), so the heading bound reaches further.
        let clearance = CourseClearance(stepMeters: 100, clearanceMeters: (0..<40).map { 100 + 100 * Double($0) })
        var context = FixContext(nearestBoundaryMeters: 100, searchRadiusMeters: 30_000)
        context.courseClearance = clearance
        func wake(previous: Fix?) -> UTCTime? {
            var p = PowerPolicyTests.started(Self.config())
            if let previous {
                _ = p.screen(previous)
                _ = p.fixReceived(previous, context: FixContext(nearestBoundaryMeters: 5000, searchRadiusMeters: 30_000), now: previous.time)
                _ = p.deadlineReached(now: p.nextDeadline ?? previous.time)
            }
            let f = Self.fix(40_000, east: 1000, speed: 25, course: 90)
            _ = p.screen(f)
            return PowerPolicyTests.wake(p.fixReceived(f, context: context, now: f.time))
        }
        let alone = try! #require(wake(previous: nil))
        let steady = try! #require(wake(previous: Self.fix(20_000, east: 500, speed: 25, course: 90)))
        #expect(steady > alone)
        // A previous fix whose course disagrees (a turn), or one too slow, gives no trust.
        #expect(wake(previous: Self.fix(20_000, east: 500, speed: 25, course: 60)) == alone)
        #expect(wake(previous: Self.fix(20_000, east: 940, speed: 3, course: 90)) == alone)
    }
}
