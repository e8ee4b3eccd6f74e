import Foundation
import GeomonCore
import GeomonStore
import GeomonTestSupport
import Testing

/// The store against real SQLite files in a temporary directory.
struct EventStoreTests {
    static func event(_ fence: String?, _ kind: EventKind, _ seconds: Int64) -> GeoEvent {
        let time = UTCTime(millisecondsSince1970: seconds * 1000)
        return GeoEvent(id: EventID.make(profile: "p", fenceID: fence, kind: kind, time: time), kind: kind, fenceID: fence,
                        time: time, coordinate: Coordinate(latitude: 47, longitude: 8), accuracyMeters: 5, rule: .recorded("test"))
    }

    static func fix(_ seconds: Int64) -> Fix {
        Fix(time: UTCTime(millisecondsSince1970: seconds * 1000), coordinate: Coordinate(latitude: 47, longitude: 8.001),
            horizontalAccuracyMeters: 4.5, speedMetersPerSecond: 1.5)
    }

    static func batch(fixes: [Fix] = [], events: [GeoEvent] = [], hooks: [String] = ["enter#0"], records: [FenceStateRecord] = []) -> CommitBatch {
        var batch = CommitBatch(profileName: "p", committedAt: UTCTime(millisecondsSince1970: 1))
        batch.fixes = fixes
        batch.lastFixTime = fixes.last?.time
        batch.events = events.map { ($0, hooks.map { DeliveryTarget(hookKey: $0, argv: ["/bin/echo", "a b", "$(x)"]) }) }
        batch.changes = EngineChanges(upserts: records)
        return batch
    }

