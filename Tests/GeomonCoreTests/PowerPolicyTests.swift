import GeomonCore
import GeomonFormat
import Testing

/// Scripted fixes and contexts in, actions and wake times out. Wake times are computed by hand
/// in the comments (max_speed 45 m/s, wake_margin 20 m, min_sleep 10 s, max_sleep 600 s,
/// ttff hot 2 s / warm 30 s, fix_timeout 90 s, A = 1 m/s², speed error 1 m/s, max_latency 0).
@Suite struct PowerPolicyTests {
    static let t0 = UTCTime(millisecondsSince1970: 1_700_000_000_000)
    static func at(_ ms: Int64) -> UTCTime { UTCTime(millisecondsSince1970: t0.millisecondsSince1970 + ms) }
    /// A point `east` metres east of (0, 0) (1° of longitude at the equator is 111 195.08 m).
    static func point(_ east: Double) -> Coordinate { Coordinate(latitude: 0, longitude: east / 111_195.08) }
    static func fix(_ ms: Int64, east: Double = 0, acc: Double = 5, speed: Double? = nil, course: Double? = nil, source: FixSource = .gnss) -> Fix {
        Fix(time: at(ms), coordinate: point(east), horizontalAccuracyMeters: acc, speedMetersPerSecond: speed, courseDegrees: course, source: source)
    }

    static func config(_ mode: MonitoringMode = .regions, _ edit: (inout PowerConfiguration) -> Void = { _ in }) -> PowerConfiguration {
        var profile = Profile(name: "t", mode: mode)
        profile.sources.gnss = GNSSSourceSettings()
        profile.policy.maxSpeedMetersPerSecond = 45
        profile.policy.wakeMarginMeters = 20
        profile.policy.minSleep = .seconds(10)
        profile.policy.maxSleep = .seconds(600)
        profile.policy.receiver.ttffHot = .seconds(2)
        // The rules without a latency budget; `PowerLatencyBudgetTests` covers `max_latency`.
        profile.policy.maxLatency = .zero
        var c = PowerConfiguration(profile: profile)
        edit(&c)
        return c
    }

    static func started(_ c: PowerConfiguration, assumptions: AssumptionState = AssumptionState()) -> PowerPolicy {
        var p = PowerPolicy(configuration: c, assumptions: assumptions)
        _ = p.start(now: t0)
        return p
    }

    static func wake(_ actions: [PowerAction]) -> UTCTime? {
        for case let .wakeAt(t, _) in actions { return t }
        return nil
    }

    // MARK: start

    struct StartCase: Sendable, CustomTestStringConvertible {
        var mode: MonitoringMode
        var alwaysOn: Bool
        var expected: [PowerAction]
        var testDescription: String { "\(mode.rawValue)\(alwaysOn ? " always-on" : "")" }
    }

    static let startCases: [StartCase] = [
        StartCase(mode: .regions, alwaysOn: false, expected: [.gnssOn(PowerReason(.start, ttff: .seconds(30)))]),
        StartCase(mode: .continuous, alwaysOn: false, expected: [.gnssOn(PowerReason(.start, ttff: .seconds(30)))]),
        StartCase(mode: .significantChange, alwaysOn: false, expected: [.coarseOn(PowerReason(.start))]),
        StartCase(mode: .regions, alwaysOn: true, expected: [.gnssOn(PowerReason(.alwaysOn, ttff: .seconds(30)))]),
    ]

    @Test(arguments: startCases)
    func startSwitchesTheSourceOfTheMode(_ c: StartCase) {
        var p = PowerPolicy(configuration: Self.config(c.mode) { $0.alwaysOn = c.alwaysOn })
        #expect(p.start(now: Self.t0) == c.expected)
        #expect(p.start(now: Self.t0) == [])
    }

    // MARK: regions: sleep after a good fix

    struct SleepCase: Sendable, CustomTestStringConvertible {
        var name: String
        var fix: Fix
        var context: FixContext
        var rule: ShortSleepRule = .clampToMinSleep
        /// Expected wake in ms after t0; nil = stays on (no actions).
        var wakeMs: Int64?
        var bound: PowerReason.SleepBound?
        var testDescription: String { name }
    }

