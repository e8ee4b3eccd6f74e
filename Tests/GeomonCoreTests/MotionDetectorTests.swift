import GeomonCore
import GeomonEvaluation
import Testing

/// Moving / still from an accelerometer's magnitudes or a command's words, and the motion a
/// recording implies for replay.
@Suite struct MotionDetectorTests {
    static func s(_ seconds: Double) -> Duration { .milliseconds(Int64(seconds * 1000)) }

    @Test func aParkedVanIsStillAfterStillAfterAndADriveOffIsMovingAtOnce() {
        var d = MotionDetector(stillAfter: .seconds(60), window: .seconds(10), thresholdMetersPerSecondSquared: 0.15)
        // Parked: gravity and sensor noise of ±0.02 m/s², 2 Hz.
        var said: [(Double, Motion)] = []
        for i in 0..<200 {
            let t = Double(i) / 2
            if let m = d.sample(magnitude: 9.81 + (i % 2 == 0 ? 0.02 : -0.02), at: Self.s(t)) { said.append((t, m)) }
        }
        #expect(said.count == 1 && said[0].1 == .still && said[0].0 == 60)
        #expect(d.deadline == nil)
        // Driving off: the magnitude swings by ±0.8 m/s² (road and acceleration).
        let moving = d.sample(magnitude: 10.6, at: Self.s(100.5))
        #expect(moving == .moving)
        #expect(d.sample(magnitude: 9.0, at: Self.s(101)) == nil)
        #expect(d.deadline == nil)
        // Parked again: the swings leave the 10 s window, and 60 s after that it is still.
        var still: Double?
        for i in 0..<300 {
            let t = 101.5 + Double(i) / 2
            if d.sample(magnitude: 9.81, at: Self.s(t)) == .still { still = t }
        }
        #expect(still == 171.5)
    }

    @Test func aVibrationUnderTheThresholdIsNoMovement() {
        // An idling engine or a passing lorry: ±0.1 m/s² at 2 Hz, under the 0.15 m/s² threshold.
        var d = MotionDetector(stillAfter: .seconds(30), window: .seconds(10), thresholdMetersPerSecondSquared: 0.15)
        var said: [Motion] = []
        for i in 0..<120 {
            if let m = d.sample(magnitude: 9.81 + (i % 2 == 0 ? 0.1 : -0.1), at: Self.s(Double(i) / 2)) { said.append(m) }
        }
        #expect(said == [.still])
    }

    @Test func aCommandsWordsGetTheSameHysteresis() {
        var d = MotionDetector(stillAfter: .seconds(60))
        #expect(d.said(moving: true, at: Self.s(0)) == .moving)
        #expect(d.deadline == nil)                                   // moving holds until it says otherwise
        #expect(d.tick(at: Self.s(500)) == nil)
        #expect(d.said(moving: false, at: Self.s(510)) == nil)      // the ignition went off…
        #expect(d.deadline == Self.s(570))
        #expect(d.said(moving: true, at: Self.s(530)) == nil)       // …and on again at the lights
        #expect(d.said(moving: false, at: Self.s(540)) == nil)
        #expect(d.said(moving: false, at: Self.s(560)) == nil)      // a repeated word keeps the start
        #expect(d.deadline == Self.s(600))
        #expect(d.tick(at: Self.s(599)) == nil)
        #expect(d.tick(at: Self.s(600)) == .still)
        // `still_after: 0s` takes a still word at once, and a moving word is never still.
        var now = MotionDetector(stillAfter: .zero)
        #expect(now.said(moving: true, at: Self.s(0)) == .moving)
        #expect(now.tick(at: Self.s(0)) == nil)
        #expect(now.said(moving: false, at: Self.s(1)) == .still)
        // A silent sensor is forgotten: its next word starts afresh.
        d.reset()
        #expect(d.reported == nil)
        #expect(d.said(moving: true, at: Self.s(200)) == .moving)
    }

    /// Feeds `seconds` of 2 Hz samples swinging by ±`swing` around gravity from `start`; the
    /// activity after each second.
    static func feed(_ d: inout MotionDetector, from start: Double, seconds: Int, swing: Double) -> [Activity?] {
        var out: [Activity?] = []
        for i in 0..<(seconds * 2) {
            _ = d.sample(magnitude: 9.81 + (i % 2 == 0 ? swing : -swing), at: s(start + Double(i) / 2))
            if i % 2 == 1 { out.append(d.activity) }
        }
        return out
    }