    @Test func aNewDatabaseIsMigratedUsesWALAndIsPrivate() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("new.db")
        let store = try EventStore(path: path)
        #expect(try store.userVersion() == EventStore.schemaVersion)
        #expect(try store.journalMode() == "wal")
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        try store.commit(Self.batch(fixes: [Self.fix(1)]))
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            let m = try FileManager.default.attributesOfItem(atPath: path + suffix)[.posixPermissions] as? Int
            #expect(m == 0o600, "\(suffix)")
        }
    }

    /// Commands and the fences they push: stored together, one transaction each, by the
    /// waypoints' identity, and kept across a reopen.
    @Test func commandsAndPushedFencesAreStoredTogether() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("c.db")
        let t = UTCTime(millisecondsSince1970: 1_700_000_000_000)
        func fence(_ key: String, _ id: String, _ lat: Double) -> PushedFence {
            PushedFence(key: key, fenceID: id, name: id.uppercased(), center: Coordinate(latitude: lat, longitude: 7), radiusMeters: 100, pushedAt: t, command: 0)
        }
        do {
            let store = try EventStore(path: path)
            let first = try store.commandLog.record(StoredCommand(received: t, topic: "d/cmd", action: "setWaypoints", accepted: true, summary: "set 2"),
                                                setting: [fence("rid:a", "a", 46), fence("rid:b", "b", 47)])
            let refused = try store.commandLog.record(StoredCommand(received: t, topic: "d/cmd", action: "setConfiguration", accepted: false, summary: "no"))
            let second = try store.commandLog.record(StoredCommand(received: t, topic: "d/cmd", action: "setWaypoints", accepted: true, summary: "b moved, a removed"),
                                                 removing: ["rid:a"], setting: [fence("rid:b", "b", 48)])
            #expect(first < refused && refused < second)
            let pushed = try store.pushedFenceList.all()
            #expect(pushed.map(\.fenceID) == ["b"] && pushed[0].center.latitude == 48 && pushed[0].command == second)
            // Two identities may not share a fence id: nothing of that command is stored.
            #expect(throws: (any Error).self) {
                try store.commandLog.record(StoredCommand(received: t, topic: "d/cmd", action: "setWaypoints", accepted: true, summary: "clash"),
                                        setting: [fence("rid:c", "b", 1)])
            }
            #expect(try store.commandLog.all().count == 3)
        }
        let again = try EventStore(path: path)
        #expect(try again.pushedFenceList.all().map(\.key) == ["rid:b"])
        #expect(try again.commandLog.all().map(\.accepted) == [true, false, true])
        try again.commandLog.record(StoredCommand(received: t, topic: "d/cmd", action: "clearWaypoints", accepted: true, summary: "removed 1"), clearing: true)
        #expect(try again.pushedFenceList.all().isEmpty)
    }

    @Test func reopeningKeepsTheVersionAndTheData() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("a.db")
        do {
            let store = try EventStore(path: path)
            try store.commit(Self.batch(fixes: [Self.fix(1), Self.fix(2)], events: [Self.event("a", .enter, 1)]))
        }
        let again = try EventStore(path: path)
        #expect(try again.userVersion() == EventStore.schemaVersion)
        #expect(try again.fixLog.count() == 2)
        let read = try again.eventLog.events().map(\.event)
        #expect(read == [Self.event("a", .enter, 1)], "\(read)")
        #expect(try again.lastFixTime() == UTCTime(millisecondsSince1970: 2000))
        let readOnly = try EventStore(path: path, readOnly: true)
        #expect(try readOnly.eventLog.events().count == 1)
    }

    @Test func aDatabaseFromANewerVersionIsRefused() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("newer.db")
        _ = try EventStore(path: path)
        try Connection(path: path).execute("PRAGMA user_version = 99")
        for readOnly in [false, true] {
            do {
                _ = try EventStore(path: path, readOnly: readOnly)
                Issue.record("opened a newer database")
            } catch let error as StoreError {
                #expect(error.kind == .newerSchema)
                #expect(error.description.contains("version 99 is newer"))
            }
        }
        #expect(try Connection(path: path).scalarInt("PRAGMA user_version") == 99)
    }

    @Test(arguments: ["garbage", "header"])
    func aFileThatIsNotADatabaseIsRefusedAndLeftUntouched(kind: String) throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("x.db")
        var bytes = Array("hello, I am a text file, not a database\n".utf8)
        if kind == "header" {
            // A valid SQLite header followed by junk: the damage is found by SQLite itself.
            bytes = Array("SQLite format 3".utf8) + [0] + [UInt8](repeating: 0xA5, count: 8192)
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        for readOnly in [false, true] {
            do {
                _ = try EventStore(path: path, readOnly: readOnly)
                Issue.record("opened a non-database (\(kind), readOnly \(readOnly))")
            } catch let error as StoreError {
                #expect(error.kind == .notADatabase)
                #expect(error.description.contains("left untouched"))
            }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(bytes))
    }

    /// Another program's SQLite database is never turned into geomon's; an empty file becomes
    /// one only where the caller may create a database (not for the maintenance commands).
    @Test func anotherProgramsDatabaseIsRefusedAndAnEmptyFileIsMadeOnlyWhereAllowed() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let foreign = dir.path("foreign.db")
        try Connection(path: foreign).execute("CREATE TABLE mydata(a)")
        for create in [true, false] {
            #expect {
                _ = try EventStore(path: foreign, create: create)
            } throws: { ($0 as? StoreError)?.kind == .notADatabase && "\($0)".contains("left untouched") }
        }
        let tables = try Connection(path: foreign).scalarInt("SELECT count(*) FROM sqlite_master")
        #expect(tables == 1)
        let empty = dir.path("empty.db")
        try Data().write(to: URL(fileURLWithPath: empty))
        #expect {
            _ = try EventStore(path: empty, create: false)
        } throws: { "\($0)".contains("not a geomon database") }
        #expect(try Data(contentsOf: URL(fileURLWithPath: empty)).isEmpty)
        #expect(try EventStore(path: empty).userVersion() > 0)
    }

    /// A file that sets a schema version but lacks geomon's tables (another program's, or one
    /// that looks newer than it is) is refused before any pragma or migration touches it.
    @Test(arguments: [1, 2, 13])
    func anotherProgramsDatabaseWithASchemaVersionIsLeftUntouched(_ version: Int) throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let foreign = dir.path("foreign.db")
        try Connection(path: foreign).execute("PRAGMA user_version=\(version); CREATE TABLE notes(a)")
        let before = try Data(contentsOf: URL(fileURLWithPath: foreign))
        for readOnly in [false, true] {
            #expect {
                _ = try EventStore(path: foreign, readOnly: readOnly)
            } throws: { $0 is StoreError }
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: foreign)) == before)
        #expect(!FileManager.default.fileExists(atPath: foreign + "-wal"))
    }

    /// `geomon run`'s store syncs the commits that carry events (hooks and the broker act on
    /// them) and only those; replay's syncs none.
    @Test func commitsCarryingEventsAreSyncedForARun() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let run = try EventStore(path: dir.path("run.db"), syncEventCommits: true)
        try run.commit(Self.batch(fixes: [Self.fix(1)]))
        #expect(run.syncedCommits == 0)
        try run.commit(Self.batch(fixes: [Self.fix(2)], events: [Self.event("home", .enter, 2)]))
        #expect(run.syncedCommits == 1)
        try run.commit(Self.batch(fixes: [Self.fix(3)]))
        #expect(run.syncedCommits == 1)
        #expect(try run.eventLog.events().count == 1)
        let replay = try EventStore(path: dir.path("replay.db"))
        try replay.commit(Self.batch(fixes: [Self.fix(2)], events: [Self.event("home", .enter, 2)]))
        #expect(replay.syncedCommits == 0)
    }

    /// An empty file made into a database becomes private (mode 0600) whatever the umask made
    /// it: it will hold the location history, and its -wal and -shm follow its mode.
    @Test func anEmptyFileMadeIntoADatabaseBecomesPrivate() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("touched.db")
        #expect(FileManager.default.createFile(atPath: path, contents: Data(), attributes: [.posixPermissions: 0o644]))
        let store = try EventStore(path: path)
        try store.commit(Self.batch(fixes: [Self.fix(1)]))
        for file in [path, path + "-wal"] {
            let mode = try #require(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int)
            #expect(mode == 0o600, "\(file): \(String(mode, radix: 8))")
        }
    }

    /// A hook command replaced by one the events already have deliveries for (a command used
    /// before): those events keep theirs under the old command, the others move, nothing throws.
    @Test func rekeyingSkipsEventsThatHaveADeliveryForTheNewCommand() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("rekey.db"))
        try store.commit(Self.batch(fixes: [Self.fix(1)], events: [Self.event("home", .enter, 1)], hooks: ["a", "b"]))
        try store.commit(Self.batch(fixes: [Self.fix(2)], events: [Self.event("home", .exit, 2)], hooks: ["a"]))
        #expect(try store.deliveryQueue.rekey(from: "a", to: "b", argv: ["./b.sh"]) == 1)
        let keys = try store.deliveryQueue.deliveries(status: .pending).map { "\($0.event.kind.rawValue) \($0.hookKey) \($0.argv)" }
        #expect(keys.sorted() == ["enter a [\"/bin/echo\", \"a b\", \"$(x)\"]", "enter b [\"/bin/echo\", \"a b\", \"$(x)\"]", "exit b [\"./b.sh\"]"], "\(keys)")
    }

    @Test func aReadOnlyOpenOfAMissingFileFailsWithoutCreatingIt() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("missing.db")
        #expect(throws: StoreError.self) { _ = try EventStore(path: path, readOnly: true) }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aBatchIsCommittedInOneTransactionOrNotAtAll() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("atomic.db")
        let store = try EventStore(path: path)
        try store.commit(Self.batch(fixes: [Self.fix(1)]))
        // Make the last write of the next batch (a delivery row) fail.
        try Connection(path: path).execute("""
            CREATE TRIGGER boom BEFORE INSERT ON deliveries WHEN NEW.hook_key = 'boom'
            BEGIN SELECT RAISE(ABORT, 'boom'); END
            """)
        let record = FenceStateRecord(fenceID: "a", state: .inside, stateSince: UTCTime(millisecondsSince1970: 2000))
        var batch = Self.batch(fixes: [Self.fix(2), Self.fix(3)], events: [Self.event("a", .enter, 2)], hooks: ["enter#0", "boom"], records: [record])
        batch.usableFixCount = 3
        #expect(throws: SQLiteError.self) { try store.commit(batch) }
        #expect(try store.fixLog.count() == 1)
        #expect(try store.eventLog.events().isEmpty)
        #expect(try store.deliveryQueue.deliveries().isEmpty)
        #expect(try store.fenceStates().isEmpty)
        #expect(try store.lastFixTime() == UTCTime(millisecondsSince1970: 1000))
        #expect(try store.loadSnapshot().usableFixCount == 0)
    }

    @Test func theEngineSnapshotRoundTrips() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("snap.db"))
        let pending = PendingTransition(state: .outside, count: 1, firstTime: UTCTime(millisecondsSince1970: 5000),
                                        firstCoordinate: Coordinate(latitude: 47.1234567, longitude: 8.7654321),
                                        firstAccuracyMeters: 7.25, firstSignedDistanceMeters: 18.5)
        var records = [
            FenceStateRecord(fenceID: "a", state: .inside, stateSince: UTCTime(millisecondsSince1970: 2000),
                             sinceCoordinate: Coordinate(latitude: 47.1, longitude: 8.2), sinceAccuracyMeters: 3, dwellCount: 1, pending: pending),
            FenceStateRecord(fenceID: "b", state: .unknown),
        ]
        // What consumers were told of the stay, and the fence it was decided against (a
        // fingerprint with the top bit set: stored as a negative INTEGER).
        records[0].reported = true
        records[0].name = "Zuhause"
        records[0].fingerprint = 0xF000_0000_0000_0001
        var batch = Self.batch(fixes: [Self.fix(6)], records: records)
        batch.usableFixCount = 6
        batch.location = LocationReference(time: UTCTime(millisecondsSince1970: 4000), coordinate: Coordinate(latitude: 47.000001, longitude: -8.5))
        try store.commit(batch)
        let expected = EngineSnapshot(records: records, usableFixCount: 6, lastFixTime: UTCTime(millisecondsSince1970: 6000), location: batch.location)
        #expect(try store.loadSnapshot() == expected)
        var removal = Self.batch(fixes: [Self.fix(7)])
        removal.changes = EngineChanges(removals: ["a"])
        try store.commit(removal)
        #expect(try store.fenceStates().map(\.fenceID) == ["b"])
    }

    @Test func aStayStoredBeforeTheReportedColumnIsTakenAsTold() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("old.db")
        let store = try EventStore(path: path)
        try store.commit(Self.batch(fixes: [Self.fix(6)], records: [
            FenceStateRecord(fenceID: "in", state: .inside, stateSince: UTCTime(millisecondsSince1970: 2000)),
            FenceStateRecord(fenceID: "unsure", state: .unknown),
        ]))
        // As a row written before migration 9 reads: the new columns NULL.
        let sqlite = try runProcess(URL(fileURLWithPath: "/usr/bin/sqlite3"), [path, "UPDATE fence_state SET reported = NULL, fence_name = NULL, fingerprint = NULL"])
        #expect(sqlite.exitCode == 0, "\(sqlite.stderr)")
        let records = try store.fenceStates()
        #expect(records.map(\.reported) == [true, false])
        #expect(records.allSatisfy { $0.name == nil && $0.fingerprint == nil })
    }

    @Test func anEventIsNeverStoredTwice() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("dup.db"))
        let e = Self.event("a", .enter, 1)
        #expect(try store.commit(Self.batch(events: [e])).count == 1)
        #expect(try store.commit(Self.batch(events: [e])).isEmpty)
        #expect(try store.eventLog.events().count == 1)
        #expect(try store.deliveryQueue.deliveries().count == 1)
        #expect(try store.deliveryQueue.deliveries()[0].argv == ["/bin/echo", "a b", "$(x)"])
    }

    @Test func fixesAreKeptForTheRetentionWindowRelativeToTheNewest() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("ret.db"), keepFixes: .seconds(60))
        try store.commit(Self.batch(fixes: (1...100).map { Self.fix($0) }))
        try store.commit(Self.batch(fixes: (101...200).map { Self.fix($0) }))
        var times: [Int64] = []
        try store.fixLog.forEach { times.append($0.time.millisecondsSince1970 / 1000) }
        #expect(times == Array(140...200))
    }

    /// A damaged database whose deliveries name events that are gone: listings and counts leave
    /// the rows out, the hook poll marks them all dead at once so the deliveries behind them
    /// in their queue go on, and requeueing the dead does not revive them.
    @Test func deliveriesWhoseEventIsGoneAreDeadNotABlockForTheirQueue() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("damaged.db")
        let store = try EventStore(path: path)
        let lost = [Self.event("a", .enter, 1), Self.event("a", .exit, 2)], kept = Self.event("a", .enter, 3)
        try store.commit(Self.batch(events: lost + [kept], hooks: ["h#0"]))
        let damage = try Connection(path: path)
        try damage.execute("PRAGMA foreign_keys = OFF")
        try damage.execute("DELETE FROM events WHERE id IN ('\(lost[0].id)', '\(lost[1].id)')")
        #expect(try store.deliveryQueue.deliveries().map(\.eventID) == [kept.id])
        #expect(try store.deliveryQueue.pendingDeliveryCount() == 1)
        let now = UTCTime(millisecondsSince1970: 10_000)
        // One poll retires both and finds the delivery they held back.
        #expect(try store.deliveryQueue.dueDeliveries(now: now).map(\.eventID) == [kept.id])
        let dead = try damage.scalarInt("SELECT count(*) FROM deliveries WHERE status = 'dead' AND last_error = '\(EventStore.missingEventError)'")
        #expect(dead == 2)
        #expect(try store.deliveryQueue.requeueDead() == 0)
        #expect(try store.deliveryQueue.pendingDeliveryCount() == 1)
    }

    @Test func theDeliveryQueueKeepsEventOrderPerHookAndFence() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("q.db"))
        let e1 = Self.event("a", .enter, 1), e2 = Self.event("a", .exit, 2), e3 = Self.event("b", .enter, 3)
        try store.commit(Self.batch(events: [e1, e2, e3], hooks: ["h#0", "h#1"]))
        let now = UTCTime(millisecondsSince1970: 10_000)
        func name(_ d: Delivery) -> String { "\(d.eventID == e1.id ? 1 : d.eventID == e2.id ? 2 : 3)\(d.hookKey)" }
        func due() throws -> [String] { try store.deliveryQueue.dueDeliveries(now: now).map(name) }
        #expect(try due() == ["1h#0", "1h#1", "3h#0", "3h#1"])
        #expect(try store.deliveryQueue.pendingDeliveryCount() == 6)
        #expect(try store.deliveryQueue.dueDeliveries(now: UTCTime(millisecondsSince1970: 0)).count == 4)   // new rows are due at once

        let head = try #require(try store.deliveryQueue.dueDeliveries(now: now).first)
        try store.deliveryQueue.markRunning(id: head.id, attempt: 1)
        #expect(try due() == ["1h#1", "3h#0", "3h#1"])          // a running head blocks its group
        try store.deliveryQueue.markRetry(id: head.id, nextAttemptAt: UTCTime(millisecondsSince1970: 20_000), error: "exit 1")
        #expect(try due() == ["1h#1", "3h#0", "3h#1"])          // not due yet, still blocks e2
        let later = try store.deliveryQueue.dueDeliveries(now: UTCTime(millisecondsSince1970: 20_000))
        #expect(later.first?.id == head.id && later.first?.status == .retrying && later.first?.lastError == "exit 1")
        try store.deliveryQueue.markRunning(id: head.id, attempt: 2)
        try store.deliveryQueue.markDelivered(id: head.id)
        #expect(try due() == ["1h#1", "2h#0", "3h#0", "3h#1"])

        let second = try #require(try store.deliveryQueue.dueDeliveries(now: now).first { name($0) == "1h#1" })
        try store.deliveryQueue.markRunning(id: second.id, attempt: 1)
        try store.deliveryQueue.markDead(id: second.id, error: "gave up")
        #expect(try store.deliveryQueue.deliveries(status: .dead).map(\.id) == [second.id])
        #expect(try due() == ["2h#0", "2h#1", "3h#0", "3h#1"])  // dead does not block

        let third = try #require(try store.deliveryQueue.dueDeliveries(now: now).first { name($0) == "3h#0" })
        try store.deliveryQueue.markRunning(id: third.id, attempt: 1)
        #expect(try store.deliveryQueue.recoverInterruptedCount() == 1)
        let recovered = try #require(try store.deliveryQueue.deliveries().first { $0.id == third.id })
        #expect(recovered.status == .retrying && recovered.attempt == 1 && recovered.eventID == e3.id)
        #expect(try store.deliveryQueue.requeueDead() == 1)
        #expect(try store.deliveryQueue.deliveries(status: .dead).isEmpty)
        #expect(try store.deliveryQueue.pendingDeliveryCount() == 5)
        // Not an SQLite failure: a row that is not there.
        #expect { try store.deliveryQueue.markDelivered(id: 12345) } throws: { ($0 as? StoreError)?.kind == .noSuchRow }
    }

    @Test func storedFixesReadBackExactly() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("fixes.db"))
        let fixes = [
            Fix(time: UTCTime(millisecondsSince1970: 1_270_293_745_844), coordinate: Coordinate(latitude: 47.332895, longitude: 7.821065),
                horizontalAccuracyMeters: 12.5),
            Fix(time: UTCTime(millisecondsSince1970: 1_270_293_746_041), coordinate: Coordinate(latitude: -33.8688197, longitude: -151.2092955),
                horizontalAccuracyMeters: 2500, speedMetersPerSecond: 0, courseDegrees: 359.99, source: .coarse),
        ]
        try store.commit(Self.batch(fixes: [fixes[0]]))
        try store.commit(Self.batch(fixes: [fixes[1]]))
        var read: [Fix] = []
        try store.fixLog.forEach { read.append($0) }
        #expect(read == fixes)
        #expect(try store.fixLog.last() == fixes[1])
        #expect(try store.fixLog.count() == 2)
        var since: [Fix] = []
        try store.fixLog.forEach(since: fixes[1].time) { since.append($0) }
        #expect(since == [fixes[1]])
    }
}