    static let sleepCases: [SleepCase] = [
        // (1000 − 5 − 20) / 45 = 21.666 s; minus ttff 2 s → 19.666 s.
        SleepCase(name: "max-speed bound", fix: fix(0), context: FixContext(nearestBoundaryMeters: 1000, searchRadiusMeters: 30000),
                  wakeMs: 19_666, bound: .maxSpeed),
        // Speed 0 ± 1 m/s, A = 1: t = −1 + √(1 + 2·975) = −1 + √1951 = 43.170 s; minus 2 s → 41.170 s.
        SleepCase(name: "kinematic bound", fix: fix(0, speed: 0), context: FixContext(nearestBoundaryMeters: 1000, searchRadiusMeters: 30000),
                  wakeMs: 41_170, bound: .kinematic),
        // Speed 20 m/s: from 21 m/s the speed reaches 45 m/s after t₁ = 24 s, having covered
        // 21·24 + 24²/2 = 792 m; the remaining 183 m at 45 m/s take 4.0667 s: t = 28.0667 s
        // (> 975/45 = 21.667 s, and > −21 + √(441 + 1950) = 27.898 s, the bound uncapped); → 26.066 s.
        SleepCase(name: "kinematic at speed", fix: fix(0, speed: 20), context: FixContext(nearestBoundaryMeters: 1000, searchRadiusMeters: 30000),
                  wakeMs: 26_066, bound: .kinematic),
        // Nothing within the search radius: (30000 − 25)/45 = 666 s > 602 s → max_sleep 600 s.
        SleepCase(name: "max_sleep cap", fix: fix(0), context: FixContext(nearestBoundaryMeters: nil, searchRadiusMeters: 30000),
                  wakeMs: 600_000, bound: .maxSleep),
        // (400 − 25)/45 = 8.333 s − 2 s = 6.333 s < 10 s → clamped up to min_sleep.
        SleepCase(name: "short sleep clamped to min_sleep", fix: fix(0), context: FixContext(nearestBoundaryMeters: 400, searchRadiusMeters: 30000),
                  wakeMs: 10_000, bound: .minSleep),
        SleepCase(name: "short sleep stays on (stay-on rule)", fix: fix(0), context: FixContext(nearestBoundaryMeters: 400, searchRadiusMeters: 30000),
                  rule: .stayOn, wakeMs: nil),
        // 20 m < accuracy + margin: the boundary may already be reached.
        SleepCase(name: "boundary within accuracy + margin stays on", fix: fix(0), context: FixContext(nearestBoundaryMeters: 20, searchRadiusMeters: 30000),
                  wakeMs: nil),
        SleepCase(name: "uncertain stays on", fix: fix(0), context: FixContext(nearestBoundaryMeters: 1000, searchRadiusMeters: 30000, allCertain: false),
                  wakeMs: nil),
        SleepCase(name: "pending transition stays on", fix: fix(0), context: FixContext(nearestBoundaryMeters: 1000, searchRadiusMeters: 30000, transitionPending: true),
                  wakeMs: nil),
        SleepCase(name: "poor accuracy stays on", fix: fix(0, acc: 80), context: FixContext(nearestBoundaryMeters: 5000, searchRadiusMeters: 30000),
                  wakeMs: nil),
        // Dwell due at +100 s: wake at 100 − 2 = 98 s although the boundary allows 600 s.
        SleepCase(name: "wakes in time for a dwell", fix: fix(0), context: FixContext(nearestBoundaryMeters: nil, searchRadiusMeters: 30000, earliestDwellDeadline: at(100_000)),
                  wakeMs: 98_000, bound: .dwell),
        // Dwell due at +5 s: 3 s < min_sleep → stays on.
        SleepCase(name: "dwell due soon stays on", fix: fix(0), context: FixContext(nearestBoundaryMeters: nil, searchRadiusMeters: 30000, earliestDwellDeadline: at(5_000)),
                  wakeMs: nil),
    ]

    @Test(arguments: sleepCases)
    func regionsSleepsAsLongAsNoBoundaryCanBeReached(_ c: SleepCase) {
        var p = Self.started(Self.config { $0.shortSleep = c.rule })
        #expect(p.screen(c.fix) == .pass([c.fix]))
        let actions = p.fixReceived(c.fix, context: c.context, now: c.fix.time)
        if let wakeMs = c.wakeMs {
            #expect(actions.count == 2)
            guard case let .gnssOff(reason) = actions.first else {
                Issue.record("expected gnss-off first, got \(actions)")
                return
            }
            #expect(reason.kind == .sleep)
            #expect(reason.bound == c.bound)
            #expect(Self.wake(actions) == Self.at(wakeMs))
            #expect(p.nextDeadline == Self.at(wakeMs))
            #expect(!p.isGNSSOn)
        } else {
            #expect(actions == [])
            #expect(p.isGNSSOn)
            // Still on: the next deadline is the fix timeout — the short listen (ttff_hot 2 s
            // + 15 s = 17 s) when nothing is undecided, else fix_timeout (90 s).
            let undecided = !c.context.allCertain || c.context.transitionPending
            #expect(p.nextDeadline == Self.at(undecided ? 90_000 : 17_000))
        }
    }

    @Test func headingBoundSleepsLongerWhenMovingAway() {
        // 20 m/s due east, the nearest boundary 100 m behind, clearance growing 100 m per 100 m.
        // e = 1 + 20·2·sin(10°) = 7.946; the first piece binds: 5·(e + t − 2.5) = 100 − 25
        // → t = 17.5 − 7.946 = 9.554 s (kinematic: −21 + √(441 + 150) = 3.31 s) → sleep 7.55 s,
        // clamped to min_sleep 10 s.
        let clearance = CourseClearance(stepMeters: 100, clearanceMeters: (0..<20).map { 100 + 100 * Double($0) })
        let bound = Self.config().reachability
        let h = bound.horizon(distanceMeters: 100, reserveMeters: 25, speedMetersPerSecond: 20, courseDegrees: 90,
                              courseClearance: clearance, limitSeconds: 602)
        #expect(h.bound == .heading)
        #expect(abs(h.seconds - 9.554) < 0.02)
        // Without course, only the kinematic bound: 3.31 s.
        let k = bound.horizon(distanceMeters: 100, reserveMeters: 25, speedMetersPerSecond: 20, courseDegrees: nil,
                              courseClearance: clearance, limitSeconds: 602)
        #expect(k.bound == .kinematic)
        #expect(abs(k.seconds - 3.310) < 0.01)
        // Below minSpeedForCourse (3 m/s) the course is ignored.
        let slow = bound.horizon(distanceMeters: 100, reserveMeters: 25, speedMetersPerSecond: 2, courseDegrees: 90,
                                 courseClearance: clearance, limitSeconds: 602)
        #expect(slow.bound != .heading)
    }

    @Test func headingBoundNeverExceedsTheStraightRunIntoABoundaryAhead() {
        // Heading straight at a boundary 1000 m ahead at 20 m/s: it is reached at (1000 − 25)/20
        // = 48.75 s at the latest; the heading bound must stay below.
        let clearance = CourseClearance(stepMeters: 100, clearanceMeters: (0..<11).map { 1000 - 100 * Double($0) })
        let h = Self.config().reachability.horizon(distanceMeters: 1000, reserveMeters: 25, speedMetersPerSecond: 20, courseDegrees: 90,
                                                   courseClearance: clearance, limitSeconds: 602)
        #expect(h.seconds < 48.75)
    }

    // MARK: wake, TTFF, fix timeout

