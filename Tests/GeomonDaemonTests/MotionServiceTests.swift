import Foundation
import GeomonCore
import GeomonDaemon
import GeomonSources
import GeomonStore
import GeomonTestSupport
import Testing

/// `plugin: iio` in the daemon: `MotionService` reads an accelerometer laid out like sysfs in
/// a temporary directory, whose values the test rewrites, on a manual clock.
@Suite(.serialized) struct MotionServiceTests {
    final class Sensor {
        let dir: TemporaryDirectory
        let clock = ManualClock()
        let driver: MonitorDriver
        let service: MotionService
        /// Every line the service logged.
        let logged = LogLines()

        final class LogLines: @unchecked Sendable {
            private let lock = NSLock()
            private var lines: [String] = []
            func append(_ line: String) { lock.lock(); lines.append(line); lock.unlock() }
            func count(_ text: String) -> Int { lock.lock(); defer { lock.unlock() }; return lines.filter { $0.contains(text) }.count }
        }

        init(mode: MonitoringMode = .regions, machine: Monitor? = nil, stillAfter: Duration = .seconds(60)) throws {
            dir = try TemporaryDirectory()
            for (file, value) in [("x", "0"), ("y", "0"), ("z", "1000")] { _ = try dir.write("iio:device0/in_accel_\(file)_raw", value + "\n") }
            _ = try dir.write("iio:device0/in_accel_scale", "0.009806\n")
            var settings = MotionSourceSettings()
            settings.sampleHertz = 2
            settings.window = .seconds(10)
            settings.thresholdMetersPerSecondSquared = 0.15
            settings.stillAfter = stillAfter
            settings.staleAfter = .seconds(300)
            service = MotionService(settings: settings, accelerometer: try IIOAccelerometer(directory: dir.path("iio:device0")),
                                    home: nil, log: Log(level: .info, journald: false, sink: { [logged] in logged.append($0) }))
            var profile = Profile(name: "motion", mode: mode)
            profile.sources.gnss = GNSSSourceSettings()
            driver = MonitorDriver(machine: machine ?? Monitor(profile: profile), journal: nil, clock: LiveClock(host: clock), services: [service])
            try driver.start()
            try driver.runUntilIdle()
        }

        var state: String? { driver.context.status.motion?.state }

        /// `seconds` at 2 Hz, the z axis from `z(i)` (raw; 1000 is 1 g).
        func run(seconds: Double, z: (Int) -> Int) throws {
            for i in 0..<Int(seconds * 2) {
                _ = try dir.write("iio:device0/in_accel_z_raw", "\(z(i))\n")
                clock.advance(by: .milliseconds(500))
                try driver.runUntilIdle()
            }
        }
    }

    @Test func aParkedVanIsStillADriveOffMovingAndAnIdlingEngineNoMovement() throws {
        let s = try Sensor()
        defer { s.dir.remove() }
        #expect(s.state == "unknown")
        // Parked: gravity, ±0.02 m/s² of noise.
        try s.run(seconds: 59) { $0 % 2 == 0 ? 1002 : 998 }
        #expect(s.state == "unknown")
        try s.run(seconds: 2) { $0 % 2 == 0 ? 1002 : 998 }
        #expect(s.state == "still")
        #expect(s.driver.machine.motion == .still)
        // Driving off: ±0.8 m/s².
        try s.run(seconds: 1) { $0 % 2 == 0 ? 1080 : 920 }
        #expect(s.state == "moving")
        // Parked with the engine idling: ±0.1 m/s², under the threshold: still again after
        // the swings left the window and 60 s passed, and it stays so.
        try s.run(seconds: 80) { $0 % 2 == 0 ? 1010 : 990 }
        #expect(s.state == "still")
        try s.run(seconds: 120) { $0 % 2 == 0 ? 1010 : 990 }
        #expect(s.state == "still")
    }

    /// The accelerometer senses what carries the device: a full window's spread over 2 m/s² is
    /// a walk, under it (and over the movement threshold) a vehicle. The policy plans with the
    /// sensed activity's bounds (`geomon status`: planned for foot, sensed).
    @Test func theWindowsSpreadSaysWalkOrVehicleAndThePolicyPlansWithIt() throws {
        let s = try Sensor()
        defer { s.dir.remove() }
        s.driver.writesStatus = true
        // Walking: ±4 m/s² swings (0.4 g a step); foot once a window (10 s) is full.
        try s.run(seconds: 8) { $0 % 2 == 0 ? 1400 : 600 }
        #expect(s.driver.machine.policy.sensedActivity == nil)
        try s.run(seconds: 2) { $0 % 2 == 0 ? 1400 : 600 }
        #expect(s.driver.machine.policy.sensedActivity == .foot)
        #expect(s.driver.machine.policy.bounds == Activity.foot.bounds)
        #expect(s.driver.context.status.planning?.activity == "foot" && s.driver.context.status.planning?.from == "sensed")
        // On a bus: ±0.6 m/s². Half a window later the walk's swings still dominate; a window
        // later (the stated latency) they have left it.
        try s.run(seconds: 5) { $0 % 2 == 0 ? 1060 : 940 }
        #expect(s.driver.machine.policy.sensedActivity == .foot)
        try s.run(seconds: 5) { $0 % 2 == 0 ? 1060 : 940 }
        #expect(s.driver.machine.policy.sensedActivity == .vehicle)
        #expect(s.driver.machine.policy.bounds.maxSpeedMetersPerSecond == 45)
        // Standing at a stop says nothing about what carries the device next.
        try s.run(seconds: 20) { $0 % 2 == 0 ? 1002 : 998 }
        #expect(s.driver.machine.policy.sensedActivity == .vehicle)
    }

