import Foundation
import GeomonCore
import GeomonDaemon
import GeomonEvaluation
import GeomonFormat
import GeomonStore
import GeomonTestSupport
import Testing

/// The driver and its journal against a real store file: commit semantics, restart, resume.
struct JournalTests {
    static let center = Coordinate(latitude: 47, longitude: 8)
    static let metersPerDegree = 6_371_008.8 * Double.pi / 180

    static func fix(_ t: Int64, _ d: Double, accuracy: Double = 5) -> Fix {
        Fix(time: UTCTime(millisecondsSince1970: t * 1000),
            coordinate: Coordinate(latitude: center.latitude + d / metersPerDegree, longitude: center.longitude),
            horizontalAccuracyMeters: accuracy)
    }

    static func profile() -> Profile {
        var p = Profile(name: "monitor-test", mode: .regions)
        p.fences = [
            Fence(id: "home", shape: .circle(center: center, radiusMeters: 100), events: [.enter, .exit, .dwell], dwell: .seconds(60)),
            Fence(id: "far", shape: .circle(center: Coordinate(latitude: 47, longitude: 8.02), radiusMeters: 100)),
        ]
        p.hooks.enter = [HookSpec(exec: ["/bin/true"]), HookSpec(exec: ["/bin/echo", "entered"])]
        p.hooks.dwell = [HookSpec(exec: ["/bin/true"])]
        return p
    }

    /// A walk in and out of "home" several times with a gap (dwell by deadline) and noise.
    static let walk: [Fix] = {
        var fixes: [Fix] = []
        var t: Int64 = 0
        for lap in 0..<4 {
            for d in stride(from: 400.0, through: 0, by: -20) { t += 2; fixes.append(fix(t, d, accuracy: lap == 2 ? 12 : 5)) }
            t += lap == 1 ? 300 : 20                              // a gap while inside
            for s in 0..<40 { t += 3; fixes.append(fix(t, Double(s % 5) * 3, accuracy: s % 9 == 0 ? 80 : 6)) }
            for d in stride(from: 0.0, through: 400, by: 25) { t += 2; fixes.append(fix(t, d)) }
        }
        return fixes
    }()

    /// Replays `fixes` with the receiver always on into the database at `path`, as `geomon
    /// replay` does: a fresh machine, the prefix up to the last committed fix decided again
    /// silently. Without `flush` it stops after the last input like a crash: the open batch is lost.
    @discardableResult
    static func replay(_ fixes: [Fix], path: String, batchSize: Int, batchTime: Duration? = nil, flush: Bool = true) throws
        -> (events: [StoredEvent], processed: Int, commits: Int) {
        let profile = profile()
        let store = try EventStore(path: path)
        let journal = try Journal(profile: profile, store: store, outboxes: [HookOutbox(profile: profile)], batchSize: batchSize)
        journal.batchTime = batchTime
        var configuration = PowerConfiguration(profile: profile)
        configuration.alwaysOn = true
        let receiver = ReplayReceiver(track: fixes, coarse: [], settings: profile.receiver,
                                      interpolationMaxGap: .seconds(10), configuration: configuration,
                                      powerMethod: profile.powerMethod)
        let source = ReceiverModelService(receiver: receiver, start: fixes[0].time, end: fixes[fixes.count - 1].time)
        let driver = MonitorDriver(machine: Monitor(profile: profile, configuration: configuration), journal: journal,
                                   clock: VirtualClock(start: fixes[0].time), services: [source])
        driver.silentThrough = journal.lastCommittedFixTime
        driver.decideUntil = fixes[fixes.count - 1].time
        var events: [StoredEvent] = []
        var processed = 0
        driver.onCommitted = { committed, _ in events += committed }
        driver.onEffect = { effect, _ in if case let .commit(c) = effect { processed += c.fixes.count } }
        try driver.start()
        // Up to the end of the inputs; a crash loses the open batch, a clean end commits it.
        while !source.finished, try driver.step() != .finished {}
        if flush { driver.stop() }
        return (events, processed, journal.commits)
    }