    /// A faster activity is believed at once, a slower one once it has been the majority of
    /// the windows over `settle` (2 min): a phone handled in a car reads as steps for a window
    /// or two, and sensing a walker in a car is what plans a sleep short of a boundary.
    @Test func aSlowerActivityIsBelievedOnceItIsTheMajorityOfTheWindowsOverTwoMinutes() {
        var d = MotionDetector(stillAfter: .seconds(60))
        // A drive: ±0.6 m/s² (the vehicle band), a vehicle once a window is full.
        #expect(Self.feed(&d, from: 0, seconds: 60, swing: 0.6).last == .vehicle)
        // 20 s of ±4 m/s² (the phone picked up): still a vehicle.
        #expect(Self.feed(&d, from: 60, seconds: 20, swing: 4).allSatisfy { $0 == .vehicle })
        #expect(Self.feed(&d, from: 80, seconds: 60, swing: 0.6).allSatisfy { $0 == .vehicle })
        // A walk: foot once its windows are most of the last two minutes, not before.
        let walk = Self.feed(&d, from: 140, seconds: 180, swing: 4)
        #expect(walk.prefix(30).allSatisfy { $0 == .vehicle } && walk.prefix(125).contains(.foot), "\(walk)")
        #expect(walk.last == .foot)
        // Boarding a bus: a vehicle within one window (10 s), as soon as the walk's swings no
        // longer dominate it: at once, with no settle.
        let bus = Self.feed(&d, from: 320, seconds: 15, swing: 0.6)
        #expect(bus.prefix(5).allSatisfy { $0 == .foot } && bus.dropFirst(9).allSatisfy { $0 == .vehicle }, "\(bus)")
        // Without the settle every window is believed at once.
        var eager = MotionDetector(stillAfter: .seconds(60), settle: .zero)
        _ = Self.feed(&eager, from: 0, seconds: 60, swing: 0.6)
        #expect(Self.feed(&eager, from: 60, seconds: 20, swing: 4).last == .foot)
    }

    /// A window that moved only in part (a walk that begins or ends beside stillness) says
    /// nothing of what carries the device: its diluted steps spread like a vehicle's vibration.
    @Test func aWindowThatMovedOnlyInPartSaysNothingOfWhatCarriesTheDevice() {
        var d = MotionDetector(stillAfter: .seconds(60))
        _ = Self.feed(&d, from: 0, seconds: 30, swing: 0.01)
        // Setting off on foot: never a vehicle on the way, foot once the window is all walk.
        let start = Self.feed(&d, from: 30, seconds: 15, swing: 4)
        #expect(!start.contains(.vehicle) && start.last == .foot, "\(start)")
        // Stopping: the steps leave the window; foot stays (no vehicle on the way down).
        let stop = Self.feed(&d, from: 45, seconds: 30, swing: 0.01)
        #expect(stop.allSatisfy { $0 == .foot }, "\(stop)")
    }

    @Test func aRecordingSaysStillWhereItsSpeedStaysLowAndMovingSoonAfterItRises() {
        // 1 Hz: 100 s at 10 m/s, 300 s parked (0.1 m/s of jitter), 50 s at 10 m/s.
        let t0 = UTCTime(millisecondsSince1970: 1_700_000_000_000)
        var track: [Fix] = []
        for i in 0..<450 {
            let v = (100..<400).contains(i) ? 0.1 : 10
            track.append(Fix(time: t0 + .seconds(Int64(i)), coordinate: Coordinate(latitude: 0, longitude: Double(i) * 1e-5),
                             horizontalAccuracyMeters: 5, speedMetersPerSecond: v, source: .gnss))
        }
        let signal = MotionSignal(stillAfter: .seconds(60))
        // The movement begins after the last slow fix (399 s); the sensor says so 2.5 s later.
        #expect(signal.changes(track) == [
            MotionSignal.Change(time: t0 + .seconds(160), motion: .still),
            MotionSignal.Change(time: t0 + .milliseconds(401_500), motion: .moving),
        ])
        // A stop shorter than still_after is no still stretch for the sensor.
        #expect(MotionSignal(stillAfter: .seconds(400)).changes(track).isEmpty)
    }

    @Test func aSparseLoggersDepartureIsDatedBackToItsLastSlowFix() {
        // A tracker logging every 35 s: parked from 0 to 350 s, the next fix at 385 s already
        // 500 m on. The movement began after 350 s, so the sensor says so at 352.5 s, not 387.5 s.
        let t0 = UTCTime(millisecondsSince1970: 1_700_000_000_000)
        func fix(_ s: Int64, east: Double, v: Double) -> Fix {
            Fix(time: t0 + .seconds(s), coordinate: Coordinate(latitude: 0, longitude: east / 111_195.08),
                horizontalAccuracyMeters: 10, speedMetersPerSecond: v, source: .gnss)
        }
        let parked = stride(from: Int64(0), through: 350, by: 35).map { fix($0, east: 0, v: 0) }
        let signal = MotionSignal(stillAfter: .seconds(60))
        #expect(signal.changes(parked + [fix(385, east: 500, v: 16)]) == [
            MotionSignal.Change(time: t0 + .seconds(60), motion: .still),
            MotionSignal.Change(time: t0 + .milliseconds(352_500), motion: .moving),
        ])
        // Across a gap longer than the receiver model bridges (an outage), from the fix itself.
        #expect(signal.changes(parked + [fix(450, east: 1500, v: 16)]).last == MotionSignal.Change(time: t0 + .milliseconds(452_500), motion: .moving))
    }
}