    /// A reload (SIGHUP, `geomon fences here`) builds a new machine from the stored state;
    /// the source's word and activity are not stored, so the service hands them over again.
    @Test func aReloadKeepsWhatTheSourceSaidAndSensed() throws {
        let s = try Sensor()
        defer { s.dir.remove() }
        try s.run(seconds: 10) { $0 % 2 == 0 ? 1400 : 600 }
        #expect(s.driver.machine.policy.sensedActivity == .foot)
        #expect(s.driver.machine.motion == .moving)
        var profile = Profile(name: "motion", mode: .regions)
        profile.sources.gnss = GNSSSourceSettings()
        s.driver.context.replaceProfile(profile)
        try s.driver.runUntilIdle()
        #expect(s.driver.machine.policy.sensedActivity == .foot)
        #expect(s.driver.machine.policy.bounds == Activity.foot.bounds)
        #expect(s.driver.machine.motion == .moving)
    }

    @Test func anAccelerometerThatCannotBeReadGoesSilentAndCountsAsAbsent() throws {
        let s = try Sensor()
        defer { s.dir.remove() }
        try s.run(seconds: 2) { $0 % 2 == 0 ? 1080 : 920 }
        #expect(s.state == "moving")
        // The device goes away (unbound, a failing bus): no reading for stale_after.
        try FileManager.default.removeItem(atPath: s.dir.path("iio:device0/in_accel_z_raw"))
        for _ in 0..<(2 * 301) {
            s.clock.advance(by: .milliseconds(500))
            try s.driver.runUntilIdle()
        }
        #expect(s.state == "silent")
        #expect(s.driver.machine.motion == nil)
        // One warning for the stretch of failed reads, and one when it went silent.
        #expect(s.logged.count("motion sensor unreadable") == 1)
        #expect(s.logged.count("motion sensor silent") == 1)
        // Back: it speaks again.
        _ = try s.dir.write("iio:device0/in_accel_z_raw", "1000\n")
        try s.run(seconds: 1) { $0 % 2 == 0 ? 1080 : 920 }
        #expect(s.state == "moving")
    }

    /// A restart in a `moving: true` mode with an accelerometer that cannot be read from the
    /// start: the stored mode stands until the sensor speaks, and its silence speaks too (the
    /// mode is left after `stale_after`), not for good.
    @Test func aSensorSilentFromTheStartEndsAStoredMovingMode() throws {
        var profile = Profile(name: "motion", mode: .regions)
        profile.sources.gnss = GNSSSourceSettings()
        profile.modes = [ModeRule(name: "driving", when: ModeCondition(moving: true), mode: .continuous)]
        var snapshot = EngineSnapshot()
        var state = ModeState(name: "driving")
        state.moving = true
        snapshot.mode = state
        // (`still_after` beyond `stale_after`: the one reading at start says nothing before.)
        let s = try Sensor(machine: Monitor(profile: profile, snapshot: snapshot), stillAfter: .seconds(3600))
        defer { s.dir.remove() }
        #expect(s.driver.machine.mode?.name == "driving")
        try FileManager.default.removeItem(atPath: s.dir.path("iio:device0/in_accel_z_raw"))
        for _ in 0..<(2 * 301) {
            s.clock.advance(by: .milliseconds(500))
            try s.driver.runUntilIdle()
        }
        #expect(s.state == "silent")
        #expect(s.driver.machine.mode == nil)
    }

    /// Moving, with the receiver on and giving fixes: the accelerometer is not read (GNSS
    /// watches). Shown by taking the device away: a sensor that is not read cannot fail, so it
    /// stays "moving" for longer than `stale_after`; once the fixes stop it is read again, fails,
    /// and goes silent after `stale_after`.
    @Test func theAccelerometerRestsWhileGNSSGivesFixesAndIsReadAgainWhenTheyStop() throws {
        let s = try Sensor(mode: .continuous)
        defer { s.dir.remove() }
        #expect(s.driver.machine.isReceiverOn)
        try s.run(seconds: 2) { $0 % 2 == 0 ? 1080 : 920 }
        #expect(s.state == "moving")
        try FileManager.default.removeItem(atPath: s.dir.path("iio:device0/in_accel_z_raw"))
        // 400 s of fixes at 1 Hz, driving east at 10 m/s.
        let t0 = UTCTime(millisecondsSince1970: 1_700_000_000_000)
        for i in 0..<800 {
            s.clock.advance(by: .milliseconds(500))
            if i % 2 == 0 {
                let fix = Fix(time: t0 + .seconds(Int64(i / 2)), coordinate: Coordinate(latitude: 47, longitude: 8 + Double(i / 2) * 10 / 75_900),
                              horizontalAccuracyMeters: 5, speedMetersPerSecond: 10, courseDegrees: 90)
                s.driver.context.emit(.fix(fix))
            }
            try s.driver.runUntilIdle()
        }
        #expect(s.driver.machine.isReceiverOn)
        #expect(s.state == "moving", "the accelerometer was read while GNSS gave fixes")
        // No fixes: read again after 5 s, unreadable, silent after stale_after (300 s).
        for _ in 0..<(2 * 310) {
            s.clock.advance(by: .milliseconds(500))
            try s.driver.runUntilIdle()
        }
        #expect(s.state == "silent")
    }
}
