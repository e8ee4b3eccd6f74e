import Foundation
import GeomonCore
import GeomonDaemon
import GeomonEvaluation
import GeomonSources
import GeomonTestSupport
import Testing

/// Whole replays through the one driver (virtual clock, receiver model, real engine and
/// policy), without a store: the figures the energy report shows.
@Suite struct ReplayRunTests {
    static let t0 = UTCTime(millisecondsSince1970: 1_700_000_000_000)
    static func at(_ s: Double) -> UTCTime { t0 + .milliseconds(Int64(s * 1000)) }
    static func east(_ m: Double) -> Coordinate { Coordinate(latitude: 0, longitude: m / 111_195.08) }

    static func straightTrack(seconds: Int, speed: Double, from start: Double = 0) -> [Fix] {
        (0...seconds).map { s in
            Fix(time: at(Double(s)), coordinate: east(start + Double(s) * speed), horizontalAccuracyMeters: 5,
                speedMetersPerSecond: speed, courseDegrees: 90)
        }
    }

    static func profile(_ mode: MonitoringMode, fences: [FenceShape]) -> Profile {
        var p = Profile(name: "sim", mode: mode)
        p.sources.gnss = GNSSSourceSettings()
        p.policy.maxSpeedMetersPerSecond = 45
        p.policy.wakeMarginMeters = 20
        p.policy.minSleep = .seconds(10)
        p.policy.maxSleep = .seconds(600)
        p.policy.receiver.ttffHot = .seconds(2)
        p.fences = fences.enumerated().map { Fence(id: "f\($0.offset)", shape: $0.element) }
        return p
    }

    static func compare(_ profile: Profile, _ track: [Fix]) throws -> ReplayRun {
        var options = ReplayRun.Options()
        options.compareAlwaysOn = true
        return try ReplayRun.evaluate(profile: profile, fixes: track, options: options)
    }

    @Test func thePolicyFindsTheAlwaysOnEventsWithLessOnTimeAndIsDeterministic() throws {
        let track = Self.straightTrack(seconds: 600, speed: 10)
        let profile = Self.profile(.regions, fences: [.circle(center: Self.east(3000), radiusMeters: 250)])
        let run = try Self.compare(profile, track)
        let again = try Self.compare(profile, track)
        let baselineEvents = try #require(run.baselineEvents)
        let match = try #require(run.match)
        let report = try #require(run.report), baseline = try #require(run.baselineReport)

        #expect(baselineEvents.map(\.kind) == [.enter, .exit])
        #expect(match.recall == 1)
        #expect(match.extra == 0)
        #expect((match.latencyP95Seconds ?? .infinity) <= 12)
        // The recording starts with the receiver on and its first fix in hand: always-on is on
        // for the whole recording, with one switch-on and no acquisition.
        #expect(baseline.gnssOnSeconds == 600)
        #expect(baseline.wakeups == 1 && baseline.acquireSeconds == 0)
        #expect(baseline.fixesUsed == track.count)
        #expect(report.gnssOnSeconds < 0.5 * baseline.gnssOnSeconds)
        #expect(report.trackSeconds == 600)
        #expect(abs(report.acquireSeconds + report.trackingSeconds - report.gnssOnSeconds) < 1e-9)
        // The on-time by reason adds up to the on-time: acquiring after each wake, then on
        // while confirming the two crossings (or watching the near boundary).
        let byReason = try #require(run.source).receiver.ledger.entries
        #expect(abs(byReason.map(\.seconds).reduce(0, +) - report.gnssOnSeconds) < 1e-6)
        #expect(!byReason.contains { $0.label == "acquire start" })
        #expect(byReason.contains { $0.label == "acquire scheduled-wake" })
        #expect(byReason.contains { $0.label == "on confirming" })
        #expect(byReason.map(\.label) == byReason.map(\.label).sorted())
        let baselineByReason = try #require(run.baseline).receiver.ledger.entries
        #expect(abs(baselineByReason.map(\.seconds).reduce(0, +) - 600) < 1e-6)
        #expect(baselineByReason.allSatisfy { $0.label.hasSuffix("always-on") })
        #expect(run.actions == again.actions)
        #expect(run.events == again.events)
        #expect(run.report == again.report)
        // No fix is delivered while the policy has the receiver off.
        var on = false
        var actionIndex = 0
        let actions = run.actions
        for (i, fix) in run.delivered.enumerated() {
            while actionIndex < actions.count, actions[actionIndex].afterFixes <= i {
                switch actions[actionIndex].action {
                case .gnssOn: on = true
                case .gnssOff: on = false
                default: break
                }
                actionIndex += 1
            }
            #expect(on, "fix \(i) at \(fix.time) delivered with the receiver off")
        }
    }

