import Foundation
import GeomonCore
import GeomonDaemon
import GeomonEvaluation
import GeomonTestSupport
import Testing

/// The power policy on the real tracks (`PowerTracks`): regions mode, 250 m circles along the
/// tracks, the real engine and driver (`ReplayRun`), against always-on.
///
/// `swift test --filter PowerEvaluation` runs the checks (CI) and prints the per-track
/// figures; the figures are bounds one way only: a better policy never fails a test.
@Suite struct PowerEvaluationTests {
    /// The evaluation profile: regions mode with the evaluation's knobs, fences along `track`.
    static func profile(track: [Fix], spacingMeters: Double) -> Profile {
        var profile = Profile(name: "power-eval", mode: .regions)
        profile.sources.gnss = GNSSSourceSettings()
        profile.policy.maxSpeedMetersPerSecond = 45
        profile.policy.wakeMarginMeters = 20
        profile.policy.minSleep = .seconds(10)
        profile.policy.maxSleep = .seconds(600)
        profile.policy.receiver.ttffHot = .seconds(2)
        profile.fences = PowerTracks.fences(along: track, spacingMeters: spacingMeters).enumerated().map {
            Fence(id: "f\($0.offset)", shape: $0.element)
        }
        return profile
    }

    /// - Parameters:
    ///   - activity: `policy.activity` in place of the profile's `max_speed` (nil: the profile's).
    ///   - receiverTTFFHot: the modelled receiver's hot start (nil: the planned 2 s).
    static func evaluate(_ name: String, spacingMeters: Double, maxLatency: Duration? = nil, activity: Activity? = nil,
                         receiverTTFFHot: Duration? = nil, power: GNSSPowerMethod? = nil) throws -> ReplayRun {
        let track = try PowerTracks.load(name)
        var options = ReplayRun.Options()
        options.compareAlwaysOn = true
        options.receiverTTFFHot = receiverTTFFHot
        var profile = profile(track: track, spacingMeters: spacingMeters)
        if let maxLatency { profile.policy.maxLatency = maxLatency }
        if let power { profile.sources.gnss?.power = power }
        if let activity {
            profile.policy.activity = activity
            profile.policy.maxSpeedSet = false
        }
        return try ReplayRun.evaluate(profile: profile, fixes: track, options: options)
    }

    struct FastCase: Sendable, CustomTestStringConvertible {
        var track: String
        var spacingMeters: Double
        var testDescription: String { "\(track) every \(Int(spacingMeters)) m" }
    }

    static let fastCases = [
        FastCase(track: "genivi_20100403_Z205_Switzerland_short", spacingMeters: 500),
        FastCase(track: "gpxpy_korita-zbevnica", spacingMeters: 2000),
    ]

    @Test(arguments: fastCases)
    func policyFindsEveryAlwaysOnEventWithLessOnTime(_ c: FastCase) throws {
        let run = try Self.evaluate(c.track, spacingMeters: c.spacingMeters)
        let match = try #require(run.match)
        let report = try #require(run.report), baseline = try #require(run.baselineReport)
        #expect((run.baselineEvents?.count ?? 0) >= 1)
        #expect(match.recall == 1.0, "missed \(match.missed.map { "\($0.fenceID ?? "-") \($0.kind) \($0.time)" })")
        #expect((match.latencyP95Seconds ?? 0) <= 60)
        #expect(report.gnssOnSeconds < 0.8 * baseline.gnssOnSeconds)
        #expect(try #require(run.oracle).gnssOnSeconds <= report.gnssOnSeconds)
    }