    @Test func scheduledWakeSwitchesOnWithHotStartAndArmsTheFixTimeout() {
        var p = Self.started(Self.config())
        let f = Self.fix(0)
        _ = p.fixReceived(f, context: FixContext(nearestBoundaryMeters: 1000, searchRadiusMeters: 30000), now: f.time)
        #expect(p.deadlineReached(now: Self.at(19_000)) == [])
        #expect(p.deadlineReached(now: Self.at(19_666)) == [.gnssOn(PowerReason(.scheduledWake, ttff: .seconds(2)))])
        // A hot start listens ttff_hot + 15 s = 17 s (the default retry_fix_timeout).
        #expect(p.nextDeadline == Self.at(19_666 + 17_000))
    }

    struct ListenCase: Sendable, CustomTestStringConvertible {
        var name: String
        var edit: @Sendable (inout PowerConfiguration) -> Void = { _ in }
        var context: FixContext
        /// The fix timeout after a fix at 0 that keeps the receiver on (poor accuracy), ms.
        var deadlineMs: Int64
        /// How long the retry after the timeout listens, ms.
        var retryListenMs: Int64 = 17_000
        var testDescription: String { name }
    }

    static let listenCases: [ListenCase] = [
        // Certain, nothing pending: the short listen, 2 + 15 = 17 s.
        ListenCase(name: "certain: short listen", context: FixContext(nearestBoundaryMeters: 5000, searchRadiusMeters: 30000), deadlineMs: 17_000),
        // A side in doubt or a transition waiting: the full fix_timeout, 90 s.
        ListenCase(name: "uncertain: fix_timeout", context: FixContext(nearestBoundaryMeters: 5, searchRadiusMeters: 30000, allCertain: false), deadlineMs: 90_000),
        ListenCase(name: "pending: fix_timeout", context: FixContext(nearestBoundaryMeters: 5, searchRadiusMeters: 30000, allCertain: false, transitionPending: true), deadlineMs: 90_000),
        // retry_fix_timeout set explicitly; and never beyond fix_timeout.
        ListenCase(name: "retry_fix_timeout 5 s", edit: { $0.retryFixTimeout = .seconds(5) }, context: FixContext(nearestBoundaryMeters: 5000, searchRadiusMeters: 30000), deadlineMs: 5_000, retryListenMs: 5_000),
        ListenCase(name: "capped by fix_timeout", edit: { $0.fixTimeout = .seconds(8) }, context: FixContext(nearestBoundaryMeters: 5000, searchRadiusMeters: 30000), deadlineMs: 8_000, retryListenMs: 8_000),
        // nil: always fix_timeout (the behaviour before short listens).
        ListenCase(name: "short listens off", edit: { $0.retryFixTimeout = nil }, context: FixContext(nearestBoundaryMeters: 5000, searchRadiusMeters: 30000), deadlineMs: 90_000, retryListenMs: 90_000),
    ]

    @Test(arguments: listenCases)
    func howLongTheReceiverWaitsForTheNextFix(_ c: ListenCase) {
        var p = Self.started(Self.config(.regions, c.edit))
        // Poor accuracy keeps the receiver on whatever the context says.
        let f = Self.fix(0, acc: 80)
        #expect(p.fixReceived(f, context: c.context, now: f.time) == [])
        #expect(p.isGNSSOn)
        #expect(p.nextDeadline == Self.at(c.deadlineMs))
        // The timeout switches off and retries after min_sleep; the retry listens short too.
        let off = p.deadlineReached(now: Self.at(c.deadlineMs))
        #expect(Self.wake(off) == Self.at(c.deadlineMs + 10_000))
        #expect(p.deadlineReached(now: Self.at(c.deadlineMs + 10_000)).count == 1)
        #expect(p.nextDeadline == Self.at(c.deadlineMs + 10_000 + c.retryListenMs))
    }

    /// The retry intervals after a fix at 0 that slept `max_sleep` (600 s) and a wake into an
    /// outage: each listen is short (17 s), each timeout schedules the next retry.
    static func outageRetries(beyondMeters: Double?, count: Int) -> [Int64] {
        var p = Self.started(Self.config())
        let f = Self.fix(0)
        let a = p.fixReceived(f, context: FixContext(nearestBoundaryMeters: nil, searchRadiusMeters: 30000, boundaryBeyondSearchMeters: beyondMeters), now: f.time)
        var now = Self.wake(a) ?? Self.t0
        var sleeps: [Int64] = []
        for _ in 0..<count {
            _ = p.deadlineReached(now: now)  // on
            guard let timeout = p.nextDeadline else { return sleeps }
            guard let wake = Self.wake(p.deadlineReached(now: timeout)) else { return sleeps }
            sleeps.append((wake - timeout).wholeMilliseconds)
            now = wake
        }
        return sleeps
    }

    @Test func outageRetriesBackOffOnlyWhileNoBoundaryCanBeReached() {
        // No fence anywhere: the bound's limit (hot_window 7200 s + max_sleep 600 s) is far
        // away, so the retries double from min_sleep up to max_sleep.
        #expect(Self.outageRetries(beyondMeters: .infinity, count: 8) == [10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 600_000, 600_000])
        // Nearest boundary 30 km away (no speed: max-speed bound): reachable from
        // (30000 − 5 − 20)/45 = 666.111 s. Slept 600 s; timeouts at 617 s (slack 666.111 − 2 − 617
        // = 47.1 s > cap 10 s → 10 s), 644 s (slack 20.1 s → min(20, 20.1) = 20 s), then 681 s
        // and on (no slack → the 10 s cap).
        #expect(Self.outageRetries(beyondMeters: 30_000, count: 5) == [10_000, 20_000, 10_000, 10_000, 10_000])
        // Unknown beyond the search radius: as near.
        #expect(Self.outageRetries(beyondMeters: nil, count: 4) == [10_000, 20_000, 10_000, 10_000])
    }

