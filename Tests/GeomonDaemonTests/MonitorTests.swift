import Foundation
import GeomonCore
import GeomonDaemon
import GeomonStore
import GeomonTestSupport
import Testing

/// The loop against a real store file: commit semantics, restart, resume.
struct MonitorTests {
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

    static func replay(_ fixes: [Fix], path: String, batchSize: Int, flush: Bool = true) throws -> [StoredEvent] {
        let store = try EventStore(path: path)
        let monitor = try Monitor(profile: profile(), store: store, batchSize: batchSize)
        if flush {
            var events: [StoredEvent] = []
            _ = try Replay(monitor: monitor).run(fixes) { events += $0 }
            return events
        }
        // Without flush: like a crash after the last input, the open batch is lost.
        var events: [StoredEvent] = []
        for f in fixes {
            while let d = monitor.nextDeadline, d < f.time { events += try monitor.deadlineReached(at: d) }
            events += try monitor.fixReceived(f, now: f.time).events
        }
        return events
    }

    @Test func eventsAndDeliveryRowsAreCommittedTogether() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let events = try Self.replay(Self.walk, path: dir.path("m.db"), batchSize: 64)
        #expect(events.map(\.event.kind).filter { $0 == .enter }.count == 4)
        #expect(events.contains { $0.event.kind == .dwell && $0.event.rule.contains("deadline") })
        let store = try EventStore(path: dir.path("m.db"), readOnly: true)
        #expect(try store.events().map(\.event) == events.map(\.event))
        let deliveries = try store.deliveries()
        let enters = events.filter { $0.event.kind == .enter }.count
        let dwells = events.filter { $0.event.kind == .dwell }.count
        #expect(deliveries.count == enters * 2 + dwells)
        // One key per distinct command (HookCatalog's scheme): /bin/true under enter and dwell is one hook.
        #expect(Set(deliveries.map(\.hookKey)) == [#"["/bin/true"]"#, #"["/bin/echo","entered"]"#])
        #expect(deliveries.filter { $0.hookKey == #"["/bin/echo","entered"]"# }.allSatisfy { $0.argv == ["/bin/echo", "entered"] && $0.fenceID == "home" })
        #expect(try store.fixCount() == Self.walk.count)
    }

    @Test func aRestartMidDwellContinuesTheDwellFromTheStore() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("dwell.db")
        let fixes = [Self.fix(1, 300), Self.fix(2, 300), Self.fix(10, 0), Self.fix(11, 0), Self.fix(30, 0)]
        _ = try Self.replay(fixes, path: path, batchSize: 1000)
        let store = try EventStore(path: path)
        let monitor = try Monitor(profile: Self.profile(), store: store)
        #expect(monitor.nextDeadline == UTCTime(millisecondsSince1970: 70_000))
        let events = try monitor.deadlineReached(at: UTCTime(millisecondsSince1970: 70_000))
        #expect(events.map(\.event.kind) == [.dwell])
        #expect(try EventStore(path: path, readOnly: true).events().map(\.event.kind) == [.enter, .dwell])
    }

    @Test(arguments: [1, 7, 64])
    func aCrashAtAnyPointThenResumeEqualsOneUninterruptedRun(batchSize: Int) throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let expected = try Self.replay(Self.walk, path: dir.path("whole.db"), batchSize: batchSize).map(\.event)
        #expect(expected.count >= 8)
        for cut in stride(from: 5, to: Self.walk.count, by: 37) {
            let path = dir.path("cut-\(batchSize)-\(cut).db")
            _ = try Self.replay(Array(Self.walk[..<cut]), path: path, batchSize: batchSize, flush: false)
            _ = try Self.replay(Self.walk, path: path, batchSize: batchSize)
            let stored = try EventStore(path: path, readOnly: true).events().map(\.event)
            #expect(stored == expected, "cut at \(cut)")
        }
    }

    @Test func resumingSkipsFixesAtOrBeforeTheLastCommittedOne() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("resume.db")
        _ = try Self.replay(Array(Self.walk[..<100]), path: path, batchSize: 16)
        let store = try EventStore(path: path)
        let monitor = try Monitor(profile: Self.profile(), store: store)
        let summary = try Replay(monitor: monitor).run(Self.walk) { _ in }
        #expect(summary.skipped == 100)
        #expect(summary.processed == Self.walk.count - 100)
    }

    @Test func aDatabaseOfAnotherProfileIsRefused() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path("other.db")
        _ = try Self.replay(Array(Self.walk[..<10]), path: path, batchSize: 4)
        var other = Self.profile()
        other.name = "someone-else"
        let store = try EventStore(path: path)
        #expect(throws: MonitorError.self) { _ = try Monitor(profile: other, store: store) }
    }

    /// A receiver model that delivers every third fix and wants to wake every 100 s.
    final class EveryThird: ReplayFixSource {
        let fixes: [Fix]
        var position = 0
        var withheld = 0
        var wakes: [Int64] = []
        var wake: UTCTime? = UTCTime(millisecondsSince1970: 100_000)
        var observed = 0
        init(_ fixes: [Fix]) { self.fixes = fixes }
        func peekFix() -> Fix? {
            while position < fixes.count, position % 3 != 0 { position += 1; withheld += 1 }
            return position < fixes.count ? fixes[position] : nil
        }
        func advance() { position += 1 }
        var nextWake: UTCTime? { wake }
        func wakeReached(at time: UTCTime) {
            wakes.append(time.millisecondsSince1970 / 1000)
            wake = time + .seconds(100)
        }
        func observe(_ events: [StoredEvent]) { observed += events.count }
        var withheldCount: Int { withheld }
    }

    @Test func aReceiverModelDecidesWhichFixesArriveAndGetsItsWakeUps() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let monitor = try Monitor(profile: Self.profile(), store: EventStore(path: dir.path("rx.db")))
        let source = EveryThird(Self.walk)
        var events: [StoredEvent] = []
        let summary = try Replay(monitor: monitor).run(source: source, total: Self.walk.count) { events += $0 }
        #expect(summary.processed == (Self.walk.count + 2) / 3)
        #expect(summary.withheld == Self.walk.count - summary.processed)
        let last = Self.walk[Self.walk.count - 1 - (Self.walk.count - 1) % 3].time.millisecondsSince1970 / 1000
        #expect(source.wakes == Array(stride(from: 100, to: last, by: 100)))
        #expect(source.observed == events.count && !events.isEmpty)
    }
}