    /// docs/power.md's tables: every track, 2 km and 10 km spacing, the defaults (`max_latency`
    /// 30 s, gaps up to 60 s bridged, 1 Hz tracking). The on-time share of always-on summed over
    /// the tracks must stay at most the target (measured: 14.8 % and 6.7 %), recall 1
    /// and no extra event, the latency p95 over all events at most 60 s, and every event within
    /// `max_latency` plus the time of the two recorded fixes after the always-on one.
    @Test(arguments: [(2000.0, 18.0), (10000.0, 7.0)])
    func targetsOnAllTracks(spacingMeters: Double, target: Double) throws {
        var on = 0.0, base = 0.0, latencies: [Double] = []
        print("spacing \(Int(spacingMeters)) m | track | % of always-on | recall | p95 s")
        for name in PowerTracks.names {
            let track = try PowerTracks.load(name)
            let run = try Self.evaluate(name, spacingMeters: spacingMeters)
            let match = try #require(run.match)
            let report = try #require(run.report), baseline = try #require(run.baselineReport)
            on += report.gnssOnSeconds
            base += baseline.gnssOnSeconds
            print("| \(name) | \(100 * report.gnssOnSeconds / baseline.gnssOnSeconds) | \(match.recall) | \(match.latencyP95Seconds ?? 0) |")
            #expect(match.recall == 1.0, "\(name): missed \(match.missed.map { "\($0.fenceID ?? "-") \($0.kind) \($0.time)" })")
            #expect(match.extra == 0, "\(name)")
            latencies += match.latenciesSeconds
            let events = try #require(run.baselineEvents).sorted { ($0.time, $0.id) < ($1.time, $1.id) }
            for (event, latency) in zip(events, match.latenciesSeconds) {
                let after = track.lazy.filter { $0.time > event.time }.prefix(2).map(\.time)
                let allowance = 30 + (after.last.map { ($0 - event.time).secondsValue } ?? 0)
                #expect(latency <= allowance + 1e-6, "\(name): \(event.fenceID ?? "-") \(event.kind) \(event.time) \(latency) s late")
            }
        }
        print("all: \(100 * on / base) % of always-on")
        #expect(100 * on / base <= target, "\(100 * on / base) % of always-on")
        // p95 over every event of every track (nearest rank), as the tables' "all" row.
        let sorted = latencies.sorted()
        #expect(!sorted.isEmpty && sorted[Int((0.95 * Double(sorted.count)).rounded(.up)) - 1] <= 60)
    }

    /// The latency budget against the rules without it (`max_latency: 0`), track by track: no
    /// track above what the rules without a budget give it, except where those rules buy their
    /// figure with `min_sleep` clamps that can lose a visit (docs/power.md, "Why the drives
    /// cannot have both"): drives, bike rides and the run, where the budget may cost at most 7
    /// points of always-on. In total the budget saves at least a quarter. One-sided: a budget
    /// that does better never fails. Where the two runs' watches widened the bounds differently
    /// (their sleeps spanned different stretches: the Munich drive's receiver repeats a stale
    /// position at 0 m/s for 20 s, then jumps 470 m on), each plans with its own bounds for the
    /// rest of the trip: that on-time is not the budget's to answer for, and only recall is
    /// compared.
    @Test(arguments: [2000.0, 10000.0])
    func noTrackAboveTheRulesWithoutABudget(spacingMeters: Double) throws {
        var on = (budget: 0.0, none: 0.0)
        print("spacing \(Int(spacingMeters)) m | track | kind | % with the budget | % without")
        for (name, kind) in PowerTracks.kinds {
            let budget = try Self.evaluate(name, spacingMeters: spacingMeters)
            let none = try Self.evaluate(name, spacingMeters: spacingMeters, maxLatency: .zero)
            let a = try #require(budget.report), b = try #require(none.report), base = try #require(budget.baselineReport)
            let shareA = 100 * a.gnssOnSeconds / base.gnssOnSeconds, shareB = 100 * b.gnssOnSeconds / base.gnssOnSeconds
            print("| \(name) | \(kind) | \(shareA) | \(shareB) |")
            on.budget += a.gnssOnSeconds
            on.none += b.gnssOnSeconds
            let allowance = ["drive", "bike", "run"].contains(kind) ? 7.0 : 0.0
            let widened = (budget: budget.source?.receiver.violations.map(\.widened) ?? [], none: none.source?.receiver.violations.map(\.widened) ?? [])
            if widened.budget == widened.none {
                #expect(shareA <= shareB + allowance + 1e-9, "\(name) (\(kind)): \(shareA) % with the budget, \(shareB) % without")
            } else {
                print("| \(name) | \(kind) | bounds widened to \(widened.budget.map(\.text)) with the budget, \(widened.none.map(\.text)) without: on-time not compared |")
                // Only the recordings known to break the acceleration bound.
                #expect(["barefoot_x0001-001", "openrailrouting_00c03ac99213"].contains(name), "\(name): on-time not compared")
            }
            #expect(try #require(budget.match).recall >= (try #require(none.match)).recall, "\(name)")
        }
        #expect(on.budget <= 0.75 * on.none, "\(on.budget) s with the budget, \(on.none) s without")
    }