    @Test func eventsAndDeliveryRowsAreCommittedTogether() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let events = try Self.replay(Self.walk, path: dir.path("m.db"), batchSize: 64).events
        #expect(events.map(\.event.kind).filter { $0 == .enter }.count == 4)
        #expect(events.contains { $0.event.kind == .dwell && $0.event.rule.text.contains("deadline") })
        let store = try EventStore(path: dir.path("m.db"), readOnly: true)
        #expect(try store.eventLog.events().map(\.event) == events.map(\.event))
        let deliveries = try store.deliveryQueue.deliveries()
        let enters = events.filter { $0.event.kind == .enter }.count
        let dwells = events.filter { $0.event.kind == .dwell }.count
        #expect(deliveries.count == enters * 2 + dwells)
        // One key per distinct command (HookCatalog's scheme): /bin/true under enter and dwell is one hook.
        #expect(Set(deliveries.map(\.hookKey)) == [#"["/bin/true"]"#, #"["/bin/echo","entered"]"#])
        #expect(deliveries.filter { $0.hookKey == #"["/bin/echo","entered"]"# }.allSatisfy { $0.argv == ["/bin/echo", "entered"] && $0.event.fenceID == "home" })
        #expect(try store.fixLog.count() == Self.walk.count)
    }

    /// A fence that reports enters only, with `exit` hooks in the profile: its exits end the
    /// stays for MQTT consumers (`unlisted`), are stored as such (read back from the file), and
    /// queue no hook delivery; its enters queue theirs.
    @Test func anUnlistedExitIsStoredAndRunsNoHook() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        var profile = Self.profile()
        profile.fences[0].events = [.enter]
        profile.fences[0].cooldown = .seconds(600)
        profile.hooks.exit = [HookSpec(exec: ["/bin/echo", "left"])]
        var mqtt = MQTTSettings(host: "127.0.0.1", topic: "owntracks/u/d")
        mqtt.locations = MQTTSettings.Locations.none
        profile.publish.mqtt = mqtt
        let store = try EventStore(path: dir.path("u.db"))
        let journal = try Journal(profile: profile, store: store, outboxes: [HookOutbox(profile: profile)])
        var configuration = PowerConfiguration(profile: profile)
        configuration.alwaysOn = true
        var machine = Monitor(profile: profile, configuration: configuration)
        for case let .commit(commit) in machine.start(now: Self.fix(1, 300).time) { try journal.add(commit, now: Self.fix(1, 300).time) }
        // In, out, and again within the cooldown: the second stay's enter and exit are held
        // back, and that exit is unlisted too.
        let fixes = [Self.fix(1, 300), Self.fix(2, 300), Self.fix(10, 0), Self.fix(11, 0), Self.fix(20, 300), Self.fix(21, 300),
                     Self.fix(30, 0), Self.fix(31, 0), Self.fix(40, 300), Self.fix(41, 300)]
        for fix in fixes {
            for case let .commit(commit) in machine.fixReceived(fix, now: fix.time) {
                try journal.add(commit, now: fix.time)
            }
        }
        try journal.flush(now: Self.fix(41, 300).time)
        let stored = try EventStore(path: dir.path("u.db"), readOnly: true)
        let events = try stored.eventLog.events().map(\.event)
        #expect(events.map(\.kind) == [.enter, .exit, .enter, .exit])
        #expect(events.map(\.unlisted) == [false, true, false, true])
        #expect(events.map(\.suppressed) == [false, false, true, true])
        let deliveries = try stored.deliveryQueue.deliveries()
        #expect(deliveries.count == 2)
        #expect(deliveries.allSatisfy { $0.event.kind == .enter })
    }

    @Test func aRestartMidDwellContinuesTheDwellFromTheStore() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("dwell.db")
        let fixes = [Self.fix(1, 300), Self.fix(2, 300), Self.fix(10, 0), Self.fix(11, 0), Self.fix(30, 0)]
        try Self.replay(fixes, path: path, batchSize: 1000)
        // A restart (as `geomon run` does): the machine continues from the stored engine state.
        let store = try EventStore(path: path)
        let journal = try Journal(profile: Self.profile(), store: store, outboxes: [HookOutbox(profile: Self.profile())])
        var configuration = PowerConfiguration(profile: Self.profile())
        configuration.alwaysOn = true
        var machine = Monitor(profile: Self.profile(), snapshot: journal.snapshot, configuration: configuration)
        #expect(machine.nextDeadline == UTCTime(millisecondsSince1970: 70_000))
        var events: [GeoEvent] = []
        for case let .commit(commit) in machine.deadlineReached(now: UTCTime(millisecondsSince1970: 70_000)) {
            events += commit.events
            try journal.add(commit, now: UTCTime(millisecondsSince1970: 70_000))
        }
        #expect(events.map(\.kind) == [.dwell])
        #expect(try EventStore(path: path, readOnly: true).eventLog.events().map(\.event.kind) == [.enter, .dwell])
    }

    @Test(arguments: [1, 7, 64])
    func aCrashAtAnyPointThenResumeEqualsOneUninterruptedRun(batchSize: Int) throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let expected = try Self.replay(Self.walk, path: dir.path("whole.db"), batchSize: batchSize).events.map(\.event)
        #expect(expected.count >= 8)
        for cut in stride(from: 5, to: Self.walk.count, by: 37) {
            let path = dir.path("cut-\(batchSize)-\(cut).db")
            _ = try Self.replay(Array(Self.walk[..<cut]), path: path, batchSize: batchSize, flush: false)
            _ = try Self.replay(Self.walk, path: path, batchSize: batchSize)
            let stored = try EventStore(path: path, readOnly: true).eventLog.events().map(\.event)
            #expect(stored == expected, "cut at \(cut)")
        }
    }

    @Test func aBatchOpenForItsTimeCommitsAndACrashThenResumeStillEqualsOneRun() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        // With no time allowed, a batch commits at its 64th fix (the clock is read every 64th);
        // without a time limit only the count and the events commit.
        let counted = try Self.replay(Self.walk, path: dir.path("count.db"), batchSize: 1_000_000)
        let timed = try Self.replay(Self.walk, path: dir.path("time.db"), batchSize: 1_000_000, batchTime: .zero)
        #expect(timed.events.map(\.event) == counted.events.map(\.event))
        #expect(timed.commits >= counted.commits + Self.walk.count / 64 - counted.events.count)
        #expect(try EventStore(path: dir.path("time.db"), readOnly: true).fixLog.count() == Self.walk.count)
        for cut in stride(from: 70, to: Self.walk.count, by: 101) {
            let path = dir.path("cut-\(cut).db")
            _ = try Self.replay(Array(Self.walk[..<cut]), path: path, batchSize: 1_000_000, batchTime: .zero, flush: false)
            _ = try Self.replay(Self.walk, path: path, batchSize: 1_000_000, batchTime: .zero)
            #expect(try EventStore(path: path, readOnly: true).eventLog.events().map(\.event) == counted.events.map(\.event), "cut at \(cut)")
        }
    }

    @Test func resumingSkipsFixesAtOrBeforeTheLastCommittedOne() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("resume.db")
        try Self.replay(Array(Self.walk[..<100]), path: path, batchSize: 16)
        let resumed = try Self.replay(Self.walk, path: path, batchSize: 16)
        #expect(resumed.processed == Self.walk.count - 100)
    }

    @Test func aDatabaseOfAnotherProfileIsRefused() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("other.db")
        try Self.replay(Array(Self.walk[..<10]), path: path, batchSize: 4)
        var other = Self.profile()
        other.name = "someone-else"
        let store = try EventStore(path: path)
        #expect(throws: JournalError.self) { _ = try Journal(profile: other, store: store) }
    }
}