    @Test(arguments: [OutageRule.retry, .wait])
    func regionsOutageRuleOnceABoundaryCanBeReached(_ rule: OutageRule) {
        // At rest 10 km from the nearest boundary: safe for 243.178 s (from 1 m/s, speeding up at
        // 1 m/s² to 45 m/s takes 44 s and 1012 m; the remaining 8963 m at 45 m/s 199.178 s); the
        // wake comes ttff_hot before, at 241.177 s. No fix after it: the hot start's 17 s listen
        // ends at 258.177 s, when nothing is safe any more (slack 243.178 − 2 − 258.177 < 0).
        // `retry` switches off for the 10 s cap: wakes at 268.177, 295.177, 322.177 s; `wait`
        // stays on.
        var p = Self.started(Self.config { $0.outage = rule })
        let f = Self.fix(0, speed: 0)
        let sleep = p.fixReceived(f, context: FixContext(nearestBoundaryMeters: 10_000, searchRadiusMeters: 30_000), now: f.time)
        #expect(Self.wake(sleep) == Self.at(241_177))
        _ = p.deadlineReached(now: Self.at(241_177))
        #expect(p.nextDeadline == Self.at(258_177))
        let run = Self.retryWakes(&p, from: Self.at(258_177))
        switch rule {
        case .retry: #expect(run.wakes.prefix(3) == [268_177, 295_177, 322_177])
        case .wait:
            #expect(run.wakes.isEmpty)
            #expect(run.stop == Self.at(258_177))
            #expect(p.isGNSSOn)
        }

        // A fix that keeps the receiver on (a side undecided, 10 m from a boundary) leaves a
        // boundary reachable at once: at the full 90 s listen's end `retry` wakes at 100 s,
        // `wait` stays on.
        var q = Self.started(Self.config { $0.outage = rule })
        let near = FixContext(nearestBoundaryMeters: 10, searchRadiusMeters: 30_000, allCertain: false)
        #expect(q.fixReceived(f, context: near, now: f.time) == [])
        #expect(q.nextDeadline == Self.at(90_000))
        let a = q.deadlineReached(now: Self.at(90_000))
        switch rule {
        case .retry: #expect(Self.wake(a) == Self.at(100_000))
        case .wait:
            #expect(a == [])
            #expect(q.isGNSSOn)
        }
    }

    @Test func continuousWithOutageRetryRetriesOnceABoundaryCanBeReached() {
        // As in continuousOutagesBackOffOnlyWhileNoBoundaryIsReachable, but `outage: retry`:
        // after the back-off (wakes at 100, 137, 194, 241.177 s) the timeout at 258.177 s
        // switches off for the 10 s cap instead of waiting: 268.177 s.
        var q = Self.started(Self.config(.continuous) { $0.outage = .retry })
        let f = Self.fix(0, speed: 0)
        _ = q.fixReceived(f, context: FixContext(nearestBoundaryMeters: 10_000, searchRadiusMeters: 30_000), now: f.time)
        let run = Self.retryWakes(&q, from: Self.at(90_000))
        #expect(run.wakes.prefix(5) == [100_000, 137_000, 194_000, 241_177, 268_177])
    }

    @Test func fixContextLooksBeyondTheSearchRadiusOnlyWhenNothingIsWithinIt() {
        let c = Self.config()
        let f = Self.fix(0)
        func context(_ index: FenceIndex) -> FixContext {
            FixContext(fix: f, probe: index.probe(f.coordinate, within: .infinity, band: 15), configuration: c,
                       allCertain: true, transitionPending: false, earliestDwellDeadline: nil)
        }
        let none = context(FenceIndex(shapes: []))
        #expect(none.nearestBoundaryMeters == nil)
        #expect(none.boundaryBeyondSearchMeters == .infinity)
        // A 250 m circle 100 km east: beyond the search radius (45 × 630 + 50 + 20 = 28,420 m).
        // (`point` spaces by 111,195.08 m a degree; WGS84 has 111,319.49 m at the equator, so the
        // centre is 100,111.9 m away and the boundary 99,861.9 m.)
        let far = FenceIndex(shapes: [.circle(center: Self.point(100_000), radiusMeters: 250)])
        let c1 = context(far)
        #expect(c1.nearestBoundaryMeters == nil)
        #expect(abs((c1.boundaryBeyondSearchMeters ?? 0) - 99_861.9) < 1)
        #expect(abs(c1.outageDistanceMeters - 99_861.9) < 1)
        // Within the radius: the nearest boundary, and nothing beyond.
        let near = FenceIndex(shapes: [.circle(center: Self.point(1_000), radiusMeters: 250)])
        let c2 = context(near)
        #expect(abs((c2.nearestBoundaryMeters ?? 0) - 751.1) < 0.5)
        #expect(c2.boundaryBeyondSearchMeters == nil)
    }

    @Test func warmStartsListenTheFullFixTimeout() {
        // At start (warm, 30 s TTFF) the receiver waits fix_timeout, 90 s.
        let p = Self.started(Self.config())
        #expect(p.nextDeadline == Self.at(90_000))
        // Before any fix nothing says the receiver's ephemerides are current: a retry after a
        // fix timeout starts warm too, and listens as long beyond ttff_warm as a short listen
        // does beyond ttff_hot: 30 + 15 = 45 s.
        var q = p
        _ = q.deadlineReached(now: Self.at(90_000))
        #expect(q.deadlineReached(now: Self.at(100_000)) == [.gnssOn(PowerReason(.retry, ttff: .seconds(30)))])
        #expect(q.nextDeadline == Self.at(145_000))
        // After a fix, retries start hot and listen short (17 s).
        let f = Self.fix(160_000)
        _ = q.deadlineReached(now: Self.at(145_000))
        _ = q.deadlineReached(now: Self.at(155_000))
        _ = q.fixReceived(f, context: FixContext(nearestBoundaryMeters: 0, searchRadiusMeters: 30000, allCertain: false), now: f.time)
        #expect(q.nextDeadline == Self.at(250_000))
        _ = q.deadlineReached(now: Self.at(250_000))
        #expect(q.deadlineReached(now: Self.at(260_000)) == [.gnssOn(PowerReason(.retry, ttff: .seconds(2)))])
        #expect(q.nextDeadline == Self.at(277_000))
    }