    @Test func theBaselineRunsBesideTheRunOverOneReadingThatHoldsLittle() throws {
        // 3 h at 1 Hz, 10 m/s east; a fence 30 km out and one at 150 km: the policy sleeps up
        // to max_sleep (600 s) at a time while the always-on baseline takes every fix, with
        // coarse fixes derived from the same reading.
        let track = Self.straightTrack(seconds: 3 * 3600, speed: 10)
        var profile = Self.profile(.regions, fences: [.circle(center: Self.east(30_000), radiusMeters: 250),
                                                      .circle(center: Self.east(150_000), radiusMeters: 250)])
        profile.sources.coarse = CoarseSourceSettings()
        let coarseInterval = Int(profile.sources.coarse?.interval.secondsValue ?? 0)
        var options = ReplayRun.Options()
        options.compareAlwaysOn = true
        let run = try ReplayRun.evaluate(profile: profile, fixes: track, options: options)
        // Side by side gives what each gives alone.
        let alone = try ReplayRun.evaluate(profile: profile, fixes: track, options: ReplayRun.Options())
        var forced = ReplayRun.Options()
        forced.alwaysOn = true
        let alwaysOn = try ReplayRun.evaluate(profile: profile, fixes: track, options: forced)
        #expect(run.events == alone.events && run.actions == alone.actions && run.report == alone.report)
        #expect(run.baselineEvents == alwaysOn.events && run.baselineReport == alwaysOn.report)
        #expect(run.baselineEvents?.map(\.kind) == [.enter, .exit])
        #expect(run.match?.recall == 1)
        // The oracle counted the crossings of every recorded fix: into and out of the first fence.
        #expect(run.oracle?.crossings == 2)
        // Sleeping runs catch up every minute, the coarse feed reads one interval ahead: the
        // reading holds about that much, not a sleep's worth (600 fixes) and not the recording
        // (10,801).
        let report = try #require(run.report)
        #expect(report.gnssOnSeconds < 0.5 * 3 * 3600)
        #expect(run.mostHeld > 0)
        #expect(run.mostHeld <= max(coarseInterval, 60) + 10)
    }

    @Test func aSharedReadingGivesEveryReaderEveryFixOnce() {
        let fixes = Self.straightTrack(seconds: 9999, speed: 1)
        let reading = SharedReading(FixFeed(fixes))
        var seen: [UTCTime] = []
        reading.onRead = { seen.append($0.time) }
        var a = reading.reader(), b = reading.reader()
        var gotA: [UTCTime] = [], gotB: [UTCTime] = []
        // b runs 300 fixes ahead of a, then a catches up, in turns.
        while gotA.count < fixes.count || gotB.count < fixes.count {
            for _ in 0..<300 { if let fix = b.next() { gotB.append(fix.time) } }
            for _ in 0..<300 { if let fix = a.next() { gotA.append(fix.time) } }
        }
        #expect(a.next() == nil && b.next() == nil)
        #expect(gotA == fixes.map(\.time) && gotB == gotA && seen == gotA)
        #expect(reading.mostHeld <= 300)
    }

    @Test func continuousModeReportsACrossingWithinTheFirstTwentySeconds() throws {
        // 1 Hz at 10 m/s, starting 60 m outside a 100 m circle: inside from about 6 s, out at 26 s.
        let track = Self.straightTrack(seconds: 120, speed: 10, from: -160)
        let profile = Self.profile(.continuous, fences: [.circle(center: Self.east(0), radiusMeters: 100)])
        let run = try ReplayRun.evaluate(profile: profile, fixes: track, options: ReplayRun.Options())
        #expect(run.events.map(\.kind) == [.enter, .exit])
        #expect(run.events.first.map { $0.time <= Self.at(20) } ?? false)
        // Every recorded fix reached the engine: continuous tracking from the first one.
        #expect(try #require(run.report).fixesUsed == track.count)
    }