    /// The Munich drive's receiver repeats a stale position at 0 m/s for 20 s (05:04:07 to
    /// 05:04:26) and then jumps 470 m on. A sleep planned from that 0 m/s spans it: the wake's
    /// fix lies farther than the kinematic bound reached from 0 m/s (plus the 20 m margin),
    /// within 45 m/s. The watch holds it, the next fix bears it out, and the acceleration
    /// bound widens to 1.5 × what the positions needed; every event is still found.
    @Test func aReceiverRepeatingAStalePositionBreaksTheAccelerationBound() throws {
        let run = try Self.evaluate("barefoot_x0001-001", spacingMeters: 2000)
        let first = try #require(run.source?.receiver.violations.first)
        #expect(first.kind == .acceleration)
        let freeze = try #require(UTCTime(rfc3339: "2014-09-10T05:04:26Z")), after = try #require(UTCTime(rfc3339: "2014-09-10T05:05:30Z"))
        #expect(first.time > freeze && first.time < after, "\(first.time.rfc3339)")
        let needed = try #require(first.observedAcceleration)
        #expect(needed > first.planned.maxAccelerationMetersPerSecondSquared)
        #expect(first.widened.maxAccelerationMetersPerSecondSquared >= 1.5 * needed - 1e-9)
        #expect(first.widened.maxSpeedMetersPerSecond == first.planned.maxSpeedMetersPerSecond)
        #expect(try #require(run.match).recall >= 1)
    }

    /// The same drive with a coarse source beside GNSS (fixes every 60 s at ±500 m, derived
    /// from the track as `scripts/power-eval.sh --coarse 500m` does; fences every ~3 km): a
    /// coarse fix near a fence wakes GNSS 44 s after a fix that reported the car standing,
    /// 1,156 m on. The wake's fix is judged against that GNSS fix, not the coarse one in
    /// between, so the acceleration bound it breaks is seen (docs/power.md, "Coarse fixes in regions mode").
    @Test func aCoarseFixDuringASleepDoesNotHideAViolationOfItsBounds() throws {
        let track = try PowerTracks.load("barefoot_x0001-001")
        var profile = Self.profile(track: track, spacingMeters: 3000)
        var coarse = CoarseSourceSettings()
        coarse.exec = ["/bin/true"]
        coarse.interval = .seconds(60)
        coarse.expectedAccuracyMeters = 500
        profile.sources.coarse = coarse
        profile.sources.gnss?.power = .ubx
        var options = ReplayRun.Options()
        options.compareAlwaysOn = true
        let run = try ReplayRun.evaluate(profile: profile, fixes: track, options: options)
        let first = try #require(run.source?.receiver.violations.first)
        #expect(first.kind == .acceleration)
        let freeze = try #require(UTCTime(rfc3339: "2014-09-10T05:04:07Z")), after = try #require(UTCTime(rfc3339: "2014-09-10T05:05:30Z"))
        #expect(first.time > freeze && first.time < after, "\(first.time.rfc3339)")
        #expect(try #require(first.observedAcceleration) > first.planned.maxAccelerationMetersPerSecondSquared)
        #expect(try #require(run.match).recall >= 1)
    }

    /// A ship that waited days at anchor before its transit (AIS every 12–15 min, bridged up
    /// to three median intervals as `scripts/power-eval.sh` does), with a motion sensor derived
    /// from the recording: it swings round its anchor across a fence's boundary at under
    /// 0.5 m/s, which an accelerometer cannot feel. The still check-backs
    /// (`sources.motion.creep_speed`) see those crossings: recall as without a sensor, no more
    /// extra events, and less on-time than without one. What either may miss is at a lone
    /// recorded report between two outages (03:07, after 99 minutes without a report and
    /// before 51 more; 13:41, between gaps of almost four hours): always-on, on through both,
    /// sees it; a policy probing the outages (3 s in every 29 s once it has measured its
    /// receiver's hot starts) sees it only by phase
    /// (docs/power.md, "Misses where a recording resumes").
    @Test func aShipSwingingAtAnchorIsCheckedOnWhileTheSensorSaysStill() throws {
        let track = try PowerTracks.load("movingpandas_suez_ship_underway_131")
        var profile = Self.profile(track: track, spacingMeters: 2000)
        profile.policy.activity = .boat
        profile.policy.maxSpeedSet = false
        var options = ReplayRun.Options()
        options.compareAlwaysOn = true
        options.interpolationMaxGap = .seconds(2700)
        let without = try ReplayRun.evaluate(profile: profile, fixes: track, options: options)
        options.motion = true
        let with = try ReplayRun.evaluate(profile: profile, fixes: track, options: options)
        let m = try #require(with.match), m0 = try #require(without.match)
        let on = try #require(with.report).gnssOnSeconds, on0 = try #require(without.report).gnssOnSeconds
        print("suez ship at anchor, then under way: recall \(m.recall) with a sensor (\(m0.recall) without), on \(on) s (\(on0) s)")
        let times = track.map(\.time)
        let lone = Set(times.indices.dropFirst().dropLast().filter {
            times[$0] - times[$0 - 1] > options.interpolationMaxGap && times[$0 + 1] - times[$0] > options.interpolationMaxGap
        }.map { times[$0] })
        #expect(m.missed.allSatisfy { lone.contains($0.time) }, "missed \(m.missed.map { "\($0.fenceID ?? "-") \($0.kind) \($0.time)" })")
        #expect(m.recall >= m0.recall)
        #expect(m.extra <= m0.extra)
        #expect(on < on0)
    }

