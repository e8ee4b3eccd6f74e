import GeomonCore
import GeomonEvaluation
import Testing

/// The replay receiver: which recorded fix is delivered when, and the time accounting.
@Suite struct PowerReceiverModelTests {
    static let t0 = UTCTime(millisecondsSince1970: 1_700_000_000_000)
    static func at(_ ms: Int64) -> UTCTime { UTCTime(millisecondsSince1970: t0.millisecondsSince1970 + ms) }
    static func fix(_ s: Int64, east: Double = 0) -> Fix {
        Fix(time: at(s * 1000), coordinate: Coordinate(latitude: 0, longitude: east / 111_195.08), horizontalAccuracyMeters: 5)
    }

    /// 1 Hz from 0 to 9 s (10 m/s east), then 30 s, 31 s (a 21 s gap), then 100 s (a 69 s gap).
    static let track: [Fix] = (0...9).map { fix($0, east: Double($0) * 10) } + [fix(30, east: 300), fix(31, east: 310), fix(100, east: 1000)]

    static var settings: ReceiverSettings {
        var s = ReceiverSettings()
        s.ttffHot = .seconds(2)
        s.ttffWarm = .seconds(5)
        s.hotWindow = .seconds(60)
        s.powerAcquireMilliwatts = 120
        s.powerTrackMilliwatts = 90
        return s
    }

    @Test func watchsReleaseChargesTheFirstMinuteOfEveryOffPeriod() {
        // gpsd closes an unwatched device 60 s after the watch ends: off 0 → 30 s and again
        // 40 s → the end at 200 s; powered for 30 s of the first off period, 60 s of the last.
        var watch = ReceiverModel(track: Self.track, settings: Self.settings, releaseDelay: GNSSPowerMethod.watch.releaseDelay)
        var ubx = ReceiverModel(track: Self.track, settings: Self.settings, releaseDelay: GNSSPowerMethod.ubx.releaseDelay)
        for index in [0, 1] {
            func step(_ body: (inout ReceiverModel) -> Void) { if index == 0 { body(&watch) } else { body(&ubx) } }
            step { $0.start(at: Self.at(0)) }
            step { $0.turnOff(at: Self.at(0)) }
            step { $0.turnOn(at: Self.at(30_000)) }
            step { $0.turnOff(at: Self.at(40_000)) }
            step { $0.finish(at: Self.at(200_000)) }
        }
        #expect(watch.usage.on == ubx.usage.on)
        #expect(watch.usage.on == .seconds(10))
        #expect(watch.usage.unreleased == .seconds(90))
        #expect(ubx.usage.unreleased == .zero)
        #expect(watch.usage.powered == .seconds(100))
        let extra = watch.usage.energyMilliwattHours(Self.settings) - ubx.usage.energyMilliwattHours(Self.settings)
        #expect(abs(extra - 90.0 * 90 / 3600) < 1e-9)
    }

    @Test func firstFixIsInterpolatedAtTTFFWithinALoggerGap() throws {
        var r = ReceiverModel(track: Self.track, settings: Self.settings)
        #expect(r.nextFix == nil)
        // Never on before: warm start, 3.5 + 5 = 8.5 s, between the fixes at 8 s and 9 s.
        r.turnOn(at: Self.at(3500))
        let taken = r.takeFix()
        let first = try #require(taken)
        #expect(first.time == Self.at(8500))
        #expect(abs(first.coordinate.longitude * 111_195.08 - 85) < 1e-6)
        #expect(r.takeFix()?.time == Self.at(9000))
        #expect(r.takeFix()?.time == Self.at(30_000))
        r.turnOff(at: Self.at(30_500))
        #expect(r.nextFix == nil)
        #expect(r.takeFix() == nil)
        // Acquire 3.5 → 8.5 s, track 8.5 → 30.5 s.
        #expect(r.usage.acquire == .seconds(5))
        #expect(r.usage.track == .seconds(22))
        #expect(r.usage.fixesDelivered == 3)
        #expect(r.usage.wakeups == 1)
    }

    @Test func aTrackingReceiverFillsTheLoggersGapsAtOneHertz() throws {
        // The 21 s gap (9 → 30 s) is bridged at 1 Hz; the 69 s one (31 → 100 s) is an outage.
        var r = ReceiverModel(track: Self.track, settings: Self.settings, trackingInterval: .seconds(1))
        r.start(at: Self.at(0))
        var times: [Int64] = []
        var delivered: [Fix] = []
        while let fix = r.takeFix() {
            times.append((fix.time.millisecondsSince1970 - Self.t0.millisecondsSince1970) / 1000)
            delivered.append(fix)
        }
        #expect(times == Array(0...31) + [100])
        // 10 → 29 s lie on the line from 90 m to 300 m.
        let at20 = try #require(delivered.first { $0.time == Self.at(20_000) })
        #expect(abs(at20.coordinate.longitude * 111_195.08 - (90 + 210 * 11 / 21)) < 1e-6)
        #expect(r.usage.fixesDelivered == 33)
        #expect(r.usage.fixesInterpolated == 20)
        // Without the interval, the recorded fixes only.
        var recorded = ReceiverModel(track: Self.track, settings: Self.settings)
        recorded.start(at: Self.at(0))
        while recorded.takeFix() != nil {}
        #expect(recorded.usage.fixesDelivered == Self.track.count)
        #expect(recorded.usage.fixesInterpolated == 0)
    }