    @Test func continuousModeIsOffDuringAStopBeyondTimeoutPlusChecks() throws {
        // 1 Hz: 300 s at 2 m/s, stopped 1200 s (±3 m jitter), 900 s at 2 m/s again.
        var track: [Fix] = []
        for s in 0...2400 {
            let x: Double = s <= 300 ? Double(s) * 2 : (s <= 1500 ? 600 + Double(s % 3) : 600 + Double(s - 1500) * 2)
            track.append(Fix(time: Self.t0 + .seconds(s), coordinate: Self.east(x), horizontalAccuracyMeters: 5,
                             speedMetersPerSecond: s > 300 && s <= 1500 ? 0 : 2))
        }
        let run = try ReplayRun.evaluate(profile: Self.profile(.continuous, fences: []), fixes: track, options: ReplayRun.Options())
        let report = try #require(run.report)
        // Stationary from the stop (300 s) + timeout 300 s = 600 s; checks after 10, 20, 40, 80,
        // 160, 320 s (cumulative 630 s ≤ 900 s left in the stop), each costing one 2 s hot start.
        let duringStop = run.delivered.filter { $0.time > Self.t0 + .seconds(610) && $0.time <= Self.t0 + .seconds(1500) }
        #expect(duringStop.count <= 7)
        #expect(run.actions.contains { if case .gnssOff(let r) = $0.action { return r.kind == .stationary } else { return false } })
        // The next check (at most max_sleep = 600 s after the last one, before 2100 s) finds the
        // device moving and tracking resumes to the end of the track.
        #expect(run.delivered.last?.time == track.last?.time)
        #expect(run.actions.contains { $0.time <= Self.t0 + .seconds(2100) && $0.action == .gnssOn(PowerReason(.stationaryCheck, ttff: .seconds(2))) })
        // On: ≤ 610 s before the stationary switch-off, ≤ 8 checks, then from the resume to the end.
        #expect(report.gnssOnSeconds < 610 + 8 * 3 + 900)
        #expect(report.gnssOnSeconds > 600 + 300)
    }

    @Test func significantChangeWakesGNSSOnlyNearTheFence() throws {
        // 1 Hz at 10 m/s for 1500 s (15 km); a 250 m fence at 7.5 km; coarse fixes every 60 s,
        // 200 m accuracy, derived with seed 7.
        let track = Self.straightTrack(seconds: 1500, speed: 10)
        var profile = Self.profile(.significantChange, fences: [.circle(center: Self.east(7500), radiusMeters: 250)])
        profile.sources.coarse = CoarseSourceSettings()
        profile.sources.coarse?.interval = .seconds(60)
        profile.sources.coarse?.expectedAccuracyMeters = 200
        var options = ReplayRun.Options()
        options.seed = 7
        let run = try ReplayRun.evaluate(profile: profile, fixes: track, options: options)
        let allWakes = run.actions.filter { if case .gnssOn(let r) = $0.action { return r.kind == .coarseNearFence } else { return false } }
        // While the engine starts up (its first two usable fixes) no side is certain yet, so
        // the first coarse fix wakes GNSS once to decide; after that only the fence does.
        #expect(allWakes.filter { $0.time < Self.t0 + .seconds(120) }.count <= 1)
        let wakes = allWakes.filter { $0.time >= Self.t0 + .seconds(120) }
        #expect(!wakes.isEmpty)
        // Every later GNSS wake happens with the device within coarse accuracy + margin + 60 s
        // of travel of the fence boundary (7250…7750 m): between 6370 m and 8630 m.
        for w in wakes {
            let x = Double((w.time - Self.t0).wholeMilliseconds) / 100
            #expect(x >= 6370 && x <= 8630)
        }
        #expect(try #require(run.report).gnssOnSeconds < 0.3 * 1500)
        #expect(run.delivered.contains { $0.source == .coarse })

        profile.sources.gnss = nil
        let silent = try ReplayRun.evaluate(profile: profile, fixes: track, options: options)
        #expect(try #require(silent.report).gnssOnSeconds == 0)
        #expect(try #require(silent.report).wakeups == 0)
    }

    /// gpsd's regression logs, read by geomon's NMEA reader: with the receiver always on every
    /// fix gpsd itself reports for the log (distinct TPV times with a position, in the expected
    /// output of Debian's gpsd 3.22) reaches the engine.
    @Test(arguments: ["bu353s4", "bundg_zeus_9", "garmin-10x", "iTrek", "nl2008u", "nmea-rtk", "rst39", "sl869", "telit-he910", "ublox-lea-4h"])
    func alwaysOnDeliversEveryFixGpsdReportsForItsOwnLogs(log: String) throws {
        let track = try TrackReader.read(path: TestSupport.fixture("tracks/\(log).log").path).fixes
        var options = ReplayRun.Options()
        options.alwaysOn = true
        let run = try ReplayRun.evaluate(profile: Self.profile(.regions, fences: []), fixes: track, options: options)
        let expected = try String(contentsOf: TestSupport.fixture("tracks/\(log).log.chk-gpsd3.22"), encoding: .utf8)
        var times = Set<String>()
        for line in expected.split(whereSeparator: \.isNewline) where line.contains("\"class\":\"TPV\"") && line.contains("\"lat\"") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            if let time = object?["time"] as? String, (object?["mode"] as? Int ?? 0) >= 2 { times.insert(time) }
        }
        #expect(!times.isEmpty)
        let used = try #require(run.report).fixesUsed
        #expect(used >= times.count, "\(log): \(used) fixes used, gpsd reports \(times.count)")
        #expect(used == Set(track.map(\.time)).count)
    }
}
