import Foundation
import GeomonCore
import GeomonDaemon
import GeomonStore
import GeomonTestSupport
import Testing

/// The live time base against fixes dated far ahead of it.
struct DaemonClockTests {
    static let t0 = UTCTime(millisecondsSince1970: 1_800_000_000_000)

    /// A fix east of the fence's centre by `meters`, at `t0 + seconds`.
    static func fix(_ seconds: Double, east meters: Double) -> Fix {
        Fix(time: t0 + .milliseconds(Int64(seconds * 1000)), coordinate: Coordinate(latitude: 0, longitude: meters / 111_319.49),
            horizontalAccuracyMeters: 5)
    }

    /// Five rightly dated fixes 300 m east of `home`, then `odd` (a fix dated far ahead), then
    /// fixes at `home` from 6 s on: whether the clock stayed, and whether `home` was entered at
    /// 6 s.
    static func feedAroundABadDate(_ odd: Fix, coarse: Bool) throws -> (clockStayed: Bool, entered: Bool, events: [String]) {
        let host = ManualClock(wall: Self.t0)
        var profile = Profile(name: "clock", mode: .continuous)
        profile.sources.gnss = GNSSSourceSettings()
        if coarse { profile.sources.coarse = CoarseSourceSettings() }
        profile.transitions.confirm = 1
        profile.fences = [Fence(id: "home", shape: .circle(center: Coordinate(latitude: 0, longitude: 0), radiusMeters: 100))]
        let driver = MonitorDriver(machine: Monitor(profile: profile), journal: nil, clock: LiveClock(host: host), services: [])
        var events: [String] = []
        driver.onCommitted = { stored, _ in events += stored.map { "\($0.event.kind.rawValue) \($0.event.fenceID ?? "-") \($0.event.time.rfc3339)" } }
        try driver.start()
        func feed(_ fix: Fix) throws {
            host.advance(by: .seconds(1))
            driver.context.emit(.fix(fix))
            try driver.runUntilIdle()
        }
        for s in 0..<5 { try feed(Self.fix(Double(s), east: 300)) }
        try feed(odd)
        let stayed = driver.clock.now < Self.t0 + .seconds(60)
        for s in 6..<12 { try feed(Self.fix(Double(s), east: 0)) }
        let entered = driver.machine.engine.state(of: "home") == .inside && events.contains("enter home \((Self.t0 + .seconds(6)).rfc3339)")
        return (stayed, entered, events)
    }

    /// One fix dated two hours ahead (a coarse source writing local time as UTC, a receiver's
    /// glitch) is ignored: the clock stays, and the rightly dated fixes after it still decide.
    @Test func aSingleFixDatedHoursAheadIsIgnored() throws {
        let run = try Self.feedAroundABadDate(Self.fix(7200 + 5, east: 0), coarse: false)
        #expect(run.clockStayed)
        #expect(run.entered, "\(run.events)")
    }

    /// A coarse fix dated two hours ahead (a command writing local time as UTC) neither moves
    /// the clock nor stops the rightly dated GNSS fixes after it from deciding: it is taken at
    /// the clock's time.
    @Test func aCoarseFixDatedHoursAheadIsTakenAtTheClocksTime() throws {
        var coarse = Self.fix(7200 + 5, east: 300)
        coarse.source = .coarse
        coarse.horizontalAccuracyMeters = 50
        let run = try Self.feedAroundABadDate(coarse, coarse: true)
        #expect(run.clockStayed)
        #expect(run.entered, "\(run.events)")
    }

    /// `geomon status`'s measured hot start follows the median once 20 are held: the count
    /// stays at 20 while the receiver gets a little slower.
    @Test func theStatusFollowsTheMeasuredHotStartPastTwentySamples() throws {
        let host = ManualClock(wall: Self.t0)
        var profile = Profile(name: "clock", mode: .regions)
        profile.sources.gnss = GNSSSourceSettings()
        profile.sources.gnss?.power = .ubx
        profile.policy.maxLatency = .zero
        profile.fences = [Fence(id: "far", shape: .circle(center: Coordinate(latitude: 0, longitude: 0.3), radiusMeters: 100))]
        let driver = MonitorDriver(machine: Monitor(profile: profile), journal: nil, clock: LiveClock(host: host), services: [])
        driver.writesStatus = true
        try driver.start()
        var measured: [Double?] = []
        for k in 0..<40 {
            // The receiver answers 1 s after each switch-on, then 1.2 s from the 25th wake on
            // (too little a change to replace ttff_hot again, so only the status says it).
            if !driver.machine.isReceiverOn, let due = driver.machine.nextDeadline {
                host.advance(by: due - driver.clock.now)
                try driver.runUntilIdle()
            }
            host.advance(by: .milliseconds(k < 25 ? 1000 : 1200))
            driver.context.emit(.fix(Self.fix((driver.clock.now - Self.t0).secondsValue, east: 0)))
            try driver.runUntilIdle()
            measured.append(driver.context.status.planning?.ttffMeasuredSeconds)
        }
        #expect(driver.machine.policy.ttffSampleCount == 20)
        #expect(driver.machine.policy.measuredTTFF == .milliseconds(1200))
        #expect(driver.machine.policy.configuration.ttffHot == .seconds(1))
        #expect(measured.last == 1.2, "\(measured)")
    }

    /// Fixes that agree on a date far ahead (the clock was behind: a system suspend) move the
    /// clock after `aheadRun` of them.
    @Test func fixesThatAgreeOnALaterTimeMoveTheClock() throws {
        var clock = DaemonClock(host: ManualClock(wall: Self.t0))
        func admits(_ time: UTCTime) -> Bool { clock.admits(time) }
        #expect(admits(Self.t0))
        _ = clock.fixArrived(Self.t0)
        let later = Self.t0 + .seconds(3600)
        #expect(!admits(later))
        #expect(!admits(later + .milliseconds(900)))
        #expect(admits(later + .milliseconds(1800)))
        _ = clock.fixArrived(later + .milliseconds(1800))
        #expect(clock.now == later + .milliseconds(1800))
        // Two that disagree start the count again.
        #expect(!admits(later + .seconds(7200)))
        #expect(!admits(later + .seconds(9000)))
        #expect(!admits(later + .seconds(9000)))
        #expect(admits(later + .seconds(9000)))
    }
}