/// The MQTT outbox: written with the commit, marked on acknowledgement, bounded.
struct PublicationOutboxTests {
    static func location(_ seconds: Int64) -> Publication {
        Publication(kind: .location, topic: "t", payload: "{\"tst\":\(seconds)}", retain: true, time: UTCTime(millisecondsSince1970: seconds * 1000))
    }

    @Test func aMessageCarryingAnEventIsWrittenOnlyWithThatEventOnce() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("o.db"))
        let event = EventStoreTests.event("home", .enter, 10)
        var batch = EventStoreTests.batch(fixes: [EventStoreTests.fix(10)], events: [event], hooks: [])
        batch.publications = [Publication(kind: .transition, topic: "t/event", payload: "{}", retain: false, time: event.time, eventID: event.id), Self.location(10)]
        try store.commit(batch)
        #expect(try store.outbox.pendingPublicationCount() == 2)
        // The same event decided again (a restart re-decides what was not committed): the
        // event is already stored, so its message is not written again; the location is new.
        batch.fixes = [EventStoreTests.fix(11)]
        batch.lastFixTime = batch.fixes.last?.time
        try store.commit(batch)
        let pending = try store.outbox.pendingPublications(after: 0, limit: 10)
        #expect(pending.map(\.publication.kind) == [.transition, .location, .location])
        try store.outbox.markPublished([pending[0].seq, pending[1].seq], at: UTCTime(millisecondsSince1970: 99))
        #expect(try store.outbox.pendingPublications(after: 0, limit: 10).map(\.seq) == [pending[2].seq])
        #expect(try store.outbox.publications(includingPublished: true, limit: 10).count == 3)
        // Published again on request, in order.
        #expect(try store.outbox.requeuePublications(since: UTCTime(millisecondsSince1970: 0)) == 2)
        #expect(try store.outbox.pendingPublicationCount() == 3)
    }

    @Test func theBoundDropsPublishedThenOldestLocationsNeverEvents() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("o.db"))
        store.publicationLimits = PublicationLimits(maxRows: 5, maxAge: .seconds(1000))
        let event = EventStoreTests.event("home", .enter, 1)
        var first = EventStoreTests.batch(events: [event], hooks: [])
        first.publications = [Publication(kind: .transition, topic: "e", payload: "{}", retain: false, time: event.time, eventID: event.id)]
            + (1...3).map(Self.location)
        try store.commit(first)
        let published = try store.outbox.pendingPublications(after: 0, limit: 2).last!.seq
        try store.outbox.markPublished([published], at: UTCTime(millisecondsSince1970: 5))
        var second = EventStoreTests.batch()
        second.publications = (4...6).map(Self.location)
        try store.commit(second)
        // 7 rows over a bound of 5: the published location (1) goes first, then location 2.
        let rows = try store.outbox.publications(includingPublished: true, limit: 100)
        #expect(rows.map(\.publication.payload) == ["{}", "{\"tst\":3}", "{\"tst\":4}", "{\"tst\":5}", "{\"tst\":6}"])
        // Older than max_age before the newest: locations go, the event stays.
        var late = EventStoreTests.batch()
        late.publications = [Self.location(5000)]
        try store.commit(late)
        #expect(try store.outbox.publications(includingPublished: true, limit: 100).map(\.publication.payload) == ["{}", "{\"tst\":5000}"])
    }

    /// The waypoints message is dated by the system clock, here years after the receiver's
    /// dates: the age bound counts from the newest of the other messages, so it does not drop
    /// the pending locations.
    @Test func theAgeBoundCountsInTheReceiversTimeNotTheWaypointsMessages() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("o.db"))
        store.publicationLimits = PublicationLimits(maxRows: 100, maxAge: .seconds(1000))
        var first = EventStoreTests.batch()
        first.publications = [Self.location(100), Self.location(200)]
        try store.commit(first)
        let now = UTCTime(millisecondsSince1970: 1_800_000_000_000)
        try store.outbox.enqueue([Publication(kind: .waypoints, topic: "w", payload: "{\"n\":1}", retain: true, time: now)], at: now)
        let pending = try store.outbox.pendingPublications(after: 0, limit: 10).map(\.publication.payload)
        #expect(pending == ["{\"tst\":100}", "{\"tst\":200}", "{\"n\":1}"])
        // The receiver's own later message still ages the first out.
        var late = EventStoreTests.batch()
        late.publications = [Self.location(1150)]
        try store.commit(late)
        #expect(try store.outbox.pendingPublications(after: 0, limit: 10).map(\.publication.payload) == ["{\"tst\":200}", "{\"n\":1}", "{\"tst\":1150}"])
    }

    @Test func aNewWaypointsMessageReplacesOneStillPending() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("o.db"))
        for n in 1...3 {
            try store.outbox.enqueue([Publication(kind: .waypoints, topic: "w", payload: "{\"n\":\(n)}", retain: true, time: UTCTime(millisecondsSince1970: 0))], at: UTCTime(millisecondsSince1970: 0))
        }
        #expect(try store.outbox.pendingPublications(after: 0, limit: 10).map(\.publication.payload) == ["{\"n\":3}"])
    }

    /// The waypoints queued at a reload are dated by the system clock; a receiver whose dates
    /// are years away (gpsd's week-rollover fix) dates the next messages. Neither the age nor
    /// the row bound drops the pending waypoints: only a newer waypoints message replaces them.
    @Test func thePendingWaypointsOutliveTheBound() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = try EventStore(path: dir.path("o.db"))
        store.publicationLimits = PublicationLimits(maxRows: 2, maxAge: .seconds(1000))
        try store.outbox.enqueue([Publication(kind: .waypoints, topic: "w", payload: "{\"n\":1}", retain: true, time: UTCTime(millisecondsSince1970: 0))],
                          at: UTCTime(millisecondsSince1970: 0))
        var late = EventStoreTests.batch()
        late.publications = [Self.location(100_000_000), Self.location(100_000_001), Self.location(100_000_002)]
        try store.commit(late)
        let pending = try store.outbox.pendingPublications(after: 0, limit: 10).map(\.publication.payload)
        #expect(pending.first == "{\"n\":1}" && pending.count == 2, "\(pending)")
    }
}