    /// docs/power.md, "A receiver faster than planned": the walks, the run, the yacht and the
    /// kayak, each with its activity (foot, boat), fences every 2 km, replayed with a receiver
    /// whose hot start takes 1 s (the datasheets' figure) against the 2 s the profile plans. The
    /// policy measures the first fixes after its wakes and replans with their median: on foot
    /// and afloat at most 8 % and 9 % of always-on's GNSS time (measured: 6.5 % and 6.0 %),
    /// every event always-on sees found, and every track at most what it costs with a receiver
    /// that meets the plan. One-sided: a policy that does better never fails.
    @Test func aReceiverFasterThanPlannedIsMeasuredAndPaysLessOnFootAndAfloat() throws {
        var on: [Activity: (fast: Double, planned: Double, base: Double)] = [:]
        print("track | activity | % with a 1 s receiver | % with the planned 2 s | learned ttff_hot s")
        for (name, kind) in PowerTracks.kinds where ["walk", "run", "boat"].contains(kind) {
            let activity: Activity = kind == "boat" ? .boat : .foot
            // Switched as `scripts/power-eval.sh` switches it (`ubx`): with `watch`, wakes
            // within gpsd's 60 s release find the receiver tracking and are not measured.
            let fast = try Self.evaluate(name, spacingMeters: 2000, activity: activity, receiverTTFFHot: .seconds(1), power: .ubx)
            let planned = try Self.evaluate(name, spacingMeters: 2000, activity: activity, power: .ubx)
            let a = try #require(fast.report), b = try #require(planned.report), base = try #require(fast.baselineReport)
            let learned = fast.source?.receiver.ttffChanges.last?.to
            print("| \(name) | \(activity) | \(100 * a.gnssOnSeconds / base.gnssOnSeconds) | \(100 * b.gnssOnSeconds / base.gnssOnSeconds) | \(learned.map { "\($0.secondsValue)" } ?? "-") |")
            #expect(learned == .seconds(1), "\(name): the hot starts were not learned")
            #expect(planned.source?.receiver.ttffChanges.isEmpty == true, "\(name): a receiver meeting the plan changed it")
            let match = try #require(fast.match)
            #expect(match.recall == 1.0, "\(name): missed \(match.missed.map { "\($0.fenceID ?? "-") \($0.kind) \($0.time)" })")
            #expect(a.gnssOnSeconds <= b.gnssOnSeconds, "\(name): \(a.gnssOnSeconds) s with a faster receiver, \(b.gnssOnSeconds) s without")
            on[activity, default: (0, 0, 0)].fast += a.gnssOnSeconds
            on[activity, default: (0, 0, 0)].planned += b.gnssOnSeconds
            on[activity, default: (0, 0, 0)].base += base.gnssOnSeconds
        }
        let foot = try #require(on[.foot]), boat = try #require(on[.boat])
        print("foot: \(100 * foot.fast / foot.base) % (planned receiver \(100 * foot.planned / foot.base) %); boat: \(100 * boat.fast / boat.base) % (\(100 * boat.planned / boat.base) %)")
        #expect(100 * foot.fast / foot.base <= 8, "on foot: \(100 * foot.fast / foot.base) % of always-on")
        #expect(100 * boat.fast / boat.base <= 9, "afloat: \(100 * boat.fast / boat.base) % of always-on")
    }
}