    @Test func ephemeridesAgeFromTheLastFixNotFromASwitchOff() {
        // hot_window 60 s. A fix at 0, then an outage: retries switch the receiver on and off
        // every few seconds, but no fix refreshes what the receiver knows. From 60 s after the
        // fix every start is warm (30 s), and a retry listens 30 + 15 = 45 s.
        var p = Self.started(Self.config { $0.hotWindow = .seconds(60) })
        let f = Self.fix(0)
        _ = p.fixReceived(f, context: FixContext(nearestBoundaryMeters: 0, searchRadiusMeters: 30000, allCertain: false), now: f.time)
        #expect(p.nextDeadline == Self.at(90_000))
        _ = p.deadlineReached(now: Self.at(90_000))
        #expect(p.expectedTTFF(at: Self.at(100_000)) == .seconds(30))
        #expect(p.deadlineReached(now: Self.at(100_000)) == [.gnssOn(PowerReason(.retry, ttff: .seconds(30)))])
        #expect(p.nextDeadline == Self.at(145_000))
        // A fix at 120 s ends it: hot again.
        let g = Self.fix(120_000)
        _ = p.fixReceived(g, context: FixContext(nearestBoundaryMeters: 0, searchRadiusMeters: 30000, allCertain: false), now: g.time)
        #expect(p.expectedTTFF(at: Self.at(179_999)) == .seconds(2))
        #expect(p.expectedTTFF(at: Self.at(180_000)) == .seconds(30))
    }

    @Test func warmStartAfterHotWindow() {
        var p = Self.started(Self.config { $0.hotWindow = .seconds(60) })
        let f = Self.fix(0)
        _ = p.fixReceived(f, context: FixContext(nearestBoundaryMeters: nil, searchRadiusMeters: 30000), now: f.time)
        // Off at 0 for 600 s > hot_window 60 s: warm (and the sleep was planned with the warm TTFF).
        #expect(p.expectedTTFF(at: Self.at(59_000)) == .seconds(2))
        #expect(p.expectedTTFF(at: Self.at(60_000)) == .seconds(30))
        #expect(p.deadlineReached(now: Self.at(600_000)) == [.gnssOn(PowerReason(.scheduledWake, ttff: .seconds(30)))])
    }

    @Test func sleepsReachingTheHotWindowArePlannedForAWarmStart() {
        // hot_window 60 s. Boundary 3000 m: horizon (3000 − 25)/45 = 66.111 s. A hot plan sleeps
        // 64.111 s ≥ 60 s, which would wake warm; a warm plan sleeps 36.111 s < 60 s, so the
        // policy wakes 1 ms before the hot window closes: 59.999 s, hot.
        var p = Self.started(Self.config { $0.hotWindow = .seconds(60) })
        let f = Self.fix(0)
        let a = p.fixReceived(f, context: FixContext(nearestBoundaryMeters: 3000, searchRadiusMeters: 30000), now: f.time)
        #expect(Self.wake(a) == Self.at(59_999))
        #expect(p.expectedTTFF(at: Self.at(59_999)) == .seconds(2))
        // Boundary 6000 m: horizon 132.78 s; warm plan 102.78 s ≥ 60 s → wake at 102.777 s, warm.
        var q = Self.started(Self.config { $0.hotWindow = .seconds(60) })
        let b = q.fixReceived(f, context: FixContext(nearestBoundaryMeters: 6000, searchRadiusMeters: 30000), now: f.time)
        #expect(Self.wake(b) == Self.at(102_777))
        #expect(b.first?.reason.ttff == .seconds(30))
    }

    @Test func fixTimeoutsBackOffFromMinSleepToTheCap() {
        var p = Self.started(Self.config { $0.maxFixTimeoutRetry = .seconds(60) })
        var now = Self.at(0)
        var sleeps: [Int64] = []
        for _ in 0..<6 {
            now = now + .seconds(90)
            let off = p.deadlineReached(now: now)
            guard let wake = Self.wake(off) else {
                Issue.record("no wake after timeout: \(off)")
                return
            }
            sleeps.append((wake - now).wholeMilliseconds / 1000)
            #expect(p.deadlineReached(now: wake).count == 1)
            now = wake
        }
        #expect(sleeps == [10, 20, 40, 60, 60, 60])
        // A fix resets the back-off.
        let f = Self.fix((now - Self.t0).wholeMilliseconds + 1000)
        _ = p.fixReceived(f, context: FixContext(nearestBoundaryMeters: 0, searchRadiusMeters: 30000, allCertain: false), now: f.time)
        let off = p.fixTimedOut(now: f.time + .seconds(90))
        #expect(Self.wake(off) == f.time + .seconds(100))
    }

    @Test func defaultFixTimeoutRetryIsConstantMinSleep() {
        var p = Self.started(Self.config())
        let first = p.deadlineReached(now: Self.at(90_000))
        #expect(first == [.gnssOff(PowerReason(.fixTimeout, sleep: .seconds(10))), .wakeAt(Self.at(100_000), PowerReason(.fixTimeout, sleep: .seconds(10)))])
        _ = p.deadlineReached(now: Self.at(100_000))
        #expect(p.nextDeadline == Self.at(145_000))
        #expect(Self.wake(p.deadlineReached(now: Self.at(145_000))) == Self.at(155_000))
    }

    /// Drives deadlines from `start` while each one schedules a wake: the wake times (ms from t0)
    /// and the time the loop stopped at (a listen that ended without a wake).
    static func retryWakes(_ p: inout PowerPolicy, from start: UTCTime) -> (wakes: [Int64], stop: UTCTime) {
        var now = start
        var wakes: [Int64] = []
        while let w = Self.wake(p.deadlineReached(now: now)), wakes.count < 20 {
            wakes.append((w - Self.t0).wholeMilliseconds)
            _ = p.deadlineReached(now: w)
            guard let next = p.nextDeadline else { break }
            now = next
        }
        return (wakes, now)
    }