    @Test func anInterpolatedFixChangesSpeedAndCourseEvenlyTheShortWayRound() throws {
        var before = Self.fix(0)
        before.speedMetersPerSecond = 0.2
        before.courseDegrees = 350
        var after = Self.fix(10, east: 100)
        after.speedMetersPerSecond = 16.2
        after.courseDegrees = 30
        var r = ReceiverModel(track: [before, after], settings: Self.settings, trackingInterval: .seconds(1))
        r.start(at: Self.at(0))
        _ = r.takeFix()
        let taken = r.takeFix()
        let second = try #require(taken)
        #expect(second.time == Self.at(1000))
        #expect(abs((second.speedMetersPerSecond ?? 0) - 1.8) < 1e-9)
        #expect(abs((second.courseDegrees ?? 0) - 354) < 1e-9)
        for _ in 2...4 { _ = r.takeFix() }
        let later = r.takeFix()
        let fifth = try #require(later)
        #expect(abs((fifth.courseDegrees ?? 0) - 10) < 1e-9)
        // Where the later fix has no speed, the earlier fix's stays.
        after.speedMetersPerSecond = nil
        var bare = ReceiverModel(track: [before, after], settings: Self.settings, trackingInterval: .seconds(1))
        bare.start(at: Self.at(0))
        _ = bare.takeFix()
        #expect(bare.takeFix()?.speedMetersPerSecond == 0.2)
    }

    @Test func acrossALongGapTheReceiverWaitsForTheNextRecordedFix() {
        // Gaps up to 10 s bridged (the default is 60 s): the 21 s gap is an outage.
        var r = ReceiverModel(track: Self.track, settings: Self.settings, interpolationMaxGap: .seconds(10))
        r.turnOn(at: Self.at(0))
        r.turnOff(at: Self.at(1000))
        // Off for 11 s < hot_window: hot, due at 12 + 2 = 14 s, inside the 21 s gap: waits for 30 s.
        r.turnOn(at: Self.at(12_000))
        #expect(r.ttff(at: Self.at(12_000)) == .seconds(2))
        #expect(r.nextFix?.time == Self.at(30_000))
        #expect(r.takeFix()?.time == Self.at(30_000))
        #expect(r.takeFix()?.time == Self.at(31_000))
        #expect(r.takeFix()?.time == Self.at(100_000))
        #expect(r.takeFix() == nil)
        r.turnOff(at: Self.at(100_000))
        // Acquire 0 → 1 s (no fix) and 12 → 30 s; track 30 → 100 s.
        #expect(r.usage.acquire == .seconds(19))
        #expect(r.usage.track == .seconds(70))
        #expect(r.usage.wakeups == 2)
        // (19 s · 120 mW + 70 s · 90 mW) / 3600 = 2.3833 mWh.
        #expect(abs(r.usage.energyMilliwattHours(Self.settings) - (19 * 120 + 70 * 90) / 3600.0) < 1e-9)
    }

    @Test func aRecordedFixAtTheDueInstantIsDeliveredAsIs() {
        var r = ReceiverModel(track: Self.track, settings: Self.settings)
        r.turnOn(at: Self.at(1000))  // warm 5 s → 6 s exactly
        #expect(r.nextFix == Self.track[6])
    }

    @Test func afterHotWindowTheStartIsWarmAndAfterTheTrackNothingComes() {
        var r = ReceiverModel(track: Self.track, settings: Self.settings)
        r.turnOn(at: Self.at(0))
        r.turnOff(at: Self.at(1000))
        #expect(r.ttff(at: Self.at(60_999)) == .seconds(2))
        #expect(r.ttff(at: Self.at(61_000)) == .seconds(5))
        r.turnOn(at: Self.at(200_000))
        #expect(r.nextFix == nil)
    }

    @Test func coarseFixesAreDerivedDeterministicallyWithinTheirAccuracy() {
        let a = CoarseFixGenerator.derive(track: Self.track, interval: .seconds(30), accuracyMeters: 500, maxGap: .seconds(100), seed: 42)
        let b = CoarseFixGenerator.derive(track: Self.track, interval: .seconds(30), accuracyMeters: 500, maxGap: .seconds(100), seed: 42)
        let c = CoarseFixGenerator.derive(track: Self.track, interval: .seconds(30), accuracyMeters: 500, maxGap: .seconds(100), seed: 43)
        #expect(a == b)
        #expect(a != c)
        // 0, 30, 60, 90 s (100 s is not a multiple of 30).
        #expect(a.map(\.time) == [Self.at(0), Self.at(30_000), Self.at(60_000), Self.at(90_000)])
        // The recorded position at that time, interpolated: 0 m, 300 m (recorded), then along
        // the 69 s gap from 310 m at 31 s to 1000 m at 100 s: 600 m, 900 m east.
        for (fix, east) in zip(a, [0.0, 300, 600, 900]) {
            let dx = (fix.coordinate.longitude * 111_195.08 - east), dy = fix.coordinate.latitude * 111_195.08
            #expect((dx * dx + dy * dy).squareRoot() <= 500.5)
            #expect(fix.source == .coarse)
            #expect(fix.horizontalAccuracyMeters == 500)
        }
        // With the receiver model's default (60 s), the 69 s gap is an outage: where the device
        // is then, nobody knows, and no coarse fix is made up.
        let outage = CoarseFixGenerator.derive(track: Self.track, interval: .seconds(30), accuracyMeters: 500, seed: 42)
        #expect(outage.map(\.time) == [Self.at(0), Self.at(30_000)])
    }

    @Test func splitMix64MatchesTheReferenceSequence() {
        // Reference values of SplitMix64 seeded with 0 (Vigna's splitmix64.c).
        var rng = SplitMix64(seed: 0)
        #expect(rng.next() == 0xE220_A839_7B1D_CDAF)
        #expect(rng.next() == 0x6E78_9E6A_A1B9_65F4)
        let u = rng.nextUnit()
        #expect(u >= 0 && u < 1)
    }
}
