import GeomonCore
import GeomonEvaluation
import Testing

/// `geomon replay --activity derive`: what a motion source reporting activities would have said
/// over a recording, from the speeds a receiver reports, each change `latency` late.
struct ActivitySignalTests {
    static let t0 = UTCTime(millisecondsSince1970: 1_700_000_000_000)
    static func fix(_ s: Int64, speed: Double, east: Double = 0) -> Fix {
        Fix(time: t0 + .seconds(s), coordinate: Coordinate(latitude: 0, longitude: east / 111_195.08), horizontalAccuracyMeters: 5,
            speedMetersPerSecond: speed)
    }

    @Test func aWalkABusRideAndAStopAreSensedLatencyLate() {
        // 0–99 s walking at 1.4 m/s, 100–299 s a bus at 10 m/s, then standing for 3 minutes.
        var track: [Fix] = []
        for s in Int64(0)..<100 { track.append(Self.fix(s, speed: 1.4)) }
        for s in Int64(100)..<300 { track.append(Self.fix(s, speed: 10)) }
        for s in Int64(300)..<480 { track.append(Self.fix(s, speed: 0)) }
        let changes = ActivitySignal(latency: .seconds(10)).changes(track)
        // foot 10 s after the first fix; vehicle 10 s after the first fix over 4 + 1 m/s; foot
        // again 10 s after two minutes within foot's bound (300 + 120 s).
        #expect(changes == [
            ActivitySignal.Change(time: Self.t0 + .seconds(10), activity: .foot),
            ActivitySignal.Change(time: Self.t0 + .seconds(110), activity: .vehicle),
            ActivitySignal.Change(time: Self.t0 + .seconds(430), activity: .foot),
        ])
    }

    @Test func aGapCrossedFasterThanTheBoundIsSensedFromItsStart() {
        // A walker's fixes, then nothing for 60 s, then a fix 1.2 km on, reported slow: the
        // mean speed across the gap (20 m/s) says vehicle, sensed 10 s after the gap began.
        let track = [Self.fix(0, speed: 1), Self.fix(1, speed: 1, east: 1), Self.fix(61, speed: 1, east: 1_201)]
        let changes = ActivitySignal(latency: .seconds(10)).changes(track)
        #expect(changes == [
            ActivitySignal.Change(time: Self.t0 + .seconds(10), activity: .foot),
            ActivitySignal.Change(time: Self.t0 + .seconds(11), activity: .vehicle),
        ])
    }
}