    @Test func continuousOutagesBackOffOnlyWhileNoBoundaryIsReachable() {
        // No fix yet: regions' retries, every min_sleep (the 10 s cap), each a warm start
        // listening ttff_warm + 15 s = 45 s.
        var p = Self.started(Self.config(.continuous))
        #expect(p.nextDeadline == Self.at(90_000))
        let first = Self.retryWakes(&p, from: Self.at(90_000))
        #expect(first.wakes.prefix(3) == [100_000, 155_000, 210_000])

        // At rest 10 km from the nearest boundary: no boundary reachable for 243.178 s (1 m/s
        // speeding up at 1 m/s² to 45 m/s: 44 s and 1012 m, then 8963 m at 45 m/s). Tracking
        // waits the full 90 s; then off, retrying after 10, 20, 40 s while the wake is ttff_hot
        // before 243.178 s: off at 90 → 100, listen to 117 → 137, to 154 → 194, to 211 → 241.177
        // (the slack, 30.177 s, under the doubled 40 s), to 258.177: no slack left, so it stays on
        // and waits, as a receiver in a tunnel would.
        var q = Self.started(Self.config(.continuous))
        let f = Self.fix(0, speed: 0)
        #expect(q.fixReceived(f, context: FixContext(nearestBoundaryMeters: 10_000, searchRadiusMeters: 30_000), now: f.time) == [])
        #expect(q.nextDeadline == Self.at(90_000))
        let run = Self.retryWakes(&q, from: Self.at(90_000))
        #expect(run.wakes == [100_000, 137_000, 194_000, 241_177])
        #expect(run.stop == Self.at(258_177))
        #expect(q.isGNSSOn)
        #expect(q.deadlineReached(now: Self.at(275_177)) == [])

        // Always-on never gives up.
        var a = Self.started(Self.config(.continuous) { $0.alwaysOn = true })
        #expect(a.nextDeadline == nil)
        #expect(a.fixTimedOut(now: Self.at(90_000)) == [])
        #expect(a.isGNSSOn)
    }

    @Test func poorFixesCertainlyAwayFromWhereTheDeviceStoodEndTheStand() {
        // Regions, 20 m from a boundary (the receiver stays on): a good fix at 0 m, then fixes
        // of 80 m accuracy (poorer than min_accuracy 50 m: they decide nothing) moving east
        // 200 m every 10 s for 700 s. They cannot anchor a stand, but the first one certainly
        // beyond 50 m of it (250 m − 80 m) ends it: no stationary check past stationary.timeout.
        var p = Self.started(Self.config())
        let near = FixContext(nearestBoundaryMeters: 20, searchRadiusMeters: 30_000)
        _ = p.fixReceived(Self.fix(0), context: near, now: Self.at(0))
        var kinds: [PowerReason.Kind] = []
        for s in stride(from: 10, through: 700, by: 10) {
            let f = Self.fix(Int64(s) * 1000, east: Double(s) * 20, acc: 80)
            kinds += p.fixReceived(f, context: near, now: f.time).map(\.reason.kind)
        }
        #expect(!kinds.contains(.stationary), "\(kinds)")
        // Poor fixes that stay within reach of the stand leave it standing: after the timeout
        // (300 s), a check.
        var q = Self.started(Self.config())
        _ = q.fixReceived(Self.fix(0), context: near, now: Self.at(0))
        var standing: [PowerReason.Kind] = []
        for s in stride(from: 10, through: 310, by: 10) {
            let f = Self.fix(Int64(s) * 1000, east: 30, acc: 80)
            standing += q.fixReceived(f, context: near, now: f.time).map(\.reason.kind)
        }
        #expect(standing.contains(.stationary), "\(standing)")
    }

    @Test func continuousStationaryCheckWithoutAFixKeepsTheSchedule() {
        // No fence: the last fix is safe for the search radius, 44 + (29975 − 1012) / 45 = 687.622 s
        // (from 1 m/s up to 45 m/s at 1 m/s², then 45 m/s).
        var p = Self.started(Self.config(.continuous))
        let ctx = FixContext(nearestBoundaryMeters: nil, searchRadiusMeters: 30000)
        for s in stride(from: 0, to: 300, by: 10) {
            let f = Self.fix(Int64(s) * 1000, speed: 0)
            _ = p.fixReceived(f, context: ctx, now: f.time)
        }
        let f300 = Self.fix(300_000, speed: 0)
        #expect(Self.wake(p.fixReceived(f300, context: ctx, now: f300.time)) == Self.at(310_000))
        // Checks listen 17 s (hot start); none gets a fix. The interval doubles, and the last wake
        // is ttff_hot before 987.622 s (300 s + 687.622 s): off at 327 → 347, 364 → 404, 421 → 501,
        // 518 → 678, 695 → min(320, 987.622 − 2 − 695 = 290.622) → 985.622; after that min_sleep.
        #expect(p.deadlineReached(now: Self.at(310_000)) == [.gnssOn(PowerReason(.stationaryCheck, ttff: .seconds(2)))])
        #expect(p.nextDeadline == Self.at(327_000))
        let run = Self.retryWakes(&p, from: Self.at(327_000))
        #expect(run.wakes.prefix(6) == [347_000, 404_000, 501_000, 678_000, 985_622, 1_012_622])
    }

    @Test func continuousStationaryChecksWakeBeforeABoundaryCouldBeReached() {
        // At rest 1000 m from a boundary: safe for max(975 / 45 = 21.7 s, kinematic
        // −1 + √1951 = 43.170 s); checks come at most 43.170 − 2 = 41.170 s after a fix.
        var p = Self.started(Self.config(.continuous))
        let ctx = FixContext(nearestBoundaryMeters: 1000, searchRadiusMeters: 30000)
        for s in stride(from: 0, to: 300, by: 10) {
            let f = Self.fix(Int64(s) * 1000, speed: 0)
            #expect(p.fixReceived(f, context: ctx, now: f.time) == [])
        }
        let f300 = Self.fix(300_000, speed: 0)
        var now = Self.wake(p.fixReceived(f300, context: ctx, now: f300.time)) ?? f300.time
        #expect(now == Self.at(310_000))
        var intervals: [Int64] = []
        for _ in 0..<4 {
            _ = p.deadlineReached(now: now)
            let f = Fix(time: now + .seconds(2), coordinate: Self.point(0), horizontalAccuracyMeters: 5, speedMetersPerSecond: 0)
            guard let wake = Self.wake(p.fixReceived(f, context: ctx, now: f.time)) else {
                Issue.record("expected another check")
                return
            }
            intervals.append((wake - f.time).wholeMilliseconds)
            now = wake
        }
        #expect(intervals == [20_000, 40_000, 41_170, 41_170])
    }

