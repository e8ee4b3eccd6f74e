import Foundation
import GeomonCore
@testable import GeomonDaemon
import GeomonSources
import GeomonStore
import GeomonTestSupport
import Testing

/// `geomon run` on a manual clock: whatever stops a fence being watched while the device is
/// inside reaches the hooks as an exit saying why — a reload that renames or drops the fence,
/// a restart on an edited profile — and only once, whatever restarts follow.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ClosingRunTests {
    typealias L = LiveDaemonClockTests

    /// Walks into "home" (a 100 m circle at 0°, 0°) over a minute and stays at its centre.
    static func walkInAndStay() -> [Fix] {
        (0...240).map { s in
            Fix(time: UTCTime(millisecondsSince1970: 1_800_000_000_000 + Int64(s) * 1000),
                coordinate: Coordinate(latitude: 0, longitude: max(0, 300 - Double(s) * 5) / 111_195.08), horizontalAccuracyMeters: 5)
        }
    }

    static func profile(dir: TemporaryDirectory, fences: String) throws -> String {
        _ = try dir.write("log.sh", "#!/bin/sh\n{ cat; echo; } >> \"\(dir.path("events"))\"\n", mode: 0o755)
        return """
            version: 1
            name: closing
            mode: regions
            sources:
              gnss: {plugin: gpsd}
            policy: {max_speed: 45m/s, receiver: {ttff_hot: 2s}}
            hooks:
              enter: [{exec: ["./log.sh"], timeout: 5s}]
              exit: [{exec: ["./log.sh"], timeout: 5s}]
            fences:
            \(fences)
            """
    }

    static let home = "  - {id: home, name: Home, circle: {lat: 0, lon: 0, radius: 100m}}"
    static let far = "  - {id: far, circle: {lat: 1, lon: 1, radius: 100m}}"

    /// The events the hook received: (event, fence, fence_name, rule).
    static func delivered(_ dir: TemporaryDirectory) throws -> [[String]] {
        guard let text = try? String(contentsOfFile: dir.path("events"), encoding: .utf8) else { return [] }
        return try text.split(separator: "\n").map { line in
            let o = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            return [o["event"] as? String ?? "", o["fence"] as? String ?? "", o["fence_name"] as? String ?? "", o["rule"] as? String ?? ""]
        }
    }

    static func daemon(_ dir: TemporaryDirectory, _ yaml: String, _ lines: L.Lines, _ clock: ManualClock, _ feed: ModelFeed) throws -> LiveDaemon {
        try L.daemon(profileYAML: yaml, in: dir, lines: lines, clock: clock, gnss: feed)
    }

    @Test func aReloadThatRenamesOrDropsTheFenceTheDeviceIsInReportsItsExit() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let lines = L.Lines()
        let track = Self.walkInAndStay()
        let clock = ManualClock(wall: track[0].time)
        let feed = ModelFeed(track: track, settings: ReceiverSettings())
        let daemon = try Self.daemon(dir, try Self.profile(dir: dir, fences: Self.home), lines, clock, feed)
        let startMicros = clock.monotonicMicroseconds
        feed.now = { track[0].time + .microseconds(clock.monotonicMicroseconds - startMicros) }
        try daemon.begin()
        try L.drive(daemon, feed, clock, seconds: 70)
        daemon.waitForHooks(timeout: .seconds(10))
        #expect(try Self.delivered(dir).map { $0[0] + " " + $0[2] } == ["enter Home"])
        // Renamed: the stay in "Home" is closed, and "Zuhause" is entered by the next fixes.
        _ = try dir.write("p.yaml", try Self.profile(dir: dir, fences: Self.home.replacingOccurrences(of: "name: Home", with: "name: Zuhause")))
        daemon.requestReload()
        try L.drive(daemon, feed, clock, seconds: 30)
        daemon.waitForHooks(timeout: .seconds(10))
        var events = try Self.delivered(dir)
        #expect(events.map { $0[0] + " " + $0[2] } == ["enter Home", "exit Home", "enter Zuhause"])
        #expect(events[1][3].hasPrefix("exit: the fence was replaced (renamed, moved or resized) while inside"))
        // Dropped: its exit, with the name consumers entered.
        _ = try dir.write("p.yaml", try Self.profile(dir: dir, fences: Self.far))
        daemon.requestReload()
        try L.drive(daemon, feed, clock, seconds: 30)
        daemon.waitForHooks(timeout: .seconds(10))
        events = try Self.delivered(dir)
        #expect(events.map { $0[0] + " " + $0[2] } == ["enter Home", "exit Home", "enter Zuhause", "exit Zuhause"])
        #expect(events[3][3].hasPrefix("exit: the fence was removed while inside"))
        #expect(daemon.machine.engine.insideFenceIDs.isEmpty)
        _ = daemon.finish(code: 0)
    }

    @Test func aRestartOnAnEditedProfileClosesTheStayOnce() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let track = Self.walkInAndStay()
        let clock = ManualClock(wall: track[0].time)
        let feed = ModelFeed(track: track, settings: ReceiverSettings())
        // Each run in a function of its own: its instance lock goes with it.
        // The first run ends as kill -9 ends it: no shutdown, no last commit.
        func run(_ fences: String, seconds: Double, first: Bool = false) throws {
            let daemon = try Self.daemon(dir, try Self.profile(dir: dir, fences: fences), L.Lines(), clock, feed)
            if first {
                let startMicros = clock.monotonicMicroseconds
                feed.now = { track[0].time + .microseconds(clock.monotonicMicroseconds - startMicros) }
            }
            try daemon.begin()
            try L.drive(daemon, feed, clock, seconds: seconds)
            daemon.waitForHooks(timeout: .seconds(10))
            if !first { _ = daemon.finish(code: 0) }
        }
        try run(Self.home, seconds: 70, first: true)
        // The fence is gone from the file when geomon starts again, twice.
        try run(Self.far, seconds: 5)
        try run(Self.far, seconds: 5)
        let events = try Self.delivered(dir)
        #expect(events.map { $0[0] + " " + $0[1] } == ["enter home", "exit home"])
        let store = try EventStore(path: dir.path("d.db"), readOnly: true)
        #expect(try store.fenceStates().isEmpty)
        #expect(try store.eventLog.events(limit: 10).map(\.event.kind) == [.enter, .exit])
    }
}
