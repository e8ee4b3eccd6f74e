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
            try store.commit(batch)
            // A later commit without a location or implicit state keeps the stored ones.
            var next = CommitBatch(profileName: "p", committedAt: Self.t0 + .seconds(1))
            next.fixes = [Fix(time: Self.t0 + .seconds(1), coordinate: Coordinate(latitude: 47, longitude: 8), horizontalAccuracyMeters: 4)]
            next.lastFixTime = Self.t0 + .seconds(1)
            next.usableFixCount = 8
            try store.commit(next)
        }
        let reopened = try EventStore(path: path, readOnly: true)
        let state = try #require(try reopened.engineState())
        #expect(state == EngineState(profile: "p", usableFixCount: 8, lastFixTime: Self.t0 + .seconds(1),
                                     location: LocationReference(time: Self.t0, coordinate: Coordinate(latitude: 47.123456789, longitude: 8.000000001)),
                                     implicitState: .outside, assumptions: AssumptionState()))
        let snapshot = try reopened.loadSnapshot()
        #expect(snapshot.approaches == records)
        #expect(snapshot.usableFixCount == 8 && snapshot.location == state.location)
    }

    @Test func theWatchOnAssumptionsIsKeptUntilItChanges() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("w.db")
        let widened = AssumptionState(widened: MotionBounds(maxSpeedMetersPerSecond: 45, maxAccelerationMetersPerSecondSquared: 1), violations: 2)
        do {
            let store = try EventStore(path: path)
            var batch = CommitBatch(profileName: "p", committedAt: Self.t0)
            batch.assumptions = widened
            #expect(!batch.isEmpty)
            try store.commit(batch)
            // A commit that does not carry them keeps them.
            var next = CommitBatch(profileName: "p", committedAt: Self.t0 + .seconds(1))
            next.fixes = [Fix(time: Self.t0, coordinate: Coordinate(latitude: 47, longitude: 8), horizontalAccuracyMeters: 4)]
            next.lastFixTime = Self.t0
            try store.commit(next)
            #expect(try store.loadSnapshot().assumptions == widened)
            // The trip's end: the planned bounds again, the count kept.
            var reset = CommitBatch(profileName: "p", committedAt: Self.t0 + .seconds(2))
            reset.assumptions = AssumptionState(widened: nil, violations: 2)
            try store.commit(reset)
        }
        let snapshot = try EventStore(path: path, readOnly: true).loadSnapshot()
        #expect(snapshot.assumptions == AssumptionState(widened: nil, violations: 2))
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
        try store.commit(batch)
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