    // MARK: continuous: stationary detection

    @Test func continuousGoesOffWhenStationaryAndChecksBackOnAGrowingInterval() {
        var p = Self.started(Self.config(.continuous))
        let ctx = FixContext(nearestBoundaryMeters: nil, searchRadiusMeters: 30000)
        // 1 Hz fixes jittering within 30 m for 300 s.
        for s in 0..<300 {
            let f = Self.fix(Int64(s) * 1000, east: Double(s % 3) * 10)
            #expect(p.fixReceived(f, context: ctx, now: f.time) == [])
        }
        let f300 = Self.fix(300_000, east: 5)
        let off = p.fixReceived(f300, context: ctx, now: f300.time)
        #expect(off == [.gnssOff(PowerReason(.stationary, sleep: .seconds(10))), .wakeAt(Self.at(310_000), PowerReason(.stationary, sleep: .seconds(10)))])
        var now = Self.at(310_000)
        var intervals: [Int64] = []
        for _ in 0..<7 {
            #expect(p.deadlineReached(now: now) == [.gnssOn(PowerReason(.stationaryCheck, ttff: .seconds(2)))])
            let f = Fix(time: now + .seconds(2), coordinate: Self.point(20), horizontalAccuracyMeters: 5)
            let a = p.fixReceived(f, context: ctx, now: f.time)
            guard let wake = Self.wake(a) else {
                Issue.record("expected another check: \(a)")
                return
            }
            intervals.append((wake - f.time).wholeMilliseconds / 1000)
            now = wake
        }
        #expect(intervals == [20, 40, 80, 160, 320, 600, 600])
        // Leaving the radius resumes continuous tracking.
        #expect(p.deadlineReached(now: now).count == 1)
        let moved = Fix(time: now + .seconds(2), coordinate: Self.point(200), horizontalAccuracyMeters: 5)
        #expect(p.fixReceived(moved, context: ctx, now: moved.time) == [])
        #expect(p.isGNSSOn)
        #expect(p.nextDeadline == moved.time + .seconds(90))    // tracking: the full fix_timeout
    }

    @Test func regionsStationaryNearAnUncertainBoundaryChecksBack() {
        var p = Self.started(Self.config())
        let ctx = FixContext(nearestBoundaryMeters: 5, searchRadiusMeters: 30000, allCertain: false)
        for s in stride(from: 0, to: 300, by: 10) {
            let f = Self.fix(Int64(s) * 1000)
            #expect(p.fixReceived(f, context: ctx, now: f.time) == [])
        }
        let f = Self.fix(300_000)
        #expect(Self.wake(p.fixReceived(f, context: ctx, now: f.time)) == Self.at(310_000))
    }

    // MARK: coarse fixes in regions mode

    @Test func regionsWithACoarseSourceSleepsLongerFarFromFencesAndWakesNearOne() {
        var p = Self.started(Self.config { $0.coarseConfigured = true })
        #expect(p.isCoarseOn)
        // A GNSS fix 2,000 m from the nearest boundary: sleep (2000 − 5 − 20) / 45 = 43.9 s.
        let gnss = Self.fix(0)
        let slept = p.fixReceived(gnss, context: FixContext(nearestBoundaryMeters: 2000, searchRadiusMeters: 30000), now: gnss.time)
        let firstWake = try! #require(Self.wake(slept))
        // A coarse fix 30 s later, ±500 m, 20 km from every boundary: nothing is reachable from
        // anywhere in its circle for (20000 − 500 − 20) / 45 = 432.9 s; less ttff_hot 2 s.
        let far = Self.fix(30_000, acc: 500, source: .coarse)
        let later = p.fixReceived(far, context: FixContext(nearestBoundaryMeters: 20_000, searchRadiusMeters: 30000), now: far.time)
        #expect(later == [.wakeAt(Self.at(30_000 + 430_888), PowerReason(.coarseFar, distanceMeters: 20_000, accuracyMeters: 500, sleep: .milliseconds(430_888)))])
        #expect(p.nextDeadline == Self.at(460_888) && Self.at(460_888) > firstWake)
        #expect(!p.isGNSSOn)
        // A coarse fix whose circle reaches a boundary (400 ≤ 500 + 20): GNSS now.
        let near = Self.fix(60_000, acc: 500, source: .coarse)
        let on = p.fixReceived(near, context: FixContext(nearestBoundaryMeters: 400, searchRadiusMeters: 30000), now: near.time)
        #expect(on == [.gnssOn(PowerReason(.coarseNearFence, distanceMeters: 400, accuracyMeters: 500, ttff: .seconds(2)))])
        // While GNSS is on, coarse fixes change nothing.
        let whileOn = Self.fix(61_000, acc: 500, source: .coarse)
        #expect(p.fixReceived(whileOn, context: FixContext(nearestBoundaryMeters: 20_000, searchRadiusMeters: 30000), now: whileOn.time) == [])
    }

