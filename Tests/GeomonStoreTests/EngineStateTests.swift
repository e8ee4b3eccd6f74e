import Foundation
import GeomonCore
@testable import GeomonStore
import GeomonTestSupport
import Testing

/// The engine's state as typed rows: written with every commit, read back as the snapshot a
/// restart continues from, and converted once from the text older schemas kept in `kv`.
struct EngineStateTests {
    static let t0 = UTCTime(millisecondsSince1970: 1_700_000_000_000)
    static let approach = EventRule.Approach(bandMeters: nil, bandETA: .seconds(120), distanceMeters: 812.25, distanceLowerBoundMeters: 797.25,
                                             direction: .towards, closingSpeedMetersPerSecond: 12.5, eta: .milliseconds(64980),
                                             etaLowerBound: nil, samples: 9, span: .seconds(60))

    @Test func theScalarsAndApproachStateRoundTripThroughTheirRows() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("s.db")
        let records = [ApproachRecord(fenceID: "a b:c", fired: 5, samples: [ApproachSample(time: Self.t0, signedDistanceMeters: 12.5),
                                                                             ApproachSample(time: Self.t0 + .seconds(8), signedDistanceMeters: -0.1)]),
                       ApproachRecord(fenceID: "z", fired: 0)]
        do {
            let store = try EventStore(path: path)
            #expect(try store.engineState() == nil)
            var batch = CommitBatch(profileName: "p", committedAt: Self.t0)
            batch.fixes = [Fix(time: Self.t0, coordinate: Coordinate(latitude: 47.123456789, longitude: 8.000000001), horizontalAccuracyMeters: 4)]
            batch.lastFixTime = Self.t0
            batch.usableFixCount = 7
            batch.location = LocationReference(time: Self.t0, coordinate: Coordinate(latitude: 47.123456789, longitude: 8.000000001))
            batch.implicitState = .outside
            batch.changes.approaches = records
            _ = try store.commit(batch)
            // A later commit without a location or implicit state keeps the stored ones.
            var next = CommitBatch(profileName: "p", committedAt: Self.t0 + .seconds(1))
            next.fixes = [Fix(time: Self.t0 + .seconds(1), coordinate: Coordinate(latitude: 47, longitude: 8), horizontalAccuracyMeters: 4)]
            next.lastFixTime = Self.t0 + .seconds(1)
            next.usableFixCount = 8
            _ = try store.commit(next)
        }
        let reopened = try EventStore(path: path, readOnly: true)
        let state = try #require(try reopened.engineState())
        #expect(state == EngineState(profile: "p", usableFixCount: 8, lastFixTime: Self.t0 + .seconds(1),
                                     location: LocationReference(time: Self.t0, coordinate: Coordinate(latitude: 47.123456789, longitude: 8.000000001)),
                                     implicitState: .outside, assumptions: AssumptionState()))
        let snapshot = try reopened.loadSnapshot()
        #expect(snapshot.approaches == records)
        #expect(snapshot.usableFixCount == 8 && snapshot.implicitOutside && snapshot.location == state.location)
    }

    @Test func theWatchOnAssumptionsIsKeptUntilItChanges() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("w.db")
        let widened = AssumptionState(widened: MotionBounds(maxSpeedMetersPerSecond: 45, maxAccelerationMetersPerSecondSquared: 1), violations: 2,
                                      stillDistrusted: true, stillDistrustedSensor: "iio\t/sys/bus/iio/devices/iio:device0")
        do {
            let store = try EventStore(path: path)
            var batch = CommitBatch(profileName: "p", committedAt: Self.t0)
            batch.assumptions = widened
            #expect(!batch.isEmpty)
            _ = try store.commit(batch)
            // A commit that does not carry them keeps them.
            var next = CommitBatch(profileName: "p", committedAt: Self.t0 + .seconds(1))
            next.fixes = [Fix(time: Self.t0, coordinate: Coordinate(latitude: 47, longitude: 8), horizontalAccuracyMeters: 4)]
            next.lastFixTime = Self.t0
            _ = try store.commit(next)
            #expect(try store.loadSnapshot().assumptions == widened)
            // The trip's end: the planned bounds again, the count kept; the sensor said moving.
            var reset = CommitBatch(profileName: "p", committedAt: Self.t0 + .seconds(2))
            reset.assumptions = AssumptionState(widened: nil, violations: 2)
            _ = try store.commit(reset)
        }
        let snapshot = try EventStore(path: path, readOnly: true).loadSnapshot()
        #expect(snapshot.assumptions == AssumptionState(widened: nil, violations: 2))
    }

    /// Every part of the movement rules' state, set, comes back as it was written (a restart
    /// continues the trip, the stay and the stand under way).
    @Test func theMovementStateRoundTripsWhole() throws {
        func point(_ s: Int64, _ lat: Double, _ acc: Double) -> TrackPoint {
            TrackPoint(time: Self.t0 + .milliseconds(s), coordinate: Coordinate(latitude: lat, longitude: 8.123456789), accuracyMeters: acc)
        }
        func totals(_ d: Double) -> TripTotals {
            var t = TripTotals()
            t.distanceMeters = d
            t.movingSeconds = d / 3
            t.maxSpeedMetersPerSecond = 1.7
            return t
        }
        func stay(_ s: Int64, fence: String) -> Stay {
            var stay = Stay(first: point(s, 47.5, 4.5), tripAtFirst: totals(12.25))
            stay.lastInside = Self.t0 + .milliseconds(s + 9_000)
            stay.sumLatitude = 0.000123
            stay.sumLongitude = -0.000045
            stay.count = 4
            stay.confirmed = true
            stay.fenceID = fence
            stay.fenceName = "The \(fence)"
            return stay
        }
        var m = MovementState()
        m.motion = .moving
        m.motionSince = Self.t0 + .milliseconds(1_500)
        m.candidate = .still
        m.candidateSince = point(2_000, 47.1, 3)
        m.sensor = .still
        m.sensorSince = Self.t0 + .milliseconds(2_500)
        m.last = point(3_000, 47.2, 6.5)
        m.odometerMeters = 1234.5
        m.odometerAnchor = point(2_800, 47.3, 5)
        m.departure = point(1_000, 47.4, 7)
        m.sinceDeparture = totals(88.5)
        m.trip = TripProgress(start: point(900, 47.45, 8))
        m.trip?.totals = totals(640)
        m.trip?.announced = true
        m.stood = point(100, 47.0, 4)
        m.lastNear = point(200, 47.01, 4)
        m.sinceNear = totals(9)
        m.beyond = 1
        m.firstBeyond = Self.t0 + .milliseconds(2_600)
        m.stop = stay(2_100, fence: "yard")
        m.visit = stay(2_200, fence: "home")
        m.visitSeen = Self.t0 + .milliseconds(2_950)

        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("m.db")
        do {
            let store = try EventStore(path: path)
            var batch = CommitBatch(profileName: "p", committedAt: Self.t0)
            batch.movement = m
            _ = try store.commit(batch)
        }
        #expect(try EventStore(path: path, readOnly: true).loadSnapshot().movement == m)
    }

    @Test func anApproachEventKeepsItsFiguresInTheStore() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("a.db"))
        var event = GeoEvent(id: EventID.make(profile: "p", fenceID: "home", kind: .approach, time: Self.t0), kind: .approach, fenceID: "home",
                             time: Self.t0, coordinate: Coordinate(latitude: 47, longitude: 8), accuracyMeters: 5, rule: .recorded("test"))
        event.approach = Self.approach
        var batch = CommitBatch(profileName: "p", committedAt: Self.t0)
        batch.events = [(event, [])]
        _ = try store.commit(batch)
        #expect(try store.eventLog.events().map(\.event.approach) == [Self.approach])
    }

    /// A database of schema 9 (the engine's state as text in `kv`) opened by this geomon: the
    /// text becomes the typed rows, exactly, and leaves `kv`.
    @Test func aSchemaNineDatabaseIsConvertedExactly() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("old.db")
        do {
            let db = try Connection(path: path)
            for step in Migrations.all.prefix(9) { try db.execute(step.sql) }
            try db.execute("""
                PRAGMA user_version = 9;
                INSERT INTO kv(key, value) VALUES ('profile', 'geofence-only'), ('usable_fix_count', '42'), ('last_fix_ms', '1700000000500'),
                    ('location', '1700000000000,46.31566,6.93558'), ('implicit_state', 'outside'),
                    ('approach', '5:a b:c 3 1700000000000:812.25 1700000008000:-0.1' || char(10) || '1:z 0');
                """)
        }
        let store = try EventStore(path: path)
        #expect(try store.userVersion() == EventStore.schemaVersion)
        #expect(try store.engineState() == EngineState(profile: "geofence-only", usableFixCount: 42, lastFixTime: UTCTime(millisecondsSince1970: 1_700_000_000_500),
                                                       location: LocationReference(time: Self.t0, coordinate: Coordinate(latitude: 46.31566, longitude: 6.93558)),
                                                       implicitState: .outside, assumptions: AssumptionState()))
        #expect(try store.loadSnapshot().approaches == [
            ApproachRecord(fenceID: "a b:c", fired: 3, samples: [ApproachSample(time: Self.t0, signedDistanceMeters: 812.25),
                                                                 ApproachSample(time: Self.t0 + .seconds(8), signedDistanceMeters: -0.1)]),
            ApproachRecord(fenceID: "z", fired: 0),
        ])
        #expect(try Connection(path: path).scalarInt("SELECT count(*) FROM kv") == 0)
    }
}