    /// Coarse fixes far from every fence keep GNSS off past `hot_window`: the wake they plan
    /// then allows a warm start, so its first fix still comes before a boundary can be reached.
    @Test func aCoarseFarWakePastTheHotWindowAllowsAWarmStart() {
        var p = Self.started(Self.config {
            $0.coarseConfigured = true
            $0.hotWindow = .seconds(300)
            $0.ttffWarm = .seconds(30)
        })
        let gnss = Self.fix(0)
        _ = p.fixReceived(gnss, context: FixContext(nearestBoundaryMeters: 20_000, searchRadiusMeters: 30000), now: gnss.time)
        // A boundary is reachable from anywhere in the circle (20000 − 500 − 20) / 45 =
        // 432.888 s after the coarse fix, when the GNSS fix is 532.888 s old: a warm start.
        let far = Self.fix(100_000, acc: 500, source: .coarse)
        let wake = Self.wake(p.fixReceived(far, context: FixContext(nearestBoundaryMeters: 20_000, searchRadiusMeters: 30000), now: far.time))
        #expect(wake == Self.at(100_000 + 432_888 - 30_000))
        #expect(p.expectedTTFF(at: try! #require(wake)) == .seconds(30))
    }

    @Test func aCoarseFixNeverShortensOrExtendsPastMaxSleep() {
        var p = Self.started(Self.config { $0.coarseConfigured = true })
        let gnss = Self.fix(0)
        let wake = try! #require(Self.wake(p.fixReceived(gnss, context: FixContext(nearestBoundaryMeters: 20_000, searchRadiusMeters: 30000), now: gnss.time)))
        // Closer than GNSS said, but not within reach: the planned wake stays (never earlier).
        let closer = Self.fix(10_000, acc: 500, source: .coarse)
        #expect(p.fixReceived(closer, context: FixContext(nearestBoundaryMeters: 5_000, searchRadiusMeters: 30000), now: closer.time) == [])
        #expect(p.nextDeadline == wake)
        // Nothing within the search radius: at most max_sleep (600 s) from now.
        let none = Self.fix(20_000, acc: 500, source: .coarse)
        #expect(Self.wake(p.fixReceived(none, context: FixContext(nearestBoundaryMeters: nil, searchRadiusMeters: 30000), now: none.time)) == Self.at(620_000))
        // A finite but absurd accuracy (10^20 m) with nothing within the search radius: its
        // circle reaches everything at once, so the planned wake stays (no trap converting it).
        let absurd = Self.fix(30_000, acc: 1e20, source: .coarse)
        #expect(p.fixReceived(absurd, context: FixContext(nearestBoundaryMeters: nil, searchRadiusMeters: 30000), now: absurd.time) == [])
        #expect(p.nextDeadline == Self.at(620_000))
    }

    // MARK: significant change

    @Test func significantChangeWakesGNSSNearAFenceOnlyWhenConfigured() {
        var p = Self.started(Self.config(.significantChange))
        let far = Self.fix(0, acc: 500, source: .coarse)
        #expect(p.fixReceived(far, context: FixContext(nearestBoundaryMeters: 5000, searchRadiusMeters: 30000), now: far.time) == [])
        // 300 m ≤ 500 m accuracy + 20 m margin: a fence may be right here.
        let near = Self.fix(300_000, acc: 500, source: .coarse)
        let on = p.fixReceived(near, context: FixContext(nearestBoundaryMeters: 300, searchRadiusMeters: 30000), now: near.time)
        #expect(on == [.gnssOn(PowerReason(.coarseNearFence, distanceMeters: 300, accuracyMeters: 500, ttff: .seconds(30)))])
        let unsure = Self.fix(330_000)
        #expect(p.fixReceived(unsure, context: FixContext(nearestBoundaryMeters: 3, searchRadiusMeters: 30000, allCertain: false), now: unsure.time) == [])
        let sure = Self.fix(331_000)
        #expect(p.fixReceived(sure, context: FixContext(nearestBoundaryMeters: 40, searchRadiusMeters: 30000), now: sure.time)
            == [.gnssOff(PowerReason(.certain, distanceMeters: 40, accuracyMeters: 5))])
        #expect(p.isCoarseOn)
        #expect(p.nextDeadline == nil)

        var coarseOnly = Self.started(Self.config(.significantChange) { $0.gnssConfigured = false })
        #expect(coarseOnly.fixReceived(near, context: FixContext(nearestBoundaryMeters: 300, searchRadiusMeters: 30000), now: near.time) == [])
    }

    // MARK: implausible jumps

    @Test func implausibleJumpIsHeldUntilConfirmed() {
        var p = Self.started(Self.config())
        let a = Self.fix(0)
        let jump = Self.fix(1000, east: 1000)       // 1000 − 10 m in 1 s ≫ 45 m/s
        let confirm = Self.fix(2000, east: 1030)     // 30 m from the jump in 1 s: plausible
        #expect(p.screen(a) == .pass([a]))
        #expect(p.screen(jump) == .held)
        #expect(p.screen(confirm) == .pass([jump, confirm]))
    }

    @Test func outlierIsDroppedWhenTheNextFixAgreesWithTheTrack() {
        var p = Self.started(Self.config())
        let a = Self.fix(0)
        let spike = Self.fix(1000, east: 800)
        let back = Self.fix(2000, east: 20)
        #expect(p.screen(a) == .pass([a]))
        #expect(p.screen(spike) == .held)
        #expect(p.screen(back) == .pass([back]))
        // Accuracy is allowed for: 100 m in 1 s with 30 m + 30 m accuracy is 40 m/s.
        let wide = Fix(time: Self.at(3000), coordinate: Self.point(120), horizontalAccuracyMeters: 30)
        var q = Self.started(Self.config())
        _ = q.screen(Fix(time: Self.at(2000), coordinate: Self.point(20), horizontalAccuracyMeters: 30))
        #expect(q.screen(wide) == .pass([wide]))
    }

    @Test func reasonsPrintAsKeyValueLines() {
        let r = PowerReason(.sleep, bound: .kinematic, distanceMeters: 812.4, accuracyMeters: 5, speedMetersPerSecond: 13.24, sleep: .milliseconds(74_200), ttff: .seconds(2))
        #expect(r.text == "sleep bound=kinematic d=812m acc=5m v=13.2m/s sleep=74.2s ttff=2s")
        #expect(PowerAction.wakeAt(Self.at(0), PowerReason(.fixTimeout)).text == "wake-at 2023-11-14T22:13:20Z fix-timeout")
    }
}
